"""The local engine's columnar pass (`reconciler.drift.quiet`) against the full path, topic by
topic: every topic's findings equal those of the whole cluster planned and classified at once,
on the benchmark's synthetic fleets (with policies, protections, ignored and drained brokers) and
on the golden cases' clusters against earlier observations that moved."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from reconciler.drift.compute import cluster_topics
from reconciler.drift.engine import run_local
from reconciler.drift.quiet import _planned, _quiet, columnar_topics
from reconciler.files.fleet import discover_fleet, write_fleet_snapshot
from reconciler.files.snapshot import load_snapshot, load_snapshot_columns
from reconciler.manifests import load_manifests
from reconciler.models.desired import BeforeOffset, BeforeTime, ConsumedBy, DesiredState, Everything, KeepLast, Policy
from reconciler.models.observed import ObservedConfig, ObservedState
from reconciler.models.plan import CreateTopic, ReassignReplicas
from reconciler.plan.planner import PlanOptions, plan
from tests.drift.moving import replicas_moving

pytest.importorskip("pyarrow")
pytest.importorskip("numpy")
GOLDEN = Path(__file__).resolve().parents[1] / "golden"
WHEN = datetime(2026, 11, 21, 6, 0, tzinfo=timezone.utc)


def _compare(desired: DesiredState, latest: Path, before: Path | None, options: PlanOptions = PlanOptions()):
    """The pass's topics and the full path's, by name."""
    now = load_snapshot_columns(latest)
    earlier = load_snapshot_columns(before) if before is not None else None
    assert now is not None and (before is None or earlier is not None)
    found = columnar_topics(desired, now, earlier, options)
    observed = load_snapshot(latest)
    was = load_snapshot(before) if before is not None else None
    full = cluster_topics(desired, observed, plan(desired, observed.to_plan_on(), options), was)  # as drift plans on snapshots
    by_name = {t.topic: t for t in found}
    assert len(by_name) == len(found), "a topic reported twice"
    assert sorted(by_name) == [t.topic for t in full]
    for expected in full:
        assert by_name[expected.topic] == expected, expected.topic
    return found, full


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    from benchmarks.drift_fleet import write_fleet

    root = tmp_path_factory.mktemp("quiet-fleet")
    return root, write_fleet(root, clusters=2, partitions=3000, runs=2, seed=5)


def _variants(desired: DesiredState):
    policy = Policy(max_retention_decrease=0.5, max_delete_fraction=0.2, protected_topic_patterns=["^svc01\\."])
    yield desired, PlanOptions()
    yield desired.model_copy(update={"policy": policy}), PlanOptions(ignore_topics=("^svc0[2-4]\\.",))
    yield (
        desired.model_copy(
            update={
                "topics": {n: t.model_copy(update={"protected": i % 7 == 0}) for i, (n, t) in enumerate(desired.topics.items())}
            }
        ),
        PlanOptions(),
    )


def test_the_pass_equals_the_full_path_on_the_benchmark_fleets(fleet):
    root, desired = fleet
    for cluster, runs in discover_fleet(root).items():
        for want, options in _variants(desired[cluster]):
            for before in (runs[-2].path, None):
                _, full = _compare(want, runs[-1].path, before, options)
                assert sum(t.empty for t in full) < len(full) and len(full) > 200
        # Most topics are reported from their shape's representative.
        assert _shared(desired[cluster], runs) > _topics(runs) // 2


@pytest.mark.parametrize("drain", [[], [4], [3]])
def test_the_pass_equals_the_full_path_where_replicas_move(fleet, drain):
    """Drained brokers (4: a few topics' replicas; 3: every topic's), replication factors changed
    and replicas pinned: each moving topic is planned in full, placed as in the whole cluster's
    plan (which weighs every topic's replicas), and the quiet topics keep their shapes."""
    root, desired = fleet
    for cluster, runs in discover_fleet(root).items():
        want = replicas_moving(desired[cluster], drain)
        for before in (runs[-2].path, None):
            _, full = _compare(want, runs[-1].path, before)
            changes = [c.summary for t in full for c in t.changes if c.kind.value == "reassign_replicas"]
            assert len(changes) > 10 and any("copies" in c for c in changes)
            assert not [d.message for t in full for d in t.diagnostics if "lists no brokers" in d.message]
        if drain != [3]:
            assert _shared(want, runs) > _topics(runs) // 2
        # The findings show few of the placement's choices: the pass's plan must make them all alike.
        now, earlier = load_snapshot_columns(runs[-1].path), load_snapshot_columns(runs[-2].path)
        assert now is not None
        _, rows = _quiet(want, now, earlier)
        _, part, _ = _planned(want, now, earlier, rows, PlanOptions(), every=True)
        whole = plan(want, load_snapshot(runs[-1].path), disk=False)  # a drift plan: no disk figures
        placed = (ReassignReplicas, CreateTopic)
        assert [a for a in part.actions if isinstance(a, placed)] == [a for a in whole.actions if isinstance(a, placed)]
    drained = {c: replicas_moving(d, drain) for c, d in desired.items()}
    report = run_local(root, drained.__getitem__, generated_at=WHEN)
    assert all(bool(c.counts.on_drained_brokers) == bool(drain) for c in report.clusters)


def test_topics_short_of_their_declared_partitions(fleet):
    """A topic with fewer partitions than declared gains them (AddPartitions, from the counts
    declared and read, which its shape holds): reported from its shape's representative with its
    own count; one with more than declared (an error naming it) is planned in full."""
    root, desired = fleet
    for cluster, runs in discover_fleet(root).items():
        want = desired[cluster]
        topics = {
            name: t.model_copy(
                update={"partitions": t.partitions - 1 if i % 11 == 0 and t.partitions > 1 else t.partitions + i % 3}
            )
            for i, (name, t) in enumerate(want.topics.items())
        }
        grown = want.model_copy(update={"topics": topics})
        for before in (runs[-2].path, None):
            _, full = _compare(grown, runs[-1].path, before)
            assert sum(c.kind.value == "add_partitions" for t in full for c in t.changes) > 100
            assert any(d.code == "partition-decrease" for t in full for d in t.diagnostics)
        assert _shared(grown, runs) > _topics(runs) // 2


def test_quiet_topics_with_truncation_rules(fleet):
    """Healthy, unchanged topics with truncation rules of every kind share their shape: each one's
    truncation (targets per partition), pending changes and plan diagnostics are its own, the rest
    its shape's; under a policy (max_delete_fraction, protected topics) and without one."""
    root, desired = fleet
    at = datetime(2026, 11, 20, 9, 30, tzinfo=timezone.utc)
    rules = [
        [KeepLast(records=500)],
        [KeepLast(records=50_000)],  # more than any partition holds: nothing to cut
        [BeforeOffset(offset=11_000)],
        [BeforeOffset(partitions={0: 10_500, 2: 12_000})],
        [BeforeTime(timestamp=at)],  # offsets by time not read: an error per partition
        [ConsumedBy(groups=["billing"])],  # no offsets committed
        [Everything()],
    ]
    for cluster, runs in discover_fleet(root).items():
        want = desired[cluster]
        topics = {
            name: t.model_copy(update={"truncate": rules[i % len(rules)]}) if i % 3 else t
            for i, (name, t) in enumerate(want.topics.items())
        }
        truncating = want.model_copy(update={"topics": topics})
        policy = Policy(max_delete_fraction=0.5, protected_topic_patterns=["^svc0[1-3]\\."])
        for variant in (truncating, truncating.model_copy(update={"policy": policy})):
            for before in (runs[-2].path, None):
                _, full = _compare(variant, runs[-1].path, before)
                assert sum(t.truncation is not None for t in full) > 50
        assert _shared(truncating, runs) > _topics(runs) // 2


def _topics(runs) -> int:
    now = load_snapshot_columns(runs[-1].path)
    assert now is not None
    return len(now.names)


def _shared(desired: DesiredState, runs) -> int:
    """How many topics the pass reports from their shape's representative."""
    now, earlier = load_snapshot_columns(runs[-1].path), load_snapshot_columns(runs[-2].path)
    assert now is not None and earlier is not None
    shapes, _ = _quiet(desired, now, earlier)
    return sum(len(rows) - 1 for rows in shapes.values())


def _moved(state: ObservedState) -> ObservedState:
    """An earlier observation of `state` from which things moved: a leader, a replica set, a
    config value, a high watermark above today's, a topic created since and one deleted since."""
    topics = dict(state.topics)
    names = sorted(n for n in topics if not n.startswith("__"))
    for i, name in enumerate(names):
        topic = topics[name]
        first = topic.partitions[0]
        if i % 5 == 1 and len(first.replicas) > 1:
            first = first.model_copy(update={"leader": first.replicas[1]})
        elif i % 5 == 2 and len(first.replicas) > 1:
            first = first.model_copy(update={"replicas": list(reversed(first.replicas))})
        elif i % 5 == 3 and first.high_watermark >= 0:
            first = first.model_copy(update={"high_watermark": first.high_watermark + 50})
        elif i % 5 == 4 and topic.configs:
            key = sorted(topic.configs)[0]
            topic = topic.model_copy(update={"configs": {**topic.configs, key: ObservedConfig(value="1")}})
        topics[name] = topic.model_copy(update={"partitions": [first, *topic.partitions[1:]]})
    if names:
        topics["gone.since"] = topics[names[-1]].model_copy(update={"name": "gone.since", "topic_id": None})
        del topics[names[0]]
    return state.model_copy(update={"topics": topics, "taken_at": (state.taken_at or WHEN) - timedelta(hours=1)})


def _golden_cases():
    return sorted(p for p in GOLDEN.iterdir() if (p / "manifests").is_dir() and (p / "observed.json").is_file())


@pytest.mark.parametrize("case", [c.name for c in _golden_cases()])
def test_the_pass_equals_the_full_path_on_the_golden_clusters(case, tmp_path):
    observed = load_snapshot(GOLDEN / case / "observed.json")
    observed = observed.model_copy(update={"taken_at": observed.taken_at or WHEN})
    desired = load_manifests(GOLDEN / case / "manifests").desired_state(observed.cluster)
    latest = write_fleet_snapshot(observed, tmp_path / "latest")
    if load_snapshot_columns(latest) is None:
        assert observed.reassignments, "only a reassignment in progress is left to the file reader here"
        return
    assert observed.taken_at is not None
    for earlier in (None, observed.model_copy(update={"taken_at": observed.taken_at - timedelta(hours=1)}), _moved(observed)):
        before = write_fleet_snapshot(earlier, tmp_path / "before") if earlier is not None else None
        _compare(desired, latest, before)


def test_a_shape_whose_retention_estimates_differ_by_topic(tmp_path):
    """Quiet topics of one shape lowering their retention, their partitions' offsets by time read
    for some and not others: each topic's estimate (its plan diagnostics, per partition) is its
    own, the rest of its findings its shape's."""
    from benchmarks.drift_fleet import RUN_AT, synthetic_desired, synthetic_rows, write_run

    cluster = "cluster-000"
    desired = synthetic_desired(cluster, 3000, seed=5)
    lowered = {n for n, t in desired.topics.items() if t.configs.get("retention.ms") == "86400000"}
    for run in (0, 1):
        rows = synthetic_rows(cluster, 3000, run, seed=5)
        at = int((RUN_AT + timedelta(hours=run)).timestamp() * 1000) - 86_400_000  # the time limit's lookup
        for i, row in enumerate(r for r in rows if r["topic"] in lowered):
            for p in row["partitions"]:
                kind = (i + p["partition"]) % 3  # not read; most records older; a few older
                if kind:
                    offset = p["high_watermark"] - (10 if kind == 1 else 9000)
                    p["offsets_by_timestamp"] = [{"timestamp": at, "offset": offset}]
        write_run(tmp_path, cluster, rows)
    runs = discover_fleet(tmp_path)[cluster]
    policy = Policy(max_delete_fraction=0.2, max_retention_decrease=0.5)
    for want in (desired, desired.model_copy(update={"policy": policy})):
        for before in (runs[-2].path, None):
            _, full = _compare(want, runs[-1].path, before)
            told = {tuple(d.message.replace(t.topic, "") for d in t.diagnostics) for t in full if t.topic in lowered}
            assert len(told) > 10  # the topics' estimates differ, not only by their names


def test_quiet_topics_out_of_sync(tmp_path):
    """Quiet topics with fewer replicas in sync than replicas (some partitions short by one, some
    with none in sync but their leader): each one's replica problems are its own, the rest of its
    findings its shape's; a shape with every topic out of sync (those of 24 partitions here) has
    its representative out of sync, and is planned and classified in full."""
    from benchmarks.drift_fleet import synthetic_desired, synthetic_rows, write_run

    cluster = "cluster-000"
    desired = synthetic_desired(cluster, 3000, seed=5)
    short: set[str] = set()
    for run in (0, 1):
        rows = synthetic_rows(cluster, 3000, run, seed=5)
        for i, row in enumerate(rows[1:]):  # after __consumer_offsets
            parts = row["partitions"]
            for p in parts:
                if p["leader"] < 0:
                    continue
                if len(parts) == 24 or (i % 3 == 0 and p["partition"] == 1):
                    p["isr"] = [p["leader"]] if p["partition"] % 2 else [b for b in p["replicas"] if b != p["replicas"][-1]]
                elif i % 7 == 0 and p["partition"] == 0:
                    p["isr"] = list(reversed(p["replicas"]))  # all in sync, in another order: no finding
        # The generator's own offline and out-of-sync partitions too.
        short = {r["topic"] for r in rows if any(p["leader"] < 0 or len(p["isr"]) < len(p["replicas"]) for p in r["partitions"])}
        write_run(tmp_path, cluster, rows)
    runs = discover_fleet(tmp_path)[cluster]
    policy = Policy(max_delete_fraction=0.2, protected_topic_patterns=["^svc01\\."])
    for want in (desired, desired.model_copy(update={"policy": policy})):
        for before in (runs[-2].path, None):
            _, full = _compare(want, runs[-1].path, before)
            out = [t for t in full if t.replicas]
            assert len(out) > 100 and {t.topic for t in out} <= short
            assert any(t.truncation for t in out) and any(t.changes and t.config for t in out)
    assert _shared(desired, runs) > _topics(runs) // 2
    # Out of sync, they are quiet: in their shapes, not planned in full for it.
    now, earlier = load_snapshot_columns(runs[-1].path), load_snapshot_columns(runs[-2].path)
    assert now is not None and earlier is not None
    shapes, _ = _quiet(desired, now, earlier)
    assert len({now.names[r] for rows in shapes.values() for r in rows} & short) > 100
