"""The embedded stack for dev, demo, tests and CI: Temporal dev server, SeaweedFS S3, SQLite catalog."""
