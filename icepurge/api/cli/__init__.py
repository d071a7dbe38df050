"""The `icepurge` command line: through the HTTP API, or Temporal directly for local use."""
