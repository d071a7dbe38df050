"""How catalogs and operators reach icepurge: the Python client and the `icepurge` CLI."""
