"""The HTTP API, its clients and the CLI (icepurge/api)."""
