"""The activities (icepurge/activities), by room."""
