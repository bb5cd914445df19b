"""Replica health in drift reports: reassignments in progress, replicas on drained brokers, leaders
other than the preferred replica, and a replication factor other than the manifest's; which of
them are drift (exit code 3) and which are health findings; every format and the tables."""

from __future__ import annotations

from reconciler.drift.per_cluster import drift_for_cluster, report_of
from reconciler.drift.render import render_report, summary_line
from reconciler.drift.tables import read_table_rows, write_tables_local
from reconciler.models.desired import ClusterSpec, DesiredState
from reconciler.models.observed import Broker, ObservedState, PartitionReassignment
from tests.factories import have, partition, want


def cluster(*topics, reassignments=None) -> ObservedState:
    return ObservedState(
        cluster="test",
        cluster_id="c1",
        brokers=[Broker(node_id=i, host=f"k{i}", port=9092) for i in (1, 2, 3, 4)],
        topics={t.name: t for t in topics},
        reassignments=reassignments or {},
    )


def desired(*topics, drain=()) -> DesiredState:
    return DesiredState(
        cluster=ClusterSpec(name="test", bootstrap_servers=["k:9092"], drain_brokers=list(drain)),
        topics={t.name: t for t in topics},
    )


def kinds(report) -> list[str]:
    return [i.kind for i in report.items]


def test_a_reassignment_in_progress_is_a_health_finding_not_drift():
    moving = have("a", partitions=2, replication_factor=3)
    moving = moving.model_copy(update={"partitions": [partition(0, replicas=(1, 2, 4, 3), leader=1), moving.partitions[1]]})
    report = drift_for_cluster(
        desired(want("a", partitions=2, replication_factor=3)),
        cluster(moving, reassignments={"a": {0: PartitionReassignment(adding_replicas=[4], removing_replicas=[3])}}),
    )
    assert kinds(report) == ["reassignment-in-progress"] and not report.has_drift
    [health] = report.health
    assert [(r.partition, r.replicas, r.adding, r.removing) for r in health.reassigning] == [(0, [1, 2, 4, 3], [4], [3])]
    assert report.items[0].detail == "1 of 2 partitions being reassigned: 0 [1, 2, 4, 3] +4 -3"
    assert report.counts.reassigning == 1
    assert summary_line(report) == "No drift. Replica health: 1 partition being reassigned."


def test_replicas_on_a_drained_broker_are_drift_with_the_move_pending():
    t = have("a", partitions=2, replication_factor=2)
    t = t.model_copy(update={"partitions": [partition(0, replicas=(1, 3)), partition(1, replicas=(2, 1), leader=2)]})
    report = drift_for_cluster(desired(want("a", partitions=2, replication_factor=2), drain=[3]), cluster(t))
    assert kinds(report) == ["replicas-on-drained-broker", "pending-change"] and report.has_drift
    assert report.items[0].detail == "1 of 2 partitions keep replicas on drained broker 3: 0"
    assert report.items[0].key == "3"
    assert report.changes[0].summary == "replicas moved in 1 partition, copy size unknown"
    assert report.counts.on_drained_brokers == 1
    assert "1 partition on drained brokers" in summary_line(report)


def test_a_replication_factor_other_than_the_manifests_is_a_pending_change():
    report = drift_for_cluster(
        desired(want("a", partitions=1, replication_factor=3)), cluster(have("a", partitions=1, replication_factor=2))
    )
    assert kinds(report) == ["pending-change"] and report.has_drift
    assert report.changes[0].summary.startswith("replication factor 2 -> 3 in 1 partition")


def test_a_leader_other_than_the_preferred_replica_is_a_health_finding():
    t = have("a", partitions=3)
    t = t.model_copy(update={"partitions": [partition(0, leader=2), partition(1), partition(2, leader=3)]})
    report = drift_for_cluster(desired(want("a")), cluster(t))
    assert kinds(report) == ["leader-not-preferred"] and not report.has_drift
    assert report.health[0].not_preferred == [0, 2] and report.counts.leader_not_preferred == 2
    assert summary_line(report) == "No drift. Replica health: 2 partitions not led by their preferred replica."


def test_replica_health_is_in_every_format_and_the_items_table(tmp_path):
    t = have("a", partitions=2, replication_factor=2)
    t = t.model_copy(update={"partitions": [partition(0, replicas=(1, 3)), partition(1, replicas=(2, 1), leader=1)]})
    report = report_of(
        [drift_for_cluster(desired(want("a", partitions=2, replication_factor=2), drain=[3]), cluster(t))], "local"
    )
    text = render_report(report, "text")
    assert "Replica health (1):" in text and "partition 0 (broker 3)" in text
    assert "### Replica health (1)" in render_report(report, "markdown")
    assert "Replica health" in render_report(report, "html")
    assert '"not_preferred": [\n' in render_report(report, "json")
    write_tables_local(report, tmp_path)
    rows = read_table_rows(tmp_path, "drift_items")
    assert sorted(r["kind"] for r in rows) == ["leader-not-preferred", "pending-change", "replicas-on-drained-broker"]


def test_both_engines_agree_on_replicas_to_move_and_reassignments_in_progress(spark, tmp_path):
    """The brokers to place on and the reassignments in progress come from the snapshot's
    header, in a Spark task as in the local engine, so an RF change or a drain is a pending
    change there too, not a plan error about a snapshot without brokers."""
    from datetime import datetime, timezone

    from reconciler.drift import engine
    from reconciler.files.fleet import write_fleet_snapshot

    moving = have("a", partitions=1, replication_factor=3).model_copy(
        update={"partitions": [partition(0, replicas=(1, 2, 4, 3))]}
    )
    state = cluster(
        moving,
        have("b", partitions=1, replication_factor=1),
        have("c", partitions=1),
        reassignments={"a": {0: PartitionReassignment(adding_replicas=[4], removing_replicas=[3])}},
    )
    state = state.model_copy(update={"taken_at": datetime(2026, 11, 23, tzinfo=timezone.utc)})
    wanted = desired(want("a", partitions=1), want("b", partitions=1, replication_factor=2), want("c", partitions=1), drain=[3])
    write_fleet_snapshot(state, tmp_path / "fleet")
    local = engine.run_fleet(tmp_path / "fleet", {"test": wanted}.__getitem__, engine="local")
    remote = engine.run_fleet(tmp_path / "fleet", {"test": wanted}.__getitem__, engine="spark")
    assert local.report.comparable() == remote.report.comparable()
    [report] = remote.report.clusters
    assert not [i for i in report.items if i.kind == "plan-error"], report.items
    assert {(i.kind, i.topic) for i in report.items} >= {
        ("pending-change", "b"),
        ("pending-change", "c"),
        ("reassignment-in-progress", "a"),
    }
