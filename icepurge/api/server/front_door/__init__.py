"""The Iceberg REST front door: icepurge serves the REST catalog protocol in front of an upstream
REST catalog; every call passes through, except a table drop with purgeRequested=true (or, where
the catalog's policy says so, one that doesn't say), which becomes a durable icepurge purge."""
