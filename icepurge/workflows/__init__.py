"""Deterministic orchestration of a purge: the contract and the PurgeTable workflow."""
