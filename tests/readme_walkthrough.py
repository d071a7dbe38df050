"""The walkthroughs of the README and the docs pages as steps, in the order the docs site shows
its pages (mkdocs.yml's nav; a page's `<!-- include: FILE -->` reads FILE there): each ```console
block holds `$ command` lines, each followed by the output it prints. In the output, `…` stands
for what changes from run to run (ids, times, paths) and a line of `…` alone for any number of
lines."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ELLIPSIS = "…"
PROMPT = "$ "
_BLOCK = re.compile(r"^```console\n(.*?)^```", re.MULTILINE | re.DOTALL)
_ASSIGNMENT = re.compile(r"^(?P<name>[A-Z_]+)=\$\((?P<command>.*)\)$")
# `command <<'EOF'`: a here-document, as a shell session shows one.
_HEREDOC = re.compile(r"<<-?'?(?P<word>[A-Z]+)'?$")
_INCLUDE = re.compile(r"^<!-- include: (\S+) -->$", re.MULTILINE)


def site_pages(root: Path) -> list[Path]:
    """The docs site's pages in its nav's order, each include replaced by the file it names."""

    def walk(entries: list[Any]) -> list[str]:
        found: list[str] = []
        for entry in entries:
            for value in entry.values() if isinstance(entry, dict) else [entry]:
                found.extend(walk(value) if isinstance(value, list) else [value])
        return found

    nav = yaml.safe_load((root / "mkdocs.yml").read_text())["nav"]
    pages: list[Path] = []
    for name in walk(nav):
        page = root / "docs" / name
        includes = _INCLUDE.findall(page.read_text())
        if includes:
            pages.extend(root / include for include in includes)
        else:
            pages.append(page)
    return pages


@dataclass
class Step:
    command: str
    expected: list[str] = field(default_factory=list)

    def assignment(self) -> tuple[str, str] | None:
        """`NAME=$(command)`: the command's stdout goes into NAME, its stderr is the output."""
        found = _ASSIGNMENT.match(self.command)
        return (found["name"], found["command"]) if found else None


def walkthrough_steps(markdown: str) -> list[Step]:
    steps: list[Step] = []
    for block in _BLOCK.findall(markdown):
        lines = iter(block.splitlines())
        for line in lines:
            if line.startswith(PROMPT):
                command = line[len(PROMPT) :]
                while command.endswith("\\"):
                    command = command[:-1] + next(lines).strip()
                if heredoc := _HEREDOC.search(command):
                    # The document's lines are the command's, up to its closing word.
                    body = list(itertools.takewhile(lambda line: line != heredoc["word"], lines))
                    command = "\n".join([command, *body, heredoc["word"]])
                steps.append(Step(command.strip()))
            elif steps:
                steps[-1].expected.append(line)
    return steps


def _normal(line: str) -> str:
    """Tables pad their cells and bars stretch with the terminal: whitespace runs count as one."""
    return " ".join(line.split())


def line_matches(expected: str, actual: str) -> bool:
    # `…` also takes the spaces around it: "SUCCEEDED … events" matches "SUCCEEDED events".
    pattern = ".*?".join(re.escape(part.strip()) for part in _normal(expected).split(ELLIPSIS))
    return re.fullmatch(pattern, _normal(actual)) is not None


def output_matches(expected: list[str], actual: list[str]) -> bool:
    """Every expected line in order, each against one actual line; `…` alone takes any number."""
    wanted = [line for line in expected if line.strip()]
    got = [line for line in actual if line.strip()]
    reachable = {0}
    for pattern in wanted:
        if pattern.strip() == ELLIPSIS:
            reachable = set(range(min(reachable), len(got) + 1)) if reachable else set()
        else:
            reachable = {at + 1 for at in reachable if at < len(got) and line_matches(pattern, got[at])}
    return len(got) in reachable
