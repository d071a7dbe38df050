"""Deletes and their engines (icepurge/activities/delete)."""
