"""The per-bucket request budget, and throttling (503 SlowDown) retried and counted; the Grafana
dashboard asks only for metrics the worker then exports."""

from __future__ import annotations

from functools import partial

import pytest
from pyiceberg.catalog.sql import SqlCatalog

from icepurge.activities.purge.express_finish import side_by_side
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.request import PurgeRequest
from icepurge.contract.states import PurgeState
from icepurge.devstack.s3_proxy import s3_proxy, through_proxy
from icepurge.devstack.stack import EmbeddedStack
from icepurge.stores.rate_budget import task_share
from tests.metrics_scrape import dashboard_metrics, exported, metric_sum, scrape
from tests.paths import ROOT
from tests.purge_helpers import eventually, least_span_seconds, purge, request_for
from tests.store import S3Store
from tests.tables import many_files_table

BUDGET = 2.0
THROTTLED = 3
DASHBOARD = ROOT / "deploy" / "grafana" / "icepurge.json"


async def test_a_purge_keeps_to_its_bucket_budget_and_counts_throttling(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store, stack: EmbeddedStack, metrics_port: int
) -> None:
    # Three chunks of the test worker's size, two running at once, then finalize.
    table = many_files_table(catalog, ("budget",), "limited", manifests=12, files=10)
    throttled_before = metric_sum(await scrape(metrics_port), "icepurge_throttled_retries")
    with s3_proxy(stack.ports.s3) as (port, faults):
        faults.transient_failures_left = THROTTLED
        properties = through_proxy(s3.properties, port)
        report = await purge(purges, request_for(table, properties, bucket_requests_per_second=BUDGET))
        times = sorted(faults.delete_times)

    status = report.status
    assert status.state is PurgeState.SUCCEEDED
    assert s3.list(table.location()) == set()
    assert status.throttled_requests == THROTTLED
    throttled_after = metric_sum(await scrape(metrics_port), "icepurge_throttled_retries")
    assert throttled_after - throttled_before == THROTTLED
    # Every panel's metric is there once a purge has been throttled, chunked and finished (the SDK
    # counts a workflow completed once the server accepted it, which the client may hear first).
    after = await eventually(
        partial(scrape, metrics_port), lambda samples: metric_sum(samples, "temporal_workflow_completed") >= 1
    )
    asked = dashboard_metrics(DASHBOARD)
    assert {"icepurge_throttled_retries", "temporal_worker_task_slots_available"} <= asked
    assert asked - exported(after) == set()
    # Every attempt, the throttled ones too, is counted and waited for the budget.
    assert len(times) == status.delete_requests >= 8
    assert times[-1] - times[0] >= least_span_seconds(len(times), BUDGET)


@pytest.mark.parametrize(
    ("chunks", "window", "at_once", "share"), [(1, 2, 1, 2.0), (3, 16, 3, 2 / 3), (5, 2, 2, 1.0)]
)
def test_a_small_plan_finished_in_one_step_shares_its_budget_over_the_chunks_that_run(
    chunks: int, window: int, at_once: int, share: float
) -> None:
    """The express lane's finish runs a plan's chunks side by side, each at its engine's share."""
    request = PurgeRequest(
        catalog="tests",
        namespace=["budget"],
        table="side_by_side",
        metadata_location="s3://warehouse/side_by_side/metadata/v1.metadata.json",
        requested_by="pytest",
        options={"chunk_window": window, "bucket_requests_per_second": BUDGET},
    )
    running, chunk_request = side_by_side(request, chunks)
    options = chunk_request.options
    assert (running, task_share(options.bucket_requests_per_second, options.chunk_window)) == (at_once, share)
