"""Small real tables in `make run`'s demo catalog, for the walkthroughs of the README and the docs:

    .venv/bin/python -m icepurge.devstack.demo_tables create sales orders   # 3 appends of 10 rows
    .venv/bin/python -m icepurge.devstack.demo_tables rows sales orders     # reads it through the catalog

The namespace is dot-separated. Uses the same state directory and ports as `make run`."""

from __future__ import annotations

import sys

from pyiceberg.exceptions import NoSuchTableError

from icepurge.connection.exit_now import run_then_exit
from icepurge.devstack.run import DEMO_CATALOG, run_ports, run_state_dir
from icepurge.devstack.small_tables import APPENDS, ROWS, create_demo_table
from icepurge.devstack.stack import EmbeddedStack


def main(arguments: list[str]) -> int:
    if len(arguments) != 3 or arguments[0] not in ("create", "rows"):
        print(__doc__, file=sys.stderr)
        return 2
    action, namespace, name = arguments
    levels = tuple(namespace.split("."))
    catalog = EmbeddedStack(state_dir=run_state_dir(), ports=run_ports()).catalog(DEMO_CATALOG)
    if action == "create":
        table = create_demo_table(catalog, levels, name)
        print(f"{DEMO_CATALOG}.{namespace}.{name}: {APPENDS * ROWS} rows at {table.location()}")
        return 0
    try:
        table = catalog.load_table((*levels, name))
    except NoSuchTableError:
        print(f"{DEMO_CATALOG}.{namespace}.{name} is not in the catalog")
        return 1
    print(f"{DEMO_CATALOG}.{namespace}.{name}: {table.scan().to_arrow().num_rows} rows")
    return 0


if __name__ == "__main__":
    run_then_exit(lambda: sys.exit(main(sys.argv[1:])))
