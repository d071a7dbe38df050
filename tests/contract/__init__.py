"""The contract (icepurge/contract)."""
