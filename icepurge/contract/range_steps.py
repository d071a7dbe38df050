"""A namespace purge as a tree: a purge of more tables than one range hands ranges of its table
list to child PurgeTableRange workflows, each with its own window and continue-as-new chain, so
no one workflow's task processing bounds the rate. Each range reports its tallies to the
namespace purge as it goes and when it ends; the namespace purge's status adds them up."""

from __future__ import annotations

from pydantic import Field

from icepurge.contract.controls import TableControl
from icepurge.contract.namespace_request import DEFAULT_RANGE_TABLES, DEFAULT_WINDOW, NamespacePurgeRequest
from icepurge.contract.strict_model import StrictModel
from icepurge.contract.table_outcomes import TableTallies

# Work units a range runs at once: the namespace purge's window is split into ranges of this
# many (a window below twice this is one range's; fewer ranges than the split makes share the
# window among them, see ranges_in_flight).
RANGE_WINDOW = DEFAULT_WINDOW
# A range tells its namespace purge its tallies at most this often (and once more when it ends).
RANGE_PROGRESS_SECONDS = 5.0


class TableRange(StrictModel):
    """A child's share of the table list: [first, end), with what its table purges share."""

    root_id: str = Field(description="The namespace purge: its table purges' parent and listing.")
    index: int = Field(ge=0, description="The range's place among the namespace purge's ranges.")
    request: NamespacePurgeRequest = Field(
        description="The namespace purge's request, its window set to the range's own."
    )
    request_id: str = Field(description="The table purges' request id: the namespace purge's id and chain.")
    tree_location: str
    tables_total: int = Field(ge=1, description="Tables in the whole table list.")
    first: int = Field(ge=0)
    end: int = Field(ge=1)
    control: TableControl = Field(description="The range's pause and its share of the budget.")

    @property
    def tables(self) -> int:
        return self.end - self.first


class RangeProgress(StrictModel):
    """A range's tallies so far, whole (not since the last signal): a late or repeated one is
    harmless, and the namespace purge keeps the one with the most tables finished."""

    index: int
    tallies: TableTallies
    running: int = Field(description="Tables started and not yet ended.")


class TableRangeReport(StrictModel):
    tallies: TableTallies
    kept: list[int] = Field(
        default_factory=list,
        description="A dry run's tables (places in the table list) the real purge would not purge.",
    )
    kept_overflow: bool = False


def range_size(request: NamespacePurgeRequest) -> int:
    return request.range_tables or DEFAULT_RANGE_TABLES


def ranges_at_once(window: int) -> int:
    """Ranges the namespace purge runs at once: its window split into windows of RANGE_WINDOW."""
    return max(1, window // RANGE_WINDOW)


def ranges_in_flight(window: int, ranges: int) -> int:
    """Ranges the namespace purge runs at once when it has `ranges` left to run: no more than
    those, so a tree of fewer ranges than its window has room for shares the whole window (and
    budget) among them."""
    return max(1, min(ranges_at_once(window), ranges))


RANGE_MARK = "range-"


def range_id(root_id: str, chain: str | None, index: int) -> str:
    """One range workflow per namespace purge run chain and place, whatever replays or retries."""
    return f"{root_id}/{RANGE_MARK}{index}" + (f"@{chain}" if chain else "")


def purge_of(workflow_id: str) -> str:
    """The purge a workflow works for: a range's namespace purge, else the workflow's own id."""
    return workflow_id.split(f"/{RANGE_MARK}", 1)[0]
