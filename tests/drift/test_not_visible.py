"""A declared topic the principal may not see is its own finding (not-visible), never a topic to
create; refused sizes are said once per cluster. Both engines agree, also on a fleet whose earlier
snapshots predate the rights columns."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from reconciler.drift import engine
from reconciler.drift.compute import cluster_drift
from reconciler.drift.per_cluster import report_of
from reconciler.drift.render import render_report
from reconciler.models.desired import KeepLast
from reconciler.plan.planner import plan
from tests.factories import desired, have, observed, want

WHEN = datetime(2026, 11, 21, 6, 0, tzinfo=timezone.utc)


def fleet_state(taken_at: datetime):
    want_state = desired(want("orders", truncate=[KeepLast(records=10)]), want("seen"), want("new"))
    seen = observed(have("seen")).model_copy(
        update={
            "cluster": "test",
            "taken_at": taken_at,
            "hidden_topics": ["orders"],
            "absent_topic_operations": {"new": ["DESCRIBE"]},
            "cluster_authorized_operations": ["DESCRIBE"],
            "sizes_refused": "CLUSTER_AUTHORIZATION_FAILED",
        }
    )
    return want_state, seen


def test_a_hidden_topic_is_not_visible_not_a_create_and_sizes_refused_is_said_once():
    want_state, seen = fleet_state(WHEN)
    report = cluster_drift(want_state, seen, plan(want_state, seen))
    # The reader lacks CREATE (DESCRIBE only, on the cluster and the topic): a note for the plan, not
    # drift, since the principal that applies is another one.
    assert [(i.kind, i.topic) for i in report.items] == [("not-visible", "orders"), ("pending-change", "new")]
    assert report.items[0].detail.startswith("not authorised to see topic orders")
    assert (report.counts.not_visible, report.counts.plan_errors) == (1, 0)
    assert report.not_visible_topics == ["orders"] and report.sizes_refused == "CLUSTER_AUTHORIZATION_FAILED"
    text = render_report(report_of([report], "local"), "text")
    assert text.count("partition sizes unknown: the principal lacks DESCRIBE on the cluster") == 1
    assert text.count("not authorised to see topic orders") == 1


def test_both_engines_agree_on_rights_also_next_to_snapshots_from_before(spark, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    from reconciler.files.fleet import write_fleet_snapshot

    want_state, latest = fleet_state(WHEN)
    _, earlier = fleet_state(WHEN - timedelta(hours=1))
    old = write_fleet_snapshot(
        earlier.model_copy(
            update={
                "hidden_topics": [],
                "absent_topic_operations": {},
                "cluster_authorized_operations": None,
                "sizes_refused": None,
            }
        ),
        tmp_path / "fleet",
    )
    table = pq.read_table(old)
    pq.write_table(
        table.drop_columns(
            ["authorized_operations", "status", "cluster_authorized_operations", "sizes_refused"]
        ).replace_schema_metadata(table.schema.metadata),
        old,
    )
    write_fleet_snapshot(latest, tmp_path / "fleet")
    local = engine.run_fleet(tmp_path / "fleet", {"test": want_state}.__getitem__, engine="local", generated_at=WHEN)
    remote = engine.run_fleet(tmp_path / "fleet", {"test": want_state}.__getitem__, engine="spark", generated_at=WHEN)
    assert local.report.comparable() == remote.report.comparable()
    [cluster] = remote.report.clusters
    assert cluster.not_visible_topics == ["orders"] and cluster.sizes_refused == "CLUSTER_AUTHORIZATION_FAILED"
    assert "create" not in {c.kind.value.split("_")[0] for c in cluster.changes if c.topic == "orders"}
