"""The HTTP API (icepurge/api/server)."""
