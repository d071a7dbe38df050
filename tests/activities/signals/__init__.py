"""Events and their sinks (icepurge/activities/signals)."""
