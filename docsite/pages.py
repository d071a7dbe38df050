"""A page as the site shows it: its includes (`<!-- include: README.md -->`) and generated
sections (`<!-- generated: settings -->`) filled in, its links rewritten for the site."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable

from docsite.links import DOCS, ROOT, rewrite_links
from docsite.reference import GENERATED

_INCLUDE = re.compile(r"^<!-- include: (\S+) -->$", re.MULTILINE)
_GENERATED = re.compile(r"^<!-- generated: (\S+) -->$", re.MULTILINE)


class UnknownSectionError(ValueError):
    """A page names a generated section no generator makes."""


def site_markdown(markdown: str, page_src: str) -> str:
    """`page_src`: the page's path in the docs directory."""
    page_dir = posixpath.dirname(page_src)
    own_dir = posixpath.join(DOCS, page_dir) if page_dir else DOCS
    page = rewrite_links(_generated(markdown), own_dir, page_dir)

    def included(match: re.Match[str]) -> str:
        path = match.group(1)
        text = (ROOT / path).read_text()
        return rewrite_links(text, posixpath.dirname(path), page_dir)

    return _INCLUDE.sub(included, page)


def expanded_sources(markdown: str, page_src: str) -> list[tuple[str, str]]:
    """The page's text and each file it includes, with the repository directory each lives in."""
    page_dir = posixpath.dirname(page_src)
    sources = [(_generated(markdown), posixpath.join(DOCS, page_dir) if page_dir else DOCS)]
    for match in _INCLUDE.finditer(markdown):
        sources.append(((ROOT / match.group(1)).read_text(), posixpath.dirname(match.group(1))))
    return sources


def _generated(markdown: str) -> str:
    def generated(match: re.Match[str]) -> str:
        make: Callable[[], str] | None = GENERATED.get(match.group(1))
        if make is None:
            raise UnknownSectionError(
                f"no generated section {match.group(1)!r}: docsite/reference.py makes {sorted(GENERATED)}"
            )
        return make()

    return _GENERATED.sub(generated, markdown)
