"""The Spark engine's filter (`reconciler.drift.spark_clean`): every topic Spark SQL proves clean
has an empty report by the planner, the plain in-sync topics are proven clean, and the engines'
reports stay equal on fleets where most topics are clean and the rest have every kind of finding."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

import pytest

from reconciler.drift import spark_clean, spark_job
from reconciler.drift.model import TopicDrift
from reconciler.drift.tables import read_table_rows
from reconciler.files.fleet import write_fleet_snapshot
from reconciler.models.desired import ClusterSpec, DesiredState, KeepLast, TopicState
from reconciler.models.observed import Broker, ConfigSource, ObservedConfig, PartitionReassignment
from reconciler.plan.planner import PlanOptions
from tests.drift.test_engines import both_engines
from tests.factories import have, observed, want

WHEN = datetime(2026, 11, 21, 6, 0, tzinfo=timezone.utc)
EARLIER = WHEN - timedelta(hours=6)
CONFIGS = {"retention.ms": "604800000", "cleanup.policy": "delete"}
IGNORE = ["^ignored\\.", "scratch", "^conn.*-x$"]  # a prefix, an infix, and a pattern SQL cannot prove
OPTIONS = PlanOptions(ignore_topics=("^tmp-",))


def _plain(name: str, hw: int = 150, configs: dict[str, str] | None = None):
    """A declared topic and its two observations, in sync: what every case below changes one thing of."""
    topic = have(name, set_on_topic=configs or CONFIGS, inherited={"segment.bytes": "1073741824"}, hw=hw, size_bytes=9000)
    return (
        want(name, configs=configs or CONFIGS),
        topic.model_copy(update={"partitions": [p.model_copy(update={"high_watermark": hw - 50}) for p in topic.partitions]}),
        topic,
    )


def _with_partition(topic, index, **fields):
    parts = list(topic.partitions)
    parts[index] = parts[index].model_copy(update=fields)
    return topic.model_copy(update={"partitions": parts})


def _config(topic, key, value, source=ConfigSource.DYNAMIC_TOPIC_CONFIG, **fields):
    return topic.model_copy(update={"configs": {**topic.configs, key: ObservedConfig(value=value, source=source, **fields)}})


# Each case: (want, earlier, now) -> (want, earlier, now), and whether Spark SQL should prove it clean.
# Cases marked False may still have an empty report (the planner decides): only soundness is required there.
CASES = {
    "in-sync": (lambda w, e, n: (w, e, n), True),
    "inherited-undeclared-key": (
        lambda w, e, n: (
            w,
            _config(e, "flush.ms", "1", ConfigSource.DEFAULT_CONFIG),
            _config(n, "flush.ms", "1", ConfigSource.DEFAULT_CONFIG),
        ),
        True,
    ),
    "sensitive-equal": (
        lambda w, e, n: (
            w.model_copy(update={"configs": {**w.configs, "x.secret": "s"}}),
            _config(e, "x.secret", "s", sensitive=True),
            _config(n, "x.secret", "s", sensitive=True),
        ),
        True,
    ),
    "configs-unread-earlier": (lambda w, e, n: (w, e.model_copy(update={"configs": {}}), n), True),
    "earlier-hw-zero": (lambda w, e, n: (w, _with_partition(e, 1, high_watermark=0), n), True),
    "unmanaged": (lambda w, e, n: (None, e, n), False),
    "partitions-added": (lambda w, e, n: (w.model_copy(update={"partitions": 5}), e, n), False),
    "partitions-fewer": (lambda w, e, n: (w.model_copy(update={"partitions": 2}), e, n), False),
    "replication-factor": (lambda w, e, n: (w.model_copy(update={"replication_factor": 2}), e, n), False),
    "config-differs": (lambda w, e, n: (w, e, _config(n, "retention.ms", "86400000")), False),
    "config-differs-both-runs": (
        lambda w, e, n: (w, _config(e, "retention.ms", "1000"), _config(n, "retention.ms", "1000")),
        False,
    ),
    "config-equal-by-value": (
        lambda w, e, n: (w, _config(e, "retention.ms", "0604800000"), _config(n, "retention.ms", "0604800000")),
        False,
    ),
    "config-not-pinned": (
        lambda w, e, n: (
            w,
            _config(e, "cleanup.policy", "delete", ConfigSource.DEFAULT_CONFIG),
            _config(n, "cleanup.policy", "delete", ConfigSource.DEFAULT_CONFIG),
        ),
        False,
    ),
    "config-undeclared-on-topic": (lambda w, e, n: (w, _config(e, "segment.ms", "1"), _config(n, "segment.ms", "1")), False),
    "config-sensitive-unknown": (
        lambda w, e, n: (
            w.model_copy(update={"configs": {**w.configs, "x.secret": "s"}}),
            _config(e, "x.secret", None, sensitive=True),
            _config(n, "x.secret", None, sensitive=True),
        ),
        False,
    ),
    "config-nan": (
        lambda w, e, n: (
            w.model_copy(update={"configs": {**w.configs, "min.cleanable.dirty.ratio": "NaN"}}),
            _config(e, "min.cleanable.dirty.ratio", "NaN"),
            _config(n, "min.cleanable.dirty.ratio", "NaN"),
        ),
        False,
    ),
    "truncation-rule": (lambda w, e, n: (w.model_copy(update={"truncate": [KeepLast(records=10)]}), e, n), False),
    "truncation-rule-satisfied": (lambda w, e, n: (w.model_copy(update={"truncate": [KeepLast(records=10**9)]}), e, n), False),
    "state-absent": (lambda w, e, n: (w.model_copy(update={"state": TopicState.ABSENT}), e, n), False),
    "pinned-assignment": (lambda w, e, n: (w.model_copy(update={"replica_assignment": {0: [2, 1, 3]}}), e, n), False),
    "missing": (lambda w, e, n: (w, None, None), False),
    "created-since": (lambda w, e, n: (w, None, n), False),
    "deleted-since": (lambda w, e, n: (w, e, None), False),
    "recreated": (lambda w, e, n: (w, e, n.model_copy(update={"topic_id": "another-id"})), False),
    "under-replicated": (lambda w, e, n: (w, e, _with_partition(n, 2, isr=[1, 2])), False),
    "offline": (
        lambda w, e, n: (w, e, _with_partition(n, 2, leader=-1, isr=[], log_start_offset=-1, high_watermark=-1, size_bytes=None)),
        False,
    ),
    "offline-with-offsets": (lambda w, e, n: (w, e, _with_partition(n, 2, leader=-1)), False),
    "leader-not-preferred": (lambda w, e, n: (w, _with_partition(e, 0, leader=2), _with_partition(n, 0, leader=2)), False),
    "leader-moved": (
        lambda w, e, n: (
            w,
            _with_partition(e, 0, leader=2, replicas=[2, 1, 3], isr=[2, 1, 3]),
            _with_partition(n, 0, leader=1, replicas=[1, 2, 3]),
        ),
        False,
    ),
    "replicas-reordered": (lambda w, e, n: (w, _with_partition(e, 0, replicas=[1, 3, 2], isr=[1, 3, 2]), n), False),
    "on-drained-broker": (
        lambda w, e, n: (
            w,
            _with_partition(e, 1, replicas=[1, 2, 9], isr=[1, 2, 9]),
            _with_partition(n, 1, replicas=[1, 2, 9], isr=[1, 2, 9]),
        ),
        False,
    ),
    "data-loss": (lambda w, e, n: (w, _with_partition(e, 1, high_watermark=n.partitions[1].high_watermark + 1), n), False),
    "hw-zero-now": (lambda w, e, n: (w, e, _with_partition(n, 1, high_watermark=0)), False),
    "retention-lowered-since": (
        lambda w, e, n: (w, _config(e, "retention.bytes", "-1"), _config(n, "retention.bytes", "100")),
        False,
    ),
    "config-source-moved": (
        lambda w, e, n: (
            w,
            _config(e, "flush.ms", "1", ConfigSource.DEFAULT_CONFIG),
            _config(n, "flush.ms", "1", ConfigSource.STATIC_BROKER_CONFIG),
        ),
        False,
    ),
    "offsets-by-time": (lambda w, e, n: (w, e, _with_partition(n, 0, offsets_by_timestamp={1: 5})), True),
    "epoch-unknown": (lambda w, e, n: (w, e, _with_partition(n, 0, leader_epoch=-1)), True),
}
SPECIAL = {"hidden": False, "absent": False, "reassigning": False}  # made by the cluster, below
UNDECLARED = {
    "__consumer_offsets": True,
    "ignored.logs": True,
    "team.scratch.1": True,
    "conn-a-x": False,
    "tmp-1": True,
    "plain.unmanaged": False,
}


def _fleet(tmp_path, cases: dict[str, str], seed: int = 0):
    """Cluster `main` (two runs, drains broker 9) with a topic per case name, and cluster `once`
    (one run) with a few in-sync topics; returns (fleet dir, desired by cluster)."""
    rnd = random.Random(seed)
    topics, earlier, now = [], [], []
    for name, case in sorted(cases.items()):
        w, e, n = CASES[case][0](*_plain(name, hw=rnd.randrange(60, 5000)))
        topics += [w] if w else []
        earlier += [e.model_copy(update={"name": name})] if e else []
        now += [n.model_copy(update={"name": name})] if n else []
    for name in UNDECLARED:
        _, e, n = _plain(name)
        if name == "__consumer_offsets":
            e, n = e.model_copy(update={"internal": True}), n.model_copy(update={"internal": True})
        earlier.append(e)
        now.append(n)
    special = [want(name, configs=CONFIGS) for name in SPECIAL]
    moving = _plain("reassigning")[2]
    brokers = [Broker(node_id=b, host="h", port=9092) for b in (1, 2, 3, 4, 9)]
    main = DesiredState(
        cluster=ClusterSpec(name="main", bootstrap_servers=["h:9092"], ignore_topics=IGNORE, drain_brokers=[9]),
        topics={t.name: t for t in [*topics, *special]},
    )
    before = observed(*earlier, moving).model_copy(update={"cluster": "main", "taken_at": EARLIER, "brokers": brokers})
    after = observed(*now, moving).model_copy(
        update={
            "cluster": "main",
            "taken_at": WHEN,
            "brokers": brokers,
            "hidden_topics": ["hidden"],
            "absent_topic_operations": {"absent": ["CREATE"]},
            "reassignments": {"reassigning": {0: PartitionReassignment(adding_replicas=[], removing_replicas=[3])}},
        }
    )
    fleet = tmp_path / "fleet"
    write_fleet_snapshot(before, fleet)
    write_fleet_snapshot(after, fleet)
    once_topics = [_plain(f"once.{i}") for i in range(3)]
    once = DesiredState(
        cluster=ClusterSpec(name="once", bootstrap_servers=["h:9092"]), topics={w.name: w for w, _, _ in once_topics}
    )
    write_fleet_snapshot(
        observed(*[n for _, _, n in once_topics]).model_copy(update={"cluster": "once", "taken_at": WHEN, "brokers": brokers}),
        fleet,
    )
    return fleet, {"main": main, "once": once}


def _clean_and_planned(spark, fleet, desired):
    """Each row's topic -> (proven clean by Spark SQL, the planner's report of it is empty)."""
    found = spark_job.fleet_inputs(spark, fleet, desired.__getitem__, OPTIONS)
    out = {}
    for row in found.rows.toLocalIterator():
        r = row.asDict(recursive=True)
        drift = spark_job.row_drift(r, desired[r["cluster"]], found.whole[r["cluster"]], OPTIONS)
        out[(r["cluster"], r["topic"])] = (r["clean"], drift.empty)
    return out


def test_every_topic_proven_clean_has_an_empty_report_and_every_plain_one_is_proven(spark, tmp_path):
    fleet, desired = _fleet(tmp_path, {case: case for case in CASES})
    found = _clean_and_planned(spark, fleet, desired)
    unsound = sorted(t for t, (clean, empty) in found.items() if clean and not empty)
    assert not unsound, f"proven clean, yet the planner finds something: {unsound}"
    expected = {("main", c) for c, (_, clean) in CASES.items() if clean}
    expected |= {("main", t) for t, clean in UNDECLARED.items() if clean} | {("once", f"once.{i}") for i in range(3)}
    assert {t for t, (clean, _) in found.items() if clean} == expected
    # The cases that are not proven clean are findings indeed (bar those the planner alone can tell).
    empty_anyway = {t for t, (clean, empty) in found.items() if not clean and empty}
    assert empty_anyway == {
        ("main", "conn-a-x"),
        ("main", "truncation-rule-satisfied"),
        ("main", "config-equal-by-value"),
        ("main", "config-source-moved"),
    }
    assert {t for _, t in found} >= set(SPECIAL)


@pytest.mark.parametrize("seed", [1, 2])
def test_engines_agree_on_generated_fleets_where_most_topics_are_clean(spark, tmp_path, seed):
    """Every case once, then 200 topics, 80% in sync and the rest one random case each: every kind
    of finding, proven clean or planned, the reports and tables of both engines equal."""
    rnd = random.Random(seed)
    kinds = sorted(CASES)
    cases = {f"t{i:03d}": "in-sync" if rnd.random() < 0.8 else rnd.choice(kinds) for i in range(200)}
    cases |= {f"k.{case}": case for case in CASES}
    fleet, desired = _fleet(tmp_path, cases, seed)
    found = _clean_and_planned(spark, fleet, desired)
    assert not [t for t, (clean, empty) in found.items() if clean and not empty]
    assert sum(clean for clean, _ in found.values()) > 150
    main = both_engines(fleet, desired.__getitem__, tmp_path, OPTIONS).report.clusters[0]
    assert main.topics_observed > 200 and main.counts.items and main.counts.change_log
    for table in ("drift_items", "pending_truncations", "retention_lowered", "changes"):
        assert read_table_rows(tmp_path / "local", table) == read_table_rows(tmp_path / "spark", table)


def test_literal_ignore_patterns_and_the_rest():
    assert spark_clean.literal_pattern("^connect-") == ("prefix", "connect-")
    assert spark_clean.literal_pattern("^ignored\\.") == ("prefix", "ignored.")
    assert spark_clean.literal_pattern("scratch") == ("infix", "scratch")
    assert spark_clean.literal_pattern("^") == ("prefix", "")
    for pattern in ("^conn.*-x$", "a.b", "^a$", "[ab]", "a|b", "(?i)a", "\\d", "a+"):
        assert spark_clean.literal_pattern(pattern) is None, pattern


# --- the rules and decisions the SQL restates: each one named, each form agreeing ------------------


def test_every_finding_and_every_action_is_ruled_out_by_a_named_clause():
    """A finding added to TopicDrift, or an action kind to the plan, fails here until
    spark_clean says which of its clauses proves there is none."""
    from reconciler.drift.model import TopicDrift
    from reconciler.models.plan import ActionKind

    findings, others = set(TopicDrift.FINDINGS), set(TopicDrift.NOT_FINDINGS)
    assert findings | others == set(TopicDrift.model_fields) and not findings & others
    assert set(spark_clean.FINDINGS_RULED_OUT) == findings
    assert set(spark_clean.ACTIONS_RULED_OUT) == set(ActionKind)
    for clauses in [*spark_clean.FINDINGS_RULED_OUT.values(), *spark_clean.ACTIONS_RULED_OUT.values()]:
        assert clauses and set(clauses) <= set(spark_clean.CLAUSES)
    assert all(clause in spark_clean.CLEAN_SQL for clause in spark_clean.CLAUSES.values())
    base = TopicDrift(topic="t", managed=True, observed=True)
    assert base.empty
    for field in TopicDrift.FINDINGS:  # `empty` reads every finding
        assert not base.model_copy(update={field: [object()]}).empty, field


def test_the_sql_form_of_each_partition_rule_agrees_with_its_python_form(spark):
    from pyspark.sql import functions as F

    from reconciler.models.partition_rules import PARTITION_RULES
    from tests.models.test_partition_rules import generated_partitions, python_verdict

    partitions = generated_partitions(seed=17, count=600)
    rows = [
        ({**p, "offsets_by_timestamp": [{"timestamp": t, "offset": o} for t, o in p["offsets_by_timestamp"].items()]}, 0)
        for p in partitions
    ]
    frame = spark.createDataFrame(rows, f"p {_struct_ddl()}, i int")
    for rule in PARTITION_RULES:
        before = PARTITION_RULES[: PARTITION_RULES.index(rule)]
        got = [r[0] for r in frame.select(F.coalesce(F.expr(rule.sql), F.lit(False))).collect()]
        for p, sql in zip(partitions, got):
            if all(python_verdict(r, p) for r in before):
                assert sql == python_verdict(rule, p), (rule.name, p)


def _struct_ddl() -> str:
    return (
        "struct<partition:int,leader:int,leader_epoch:int,replicas:array<int>,isr:array<int>,offline_replicas:array<int>,"
        "log_start_offset:bigint,high_watermark:bigint,size_bytes:bigint,epoch_end_offset:bigint,"
        "offsets_by_timestamp:array<struct<timestamp:bigint,offset:bigint>>>"
    )


def test_the_internal_topic_rule_reads_the_same_in_sql(spark):
    from pyspark.sql import functions as F

    from reconciler.models.observed import INTERNAL_TOPIC_SQL, is_internal_topic
    from tests.factories import have

    cases = [(n, i) for n in ("__consumer_offsets", "_schemas", "orders", "a__b", "__") for i in (True, False, None)]
    frame = spark.createDataFrame(cases, "topic string, internal boolean")
    got = [r[0] for r in frame.select(F.expr(INTERNAL_TOPIC_SQL)).collect()]
    expected = [is_internal_topic(n, have(n).model_copy(update={"internal": bool(i)})) for n, i in cases]
    assert got == expected


def test_every_field_of_a_topic_and_of_a_config_is_checked_by_the_clean_filter_or_its_column_type():
    """A field added to the models fails here until spark_clean says how a clean row's value of it
    is one the models accept."""
    from reconciler.models.observed import ObservedTopic

    assert set(spark_clean.TOPIC_FIELDS_CHECKED) == set(ObservedTopic.model_fields)
    assert set(spark_clean.CONFIG_FIELDS_CHECKED) == set(ObservedConfig.model_fields)
    clauses = [*spark_clean.TOPIC_FIELDS_CHECKED.values(), *spark_clean.CONFIG_FIELDS_CHECKED.values()]
    assert all(clause in spark_clean.CLEAN_SQL for clause in clauses if clause is not None)


def test_the_topic_name_rule_reads_the_same_in_sql(spark):
    from pyspark.sql import functions as F

    from reconciler.kafka_configs import is_topic_name

    names = ["orders.v1", "a", "a" * 249, "a" * 250, "", ".", "..", "...", ".a", "bad name", "bad\n", "é", "a/b", "x-_.9"]
    frame = spark.createDataFrame([(n,) for n in names], "topic string")
    got = [r[0] for r in frame.select(F.expr(str(spark_clean.TOPIC_FIELDS_CHECKED["name"]))).collect()]
    assert got == [is_topic_name(n) for n in names]


def test_quiet_topics_given_their_shapes_findings_have_the_findings_of_their_own_plans(spark, tmp_path):
    """The executors plan a quiet topic's shape once (`spark_clean.QUIET_SQL`, `spark_job.TaskDrift`):
    every quiet topic's findings so made equal those of planning it on its own, and most topics
    of a shape are not planned."""
    rnd = random.Random(5)
    kinds = ["unmanaged", "config-not-pinned", "config-differs", "config-undeclared-on-topic", "in-sync", "recreated"]
    fleet, desired = _fleet(tmp_path, {f"t{i:03d}": rnd.choice(kinds) for i in range(150)}, 5)
    found = spark_job.fleet_inputs(spark, fleet, desired.__getitem__, OPTIONS)
    shared = spark_job.for_the_executors(found, OPTIONS)
    quiet = spark_job.for_the_planner(found).filter("quiet").orderBy("cluster", "topic")
    own = {}
    for row in quiet.toLocalIterator():
        r = row.asDict(recursive=True)
        own[r["topic"]] = spark_job.row_drift(r, desired[r["cluster"]], found.whole[r["cluster"]], OPTIONS).model_dump_json()
    task = spark_job.TaskDrift(shared)
    drifts = [drift for _, drift in task.quiet(quiet.toArrow().combine_chunks().to_batches()[0])]
    assert all(isinstance(d, TopicDrift) for d in drifts)  # quiet rows are rows the models accept
    assert {d.topic: d.model_dump_json() for d in drifts if isinstance(d, TopicDrift)} == own
    assert len(own) > 60 and len(task.shapes) < 10  # unmanaged, not pinned and differing: a shape each (and `internal`)
