"""The location sweep (icepurge/activities/sweep)."""
