"""What icepurge asks of a catalog (icepurge/catalogs)."""
