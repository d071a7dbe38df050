"""Planning (icepurge/activities/plan)."""
