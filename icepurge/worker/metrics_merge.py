"""The Prometheus text of several worker processes as one endpoint's: every sample gets a
`worker_process` label, and each metric family (its HELP and TYPE, then every process's samples)
stays one group, as the exposition format requires. Names and values pass unchanged."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

LABEL = "worker_process"
_SAMPLE = re.compile(r"^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(?P<labels>\{.*\})?(?P<rest>\s.*)$")


@dataclass
class _Family:
    header: list[str] = field(default_factory=list)
    samples: list[str] = field(default_factory=list)


def merge_metrics(texts: dict[str, str]) -> str:
    """`texts`: each process's /metrics body, by its label value."""
    families: dict[str, _Family] = {}
    for process, text in texts.items():
        current = ""
        for line in text.splitlines():
            if line.startswith("# HELP ") or line.startswith("# TYPE "):
                current = line.split()[2]
                family = families.setdefault(current, _Family())
                if line not in family.header:
                    family.header.append(line)
            elif line and not line.startswith("#"):
                families.setdefault(current, _Family()).samples.append(_labelled(line, process))
    lines = []
    for family in families.values():
        lines += family.header + family.samples
    return "\n".join(lines) + "\n"


def _labelled(line: str, process: str) -> str:
    found = _SAMPLE.match(line)
    if found is None:
        return line
    labels = found["labels"]
    added = f'{LABEL}="{process}"'
    inner = f"{added},{labels[1:-1]}" if labels and labels != "{}" else added
    return f"{found['name']}{{{inner}}}{found['rest']}"
