"""Every side effect of a purge: metadata reads, object-store deletes, the plan and report objects."""
