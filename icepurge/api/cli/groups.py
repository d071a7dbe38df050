"""The command groups every CLI module adds its commands to."""

from __future__ import annotations

import typer

app = typer.Typer(help="icepurge: durable purges of dropped Iceberg tables.", no_args_is_help=True)
purge = typer.Typer(help="Start, follow and control purges.", no_args_is_help=True)
app.add_typer(purge, name="purge")
admin = typer.Typer(help="Prepare a Temporal cluster for icepurge.", no_args_is_help=True)
app.add_typer(admin, name="admin")
