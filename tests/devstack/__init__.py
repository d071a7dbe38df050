"""The embedded stack (icepurge/devstack)."""
