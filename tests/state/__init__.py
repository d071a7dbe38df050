"""The state location (icepurge/state)."""
