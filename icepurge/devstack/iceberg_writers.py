"""Iceberg commits PyIceberg's table API doesn't offer, built from its own manifest writers:
delete manifests, and appends of manifests written beforehand (in parallel)."""

from __future__ import annotations

from typing import Any

from pyiceberg.manifest import ManifestContent, ManifestFile, ManifestWriterV2
from pyiceberg.table.update.snapshot import _FastAppendFiles


class DeleteManifestWriter(ManifestWriterV2):
    """A v2 manifest of position- or equality-delete files."""

    def content(self) -> ManifestContent:
        return ManifestContent.DELETES

    @property
    def _meta(self) -> dict[str, str]:
        return {**super()._meta, "content": "deletes"}


class AppendManifests(_FastAppendFiles):
    """A fast append that also commits manifests written beforehand."""

    def __init__(self, manifests: list[ManifestFile], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._prewritten = manifests

    def _manifests(self) -> list[ManifestFile]:
        return [*super()._manifests(), *self._prewritten]


class ReplaceManifests(AppendManifests):
    """A commit whose snapshot lists exactly the manifests written beforehand: what a
    merge-append or a copy-on-write rewrite leaves (earlier manifests merged or replaced)."""

    def _existing_manifests(self) -> list[ManifestFile]:
        return []
