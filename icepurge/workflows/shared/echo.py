"""`icepurge doctor`'s round trip: a worker opens the sealed input and seals it back, so the
doctor learns that workers poll the task queue and share its payload codec."""

from __future__ import annotations

from temporalio import workflow

ECHO_WORKFLOW_TYPE = "IcepurgeEcho"


@workflow.defn(name=ECHO_WORKFLOW_TYPE)
class EchoWorkflow:
    @workflow.run
    async def run(self, text: str) -> str:
        return text
