"""The icepurge command line (icepurge/api/cli)."""
