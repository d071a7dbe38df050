"""The HTTP API's routes, one module per resource, each with its OpenAPI tag: table purges,
catalogs (purge by name), namespace purges, the controls of a running purge, reports, the doctor,
the codec server. The Iceberg REST front door is its own package (api/server/front_door)."""
