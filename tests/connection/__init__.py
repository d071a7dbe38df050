"""The Temporal connection: TLS, codec, traces (icepurge/connection)."""
