"""The Iceberg REST front door (icepurge/api/server/front_door)."""
