"""The worker and its fleet (icepurge/worker), Spark clusters under it."""
