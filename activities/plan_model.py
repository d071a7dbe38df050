"""The persisted plan: every file list of a purge, kept in the state location, not in history."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from workflows.counts import Category


class PlannedManifest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str
    length: int
    file_count: int
    owned: bool


class PlannedFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str
    category: Category


class Plan(BaseModel):
    model_config = ConfigDict(extra="forbid")

    purge_id: str
    metadata_location: str
    gc_enabled: bool
    locations: list[str]
    chunks: list[list[PlannedManifest]]
    manifest_lists: list[str]
    statistics_files: list[str]
    previous_metadata_files: list[str]
    current_metadata_file: str | None
    foreign_files: list[PlannedFile]

    def finalize_groups(self) -> list[tuple[Category, list[str]]]:
        """Finalize's delete order: the current metadata file goes last, alone."""
        groups = [
            (Category.MANIFEST_LISTS, self.manifest_lists),
            (Category.STATISTICS_FILES, self.statistics_files),
            (Category.METADATA_FILES, self.previous_metadata_files),
        ]
        if self.current_metadata_file:
            groups.append((Category.METADATA_FILES, [self.current_metadata_file]))
        return groups
