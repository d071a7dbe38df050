// Drops a table with purge through an Iceberg REST catalog, as an iceberg-js user would:
//   node drop.mjs <base url> <token> <warehouse> <namespace> <table>
// Prints one JSON line: {"ok": true} or {"ok": false, "status": ..., "error": ...}.
import { IcebergRestCatalog, IcebergError } from 'iceberg-js'

const [baseUrl, token, warehouse, namespace, name] = process.argv.slice(2)
const catalog = new IcebergRestCatalog({ baseUrl, warehouse, auth: { type: 'bearer', token } })
try {
  await catalog.dropTable({ namespace: [namespace], name }, { purge: true })
  console.log(JSON.stringify({ ok: true }))
} catch (error) {
  const status = error instanceof IcebergError ? error.status : null
  console.log(JSON.stringify({ ok: false, status, error: String(error.message || error) }))
}
