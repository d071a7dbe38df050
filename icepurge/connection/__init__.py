"""The Temporal connection every process shares: settings, payload codec, client."""
