"""icepurge: durable, resumable purges of dropped Apache Iceberg tables, orchestrated by Temporal."""
