"""The stores (icepurge/stores)."""
