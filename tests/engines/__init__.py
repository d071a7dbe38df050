"""The engines tier: real engines and catalogs around icepurge."""
