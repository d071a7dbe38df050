"""The namespace purge: PurgeNamespace (purge_namespace.py), its table purges and batches, its
ranges (PurgeTableRange), its progress, outcomes, events and controls."""
