"""The HTTP API (FastAPI) and the codec server: one process, stateless, in front of Temporal."""
