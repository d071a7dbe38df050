"""Which tables of a namespace tree a namespace purge purges: name globs, table properties, the
age of the last commit, an explicit list. A table is selected when it passes every kind of
condition given (any one glob, every property condition); the others stay in the catalog and are
listed with the first condition they failed. No I/O here: the enumeration reads what the
conditions need and asks these rules."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from fnmatch import fnmatchcase
from typing import Any

from pydantic import ConfigDict, Field, field_validator

from icepurge.contract.request import printable
from icepurge.contract.strict_model import FrozenModel

MAX_PATTERNS = 100
MAX_LISTED_TABLES = 10_000
# A duration is a whole number and one unit: 90s, 30m, 12h, 30d, 8w.
_DURATION = re.compile(r"^(\d{1,9})([smhdw])$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3_600, "d": 86_400, "w": 604_800}
ABSENT_MARK = "!"
UNSELECTED = "unselected"


def duration_seconds(text: str) -> int:
    found = _DURATION.match(text)
    if found is None:
        raise ValueError(
            f"older_than {text!r} is not a duration: write a whole number and one unit of s, m, h, d "
            "or w, such as 30d"
        )
    return int(found.group(1)) * _UNIT_SECONDS[found.group(2)]


def _check_glob(pattern: str) -> str:
    printable(pattern)
    if not pattern:
        raise ValueError("a name pattern must not be empty")
    # fnmatch reads an unclosed "[" as a literal one, which is never what a pattern meant.
    depth = 0
    for character in pattern:
        if character == "[":
            depth += 1
        elif character == "]" and depth:
            depth -= 1
    if depth:
        raise ValueError(f"name pattern {pattern!r} opens a [ that it never closes")
    return pattern


class PropertyCondition(FrozenModel):
    """`key=value`: the property has this value; `key`: it is set; `!key`: it is not."""

    key: str
    value: str | None = None
    absent: bool = False

    @classmethod
    def parse(cls, text: str) -> PropertyCondition:
        printable(text)
        absent = text.startswith(ABSENT_MARK)
        key, equals, value = text.removeprefix(ABSENT_MARK).partition("=")
        if not key.strip():
            raise ValueError(f"property condition {text!r} names no key: write key=value, key or !key")
        if absent and equals:
            raise ValueError(f"property condition {text!r}: !key takes no value")
        return cls(key=key.strip(), value=value if equals else None, absent=absent)

    def unmet_by(self, properties: dict[str, str]) -> str | None:
        if self.absent:
            return f"property {self.key} is set" if self.key in properties else None
        if self.key not in properties:
            return f"property {self.key} is not set"
        if self.value is not None and properties[self.key] != self.value:
            return f"property {self.key} is not {self.value!r}"
        return None


class TableSelection(FrozenModel):
    model_config = ConfigDict(str_strip_whitespace=True)

    names: list[str] = Field(
        default_factory=list,
        max_length=MAX_PATTERNS,
        description="Globs over the table's name below the catalog, levels and table joined by dots "
        "(`sales.tmp_*`, `*.events_2023*`; `*` crosses dots, `?` is one character, `[ab]` a set). A "
        "table matching any is selected; none: every name.",
    )
    exclude_names: list[str] = Field(
        default_factory=list,
        max_length=MAX_PATTERNS,
        description="Globs as in `names`: a table matching any is left alone.",
    )
    properties: list[str] = Field(
        default_factory=list,
        max_length=MAX_PATTERNS,
        description="Conditions on table properties, all of which must hold: `key=value`, `key` (set), "
        "`!key` (not set). Each table's metadata is read to check them.",
    )
    older_than: str | None = Field(
        None,
        description="The table's last commit (its metadata's last-updated time) is older than this "
        "when the enumeration runs: a whole number and one unit of s, m, h, d or w (`30d`). Each "
        "table's metadata is read to check it.",
    )
    tables: list[str] = Field(
        default_factory=list,
        max_length=MAX_LISTED_TABLES,
        description="Only these tables: levels and table joined by dots, below the catalog, inside "
        "the purged namespace. A listed table the enumeration doesn't find is listed as skipped.",
    )

    @field_validator("names", "exclude_names")
    @classmethod
    def _globs(cls, patterns: list[str]) -> list[str]:
        return [_check_glob(pattern) for pattern in patterns]

    @field_validator("properties")
    @classmethod
    def _conditions(cls, conditions: list[str]) -> list[str]:
        for condition in conditions:
            PropertyCondition.parse(condition)
        return conditions

    @field_validator("older_than")
    @classmethod
    def _duration(cls, text: str | None) -> str | None:
        if text is not None:
            duration_seconds(text)
        return text

    @field_validator("tables")
    @classmethod
    def _listed(cls, names: list[str]) -> list[str]:
        for name in names:
            printable(name)
            if "." not in name or any(not part for part in name.split(".")):
                raise ValueError(f"listed table {name!r} is not namespace.table (levels joined by dots)")
        return names

    @property
    def age(self) -> timedelta | None:
        return timedelta(seconds=duration_seconds(self.older_than)) if self.older_than else None

    def identity(self) -> dict[str, Any]:
        """Order and repeats inside a list change nothing that is selected, so neither the id."""
        return {
            "names": sorted(set(self.names)),
            "exclude_names": sorted(set(self.exclude_names)),
            "properties": sorted(set(self.properties)),
            "older_than": self.age.total_seconds() if self.age else None,
            "tables": sorted(set(self.tables)),
        }

    def rules(self, cutoff_ms: int | None) -> SelectionRules:
        """The conditions parsed once, for a walk that asks them of every table. `cutoff_ms`: the
        enumeration's start less `older_than`."""
        return SelectionRules(
            listed=frozenset(self.tables),
            names=tuple(self.names),
            exclude_names=tuple(self.exclude_names),
            conditions=tuple(PropertyCondition.parse(text) for text in self.properties),
            older_than=self.older_than,
            cutoff_ms=cutoff_ms,
        )


@dataclass(frozen=True)
class SelectionRules:
    listed: frozenset[str]
    names: tuple[str, ...]
    exclude_names: tuple[str, ...]
    conditions: tuple[PropertyCondition, ...]
    older_than: str | None
    cutoff_ms: int | None

    @property
    def reads_metadata(self) -> bool:
        return bool(self.conditions) or self.cutoff_ms is not None

    def unmet_by_name(self, dotted: str) -> str | None:
        """Why a table (levels and name joined by dots) is not selected by its name, or None."""
        if self.listed and dotted not in self.listed:
            return f"{UNSELECTED}: not in the listed tables"
        if self.names and not any(fnmatchcase(dotted, pattern) for pattern in self.names):
            return f"{UNSELECTED}: its name matches none of {', '.join(self.names)}"
        excluded = next((pattern for pattern in self.exclude_names if fnmatchcase(dotted, pattern)), None)
        if excluded is not None:
            return f"{UNSELECTED}: its name matches the excluded {excluded}"
        return None

    def unmet_by_metadata(self, properties: dict[str, str], last_updated_ms: int) -> str | None:
        """Why a table is not selected by what its metadata says, or None."""
        for condition in self.conditions:
            unmet = condition.unmet_by(properties)
            if unmet is not None:
                return f"{UNSELECTED}: {unmet}"
        if self.cutoff_ms is not None and last_updated_ms >= self.cutoff_ms:
            return f"{UNSELECTED}: its last commit is within {self.older_than}"
        return None
