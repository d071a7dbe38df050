"""Apache Iceberg's own REST catalog server (RESTCatalogServer: the reference implementation the
REST spec's fixture runs), JDBC-backed on a SQLite file, its tables on the stack's S3 through
Iceberg's S3FileIO. It keeps a table's files on a plain drop and deletes them (Iceberg's
CatalogUtil.dropTableData) on a drop with purge. Its classpath comes from `make engines`."""

from __future__ import annotations

from pathlib import Path

from icepurge.devstack.engine_server import EngineServer
from icepurge.devstack.engines_cache import engine_dir

JAVA = "java"


def _environment_property(name: str) -> str:
    """RESTCatalogServer reads its catalog's properties from CATALOG_* variables: `__` is `-`
    and `_` is `.` (CATALOG_CATALOG__IMPL is catalog-impl)."""
    return "CATALOG_" + name.replace("-", "__").replace(".", "_").upper()


class IcebergRestServer(EngineServer):
    def __init__(self, state_dir: Path, port: int, warehouse: str, s3_properties: dict[str, str]) -> None:
        super().__init__(state_dir, port, s3_properties)
        self.warehouse = warehouse

    def start(self) -> None:
        classpath = engine_dir("iceberg-rest-server") / "*"
        properties = {
            "catalog-impl": "org.apache.iceberg.jdbc.JdbcCatalog",
            "uri": f"jdbc:sqlite:{self.state_dir / 'catalog.sqlite'}",
            "jdbc.schema-version": "V1",
            "warehouse": self.warehouse,
            "io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
            "s3.endpoint": self.s3_properties["s3.endpoint"],
            "s3.path-style-access": "true",
            "s3.access-key-id": self.s3_properties["s3.access-key-id"],
            "s3.secret-access-key": self.s3_properties["s3.secret-access-key"],
            "client.region": self.s3_properties["s3.region"],
            "rest.port": str(self.port),
        }
        env = {_environment_property(name): value for name, value in properties.items()}
        self._run(
            "iceberg-rest",
            [JAVA, "-Xmx512m", "-cp", str(classpath), "org.apache.iceberg.rest.RESTCatalogServer"],
            {**env, "AWS_REGION": self.s3_properties["s3.region"]},
        )
