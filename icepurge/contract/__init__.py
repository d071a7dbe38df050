"""The contract: what every process that talks to icepurge agrees on (pydantic models, names,
JSON Schemas). Deterministic and free of I/O, so workflows import it through the sandbox."""
