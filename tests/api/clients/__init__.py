"""The Python clients of a purge (icepurge/api/clients)."""
