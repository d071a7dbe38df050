"""Python clients: PurgeClient over Temporal, HttpPurgeClient over the HTTP API; one Protocol."""
