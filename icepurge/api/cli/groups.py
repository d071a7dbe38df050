"""The command groups every CLI module adds its commands to."""

from __future__ import annotations

import typer

# Plain help pages (click's formatter): rendering them with rich imports rich's markdown, syntax
# and traceback modules first, half of `icepurge --help`'s start-up.
PLAIN_HELP = None

app = typer.Typer(
    help="icepurge: durable purges of dropped Iceberg tables.",
    no_args_is_help=True,
    rich_markup_mode=PLAIN_HELP,
)
purge = typer.Typer(
    help="Start, follow and control purges.", no_args_is_help=True, rich_markup_mode=PLAIN_HELP
)
app.add_typer(purge, name="purge")
admin = typer.Typer(
    help="Prepare a Temporal cluster for icepurge.", no_args_is_help=True, rich_markup_mode=PLAIN_HELP
)
app.add_typer(admin, name="admin")
