"""Patches consulted before a step inside the workflow task (upgrades.PATCHES_BEFORE_STEPS_IN_TASK),
so the code after the step reads the decision the SDK keeps, made where a replay knows the markers."""

from collections.abc import Iterable

from temporalio import workflow

from icepurge.workflows.shared.upgrades import PATCHES_BEFORE_STEPS_IN_TASK


def decide_patches_first(patch_ids: Iterable[str]) -> None:
    """Runs started before the change consult each patch where they always did."""
    if workflow.patched(PATCHES_BEFORE_STEPS_IN_TASK):
        for patch_id in patch_ids:
            workflow.patched(patch_id)
