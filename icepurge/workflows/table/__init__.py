"""The table purge: PurgeTable (purge_table.py), the steps around its deletes, the deletes, the
express lane, soft delete, the location sweep."""
