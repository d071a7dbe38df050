"""Catalog steps (icepurge/activities/catalog)."""
