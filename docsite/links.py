"""Links written for the repository (relative to the file they're in, as a forge renders them),
rewritten for the site: a docs page's link to another page stays a page link, a link to a file
the site shows as a page (the README, BENCHMARKS.md) goes to that page, and a link to any other
repository file (a schema, a benchmark's output) goes to its copy under `repo/` in the site."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = "docs"
# Repository files the site shows as pages of their own.
SHOWN_AS_PAGES = {"README.md": "index.md", "BENCHMARKS.md": "benchmarks.md"}
REPO_COPIES = "repo"
_LINK = re.compile(r"(\]\()([^)\s]+)(\))")
_FENCE = re.compile(r"^\s*(```|~~~)")


def site_target(repo_path: str) -> str | None:
    """Where a repository file is in the site (docs-relative), if it is."""
    if repo_path.startswith(f"{DOCS}/"):
        return repo_path.removeprefix(f"{DOCS}/")
    if repo_path in SHOWN_AS_PAGES:
        return SHOWN_AS_PAGES[repo_path]
    if (ROOT / repo_path).is_file():
        return f"{REPO_COPIES}/{repo_path}"
    return None


def rewrite_links(markdown: str, source_dir: str, page_dir: str) -> str:
    """`source_dir`: where the text lives in the repository; `page_dir`: the page's directory
    in the docs. Code blocks are left alone; a link to nothing is left as written, for MkDocs'
    strict build to refuse."""

    def rewritten(match: re.Match[str]) -> str:
        target = match.group(2)
        if "://" in target or target.startswith(("#", "/", "mailto:")):
            return match.group(0)
        path, hash_mark, fragment = target.partition("#")
        found = site_target(posixpath.normpath(posixpath.join(source_dir, path)))
        if found is None:
            return match.group(0)
        relative = posixpath.relpath(found, page_dir or ".")
        return f"{match.group(1)}{relative}{hash_mark}{fragment}{match.group(3)}"

    return _outside_code(markdown, lambda text: _LINK.sub(rewritten, text))


def repo_files_linked(markdown: str, source_dir: str) -> set[str]:
    """The repository files (outside the docs and the pages) `markdown` links to."""
    linked: set[str] = set()

    def collect(text: str) -> str:
        for match in _LINK.finditer(text):
            target = match.group(2)
            if "://" in target or target.startswith(("#", "/", "mailto:")):
                continue
            found = site_target(posixpath.normpath(posixpath.join(source_dir, target.partition("#")[0])))
            if found is not None and found.startswith(f"{REPO_COPIES}/"):
                linked.add(found.removeprefix(f"{REPO_COPIES}/"))
        return text

    _outside_code(markdown, collect)
    return linked


def _outside_code(markdown: str, change: Callable[[str], str]) -> str:
    parts: list[str] = []
    prose: list[str] = []
    fenced = False
    for line in markdown.splitlines(keepends=True):
        if _FENCE.match(line):
            if not fenced:
                parts.append(change("".join(prose)))
                prose = []
            fenced = not fenced
            parts.append(line)
        elif fenced:
            parts.append(line)
        else:
            prose.append(line)
    parts.append(change("".join(prose)))
    return "".join(parts)
