"""A namespace's enumeration and table lists (icepurge/activities/namespace)."""
