"""The docs site builds, strict (a link to nothing, a missing page or anchor fails it), and its
reference pages are generated from the code: every setting with its meaning, every route, every
command."""

from __future__ import annotations

from pathlib import Path

import pytest
from mkdocs.commands.build import build
from mkdocs.config import load_config

from docsite.reference import cli, http, settings
from icepurge.api.cli.settings import CliSettings
from icepurge.api.server.settings import ApiSettings
from icepurge.worker.settings import WorkerSettings
from tests.paths import ROOT

README_MOST_LINES = 250


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("site")
    build(load_config(str(ROOT / "mkdocs.yml"), site_dir=str(directory)))
    return directory


def test_the_site_builds_strict_with_every_page_of_the_nav(site: Path) -> None:
    pages = {path.relative_to(site).as_posix() for path in site.rglob("*.html")}
    expected = {
        path.relative_to(ROOT / "docs").with_suffix(".html").as_posix()
        for path in (ROOT / "docs").rglob("*.md")
    }
    assert expected <= pages
    # The repository files pages link to are in the site.
    assert (site / "repo" / "schemas" / "purge-request.schema.json").is_file()
    assert (site / "repo" / "bench" / "results" / "make_run_start.txt").is_file()


def test_the_home_page_is_the_readme_with_links_into_the_site(site: Path) -> None:
    home = (site / "index.html").read_text()
    assert "The two commands" in home and 'href="getting-started.html"' in home
    assert 'href="docs/' not in home


def test_every_setting_says_what_it_means() -> None:
    undescribed = [
        f"{model.__name__}.{name}"
        for model in (WorkerSettings, ApiSettings, CliSettings)
        for name, field in model.model_fields.items()
        if not field.description
    ]
    assert not undescribed, f"the settings reference shows these with no meaning: {undescribed}"
    page = settings()
    for model in (WorkerSettings, ApiSettings, CliSettings):
        for name in model.model_fields:
            assert f"`ICEPURGE_{name.upper()}`" in page


def test_the_http_and_cli_references_cover_every_route_and_command() -> None:
    page = http()
    for route in ("`/v1/purges`", "`/v1/purges/{purge_id}/rerun`", "`/v1/namespace-purges/{purge_id}`"):
        assert route in page
    commands = cli()
    for command in ("`icepurge purge table`", "`icepurge purge watch`", "`icepurge admin setup`"):
        assert command in commands


def test_the_readme_is_a_landing_page() -> None:
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= README_MOST_LINES, f"the README has {len(lines)} lines: move detail into docs/"
