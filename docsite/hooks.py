"""MkDocs' hooks (mkdocs.yml): the repository files pages link to are copied into the site, and
every page is shown with its includes, generated sections and links filled in (docsite.pages)."""

from __future__ import annotations

from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from docsite.links import REPO_COPIES, ROOT, repo_files_linked
from docsite.pages import expanded_sources, site_markdown


def on_files(files: Files, config: MkDocsConfig, **_: Any) -> Files:
    linked: set[str] = set()
    for page in files.documentation_pages():
        for text, source_dir in expanded_sources(page.content_string, page.src_uri):
            linked |= repo_files_linked(text, source_dir)
    for path in sorted(linked):
        files.append(File.generated(config, f"{REPO_COPIES}/{path}", abs_src_path=str(ROOT / path)))
    return files


def on_page_markdown(markdown: str, page: Page, **_: Any) -> str:
    return site_markdown(markdown, page.file.src_uri)
