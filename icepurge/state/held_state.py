"""A purge's state folder held in memory for the span of one activity: a small table's plan,
chunk outcomes and checkpoints never reach the state location (about 30 requests a table), and
the plan travels to the next activity inside its result instead. What must outlive the activity
(the report) is still written through. A folder that grows past a bound is flushed to the store
and written through from then on, so a big plan keeps its checkpoints."""

from __future__ import annotations

import base64
import threading
from dataclasses import dataclass, field

# Objects a held folder still writes to (and reads from) the store: they outlive the activity.
DURABLE_NAMES = frozenset({"report.json"})
# Past this many bytes a held folder is flushed: ~1,000 planned files take a tenth of it.
HOLD_LIMIT_BYTES = 512 * 1024


@dataclass
class HeldFolder:
    """One folder's objects by name (relative to the folder)."""

    folder: str
    objects: dict[str, bytes] = field(default_factory=dict)
    flushed: bool = False

    def name_of(self, uri: str) -> str | None:
        """The object's name in this folder, if the folder holds it (not a durable one)."""
        prefix = self.folder + "/"
        if not uri.startswith(prefix):
            return None
        name = uri[len(prefix) :]
        return None if name in DURABLE_NAMES else name

    def size(self) -> int:
        return sum(len(data) for data in self.objects.values())

    def encoded(self) -> dict[str, str]:
        """The objects as an activity result can carry them."""
        return {name: base64.b64encode(data).decode() for name, data in self.objects.items()}

    @classmethod
    def decoded(cls, folder: str, encoded: dict[str, str]) -> HeldFolder:
        return cls(folder, {name: base64.b64decode(text) for name, text in encoded.items()})


class HeldFolders:
    """The folders held at the moment, shared by an activity's threads."""

    def __init__(self) -> None:
        self._folders: dict[str, HeldFolder] = {}
        self.lock = threading.RLock()

    def add(self, held: HeldFolder) -> None:
        with self.lock:
            self._folders[held.folder] = held

    def remove(self, held: HeldFolder) -> None:
        with self.lock:
            self._folders.pop(held.folder, None)

    def find(self, uri: str) -> tuple[HeldFolder, str] | None:
        """The held folder an object belongs to, and its name there."""
        with self.lock:
            for held in self._folders.values():
                name = held.name_of(uri)
                if name is not None:
                    return held, name
        return None
