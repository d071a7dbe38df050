"""The span processor that names the purge on every span about one of its workflows."""

from __future__ import annotations

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor

from icepurge.contract.range_steps import purge_of


class PurgeIdSpans(SpanProcessor):
    """A span started with a workflow id (Temporal's client, workflow and activity spans) gets the
    purge that workflow works for: a table purge's own id, or a range's namespace purge."""

    def __init__(self, workflow_attribute: str, purge_attribute: str) -> None:
        self._workflow_attribute = workflow_attribute
        self._purge_attribute = purge_attribute

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        workflow_id = (span.attributes or {}).get(self._workflow_attribute)
        if isinstance(workflow_id, str):
            span.set_attribute(self._purge_attribute, purge_of(workflow_id))

    def on_end(self, span: ReadableSpan) -> None:
        return None
