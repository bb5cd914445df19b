"""Reading a cluster: every field of the observation against what the test cluster holds."""

from __future__ import annotations

import threading
import time

from kafka.protocol.admin import DescribeConfigsResponse

from reconciler.kafka.observe import _config
from reconciler.kafka.partitions import EARLIEST, LATEST
from reconciler.models.observed import ConfigSource, ObservedState
from reconciler.models.plan import AlterConfigs, DeleteTopic
from reconciler.plan.planner import plan as make_plan
from reconciler.testing import TestCluster
from tests.kafka.helpers import api_counts, kafka_of, sent

T0 = 1_700_000_000_000  # 2023-11-14T22:13:20Z
ORDERS = """\
kind: Topic
name: orders
partitions: 3
replication_factor: 2
configs: {retention.bytes: 1000000}
truncate:
  - keep_last: 5
  - before_time: 2023-11-14T22:13:25Z
  - consumed_by: [billing]
---
kind: Topic
name: audit
partitions: 1
truncate: [{before_time: 2030-01-01T00:00:00Z}]
"""
AT_5S, FUTURE = T0 + 5_000, 1_893_456_000_000


def test_observe_desired_reads_ids_epochs_offsets_configs_times_and_groups(desired_for):
    with TestCluster(brokers=3, broker_configs={"log.retention.hours": "48"}) as c:
        topic_id = c.create_topic("orders", partitions=3, replication_factor=2, configs={"retention.bytes": "1000000"})
        c.create_topic("unmanaged", partitions=1)
        c.create_topic("audit", partitions=1)
        c.produce_many({("orders", 0): 10, ("orders", 1): 4, ("audit", 0): 3}, timestamp_ms=T0, step_ms=1000)
        leader = c.partition("orders", 0).leader
        c.move_leader("orders", 0, to=next(r for r in c.partition("orders", 0).replicas if r != leader))
        c.commit_offsets("billing", {("orders", 0): 7})
        with kafka_of(c) as kafka:
            observed = kafka.observe_desired(desired_for(ORDERS, cluster=c))

        assert observed.cluster == "test" and observed.cluster_id == c.cluster_id
        assert [b.node_id for b in observed.brokers] == [1, 2, 3]
        orders = observed.topics["orders"]
        assert orders.topic_id == topic_id and not orders.internal
        for p in orders.partitions:
            real = c.partition("orders", p.partition)
            assert (p.leader, p.leader_epoch, p.replicas, p.isr) == (
                real.leader,
                real.leader_epoch,
                list(real.replicas),
                list(real.isr),
            )
            assert (p.log_start_offset, p.high_watermark) == (real.log_start_offset, real.high_watermark)
            # The current epoch ends at the log end offset: proof the offsets are that epoch's.
            assert p.epoch_end_offset == real.log_end_offset
            # Sizes were not asked for, but a truncation shows the bytes it deletes.
            assert p.size_bytes is not None
        p0, p1, p2 = orders.partitions
        assert p0.leader_epoch == 1 and p0.high_watermark == 10
        assert p0.offsets_by_timestamp == {AT_5S: 5}
        # Kafka answers -1 when no record is at or after the time; stored as it said.
        assert p1.offsets_by_timestamp == p2.offsets_by_timestamp == {AT_5S: -1}
        assert observed.topics["audit"].partitions[0].offsets_by_timestamp == {FUTURE: -1}
        assert observed.group_offsets == {"billing": {"orders": {0: 7}}}

        configs = orders.configs
        assert (configs["retention.bytes"].value, configs["retention.bytes"].source) == (
            "1000000",
            ConfigSource.DYNAMIC_TOPIC_CONFIG,
        )
        assert (configs["retention.ms"].value, configs["retention.ms"].source) == ("172800000", ConfigSource.STATIC_BROKER_CONFIG)
        assert (configs["cleanup.policy"].value, configs["cleanup.policy"].source) == ("delete", ConfigSource.DEFAULT_CONFIG)
        assert list(orders.explicit_configs()) == ["retention.bytes"]

        # Unmanaged and internal topics are listed (with offsets), but their configs not read.
        assert observed.topics["unmanaged"].configs == {}
        assert observed.topics["unmanaged"].partitions[0].high_watermark == 0
        assert observed.topics["__consumer_offsets"].internal
        [describe] = [r.request for r in c.request_log if r.api_name == "DescribeConfigs"]
        assert describe is not None and sorted(r.resource_name for r in describe.resources) == ["audit", "orders"]


def test_a_plan_reads_lookups_and_sizes_only_of_the_topics_whose_retention_lowers(test_cluster, kafka, desired_for):
    """The first read shows which topics lower retention; only those are read again, whole, with
    the ListOffsets lookup and the DescribeLogDirs sizes their estimates need."""
    for name in ("kept", "lowered"):
        test_cluster.create_topic(name, partitions=2, configs={"retention.ms": str(7 * 86_400_000)})
        test_cluster.produce_many({(name, 0): 5}, timestamp_ms=T0, step_ms=1000)
    desired = desired_for(
        "kind: Topic\nname: kept\npartitions: 2\nconfigs: {retention.ms: 7d}\n---\n"
        "kind: Topic\nname: lowered\npartitions: 2\nconfigs: {retention.ms: 1d}\n"
    )
    kafka.supports_epoch_fencing()
    test_cluster.clear_request_log()
    observed = kafka.observe_desired(desired)
    lowered, kept = observed.topics["lowered"], observed.topics["kept"]
    assert [p.size_bytes for p in lowered.partitions] == [test_cluster.partition("lowered", i).size_bytes for i in range(2)]
    now_ms = int(observed.taken_at.timestamp() * 1000)
    assert all(list(p.offsets_by_timestamp) == [now_ms - 86_400_000] for p in lowered.partitions)
    assert all(p.size_bytes is None and not p.offsets_by_timestamp for p in kept.partitions)
    [first, again] = [r.request for r in test_cluster.request_log if r.api_name == "Metadata"]
    assert first.topics is None and [t.name for t in again.topics] == ["lowered"]
    logs = [r.request for r in test_cluster.request_log if r.api_name == "DescribeLogDirs"]
    assert logs and all([t.topic for t in r.topics] == ["lowered"] for r in logs)


def test_a_plan_reads_the_offsets_only_of_topics_whose_plan_shows_them(test_cluster, kafka, desired_for):
    """A truncation, a deletion and a retention estimate show offsets; a change of configs or a topic
    nobody manages shows none, so a plan's read leaves their offsets unread (their leaders stay), and
    plans the same as from a read of every offset. Snapshots and drift still read every offset."""
    for name in ("plain", "cut", "gone", "lowered", "unmanaged"):
        test_cluster.create_topic(name, partitions=2, replication_factor=2, configs={"retention.ms": str(7 * 86_400_000)})
        test_cluster.produce_many({(name, 0): 5}, timestamp_ms=T0, step_ms=1000)
    desired = desired_for(
        "kind: Topic\nname: plain\npartitions: 2\nreplication_factor: 2\nconfigs: {retention.ms: 7d}\n"
        "---\nkind: Topic\nname: cut\npartitions: 2\nreplication_factor: 2\ntruncate: [{keep_last: 2}]\n"
        "---\nkind: Topic\nname: gone\nstate: absent\n"
        "---\nkind: Topic\nname: lowered\npartitions: 2\nreplication_factor: 2\nconfigs: {retention.ms: 1d}\n"
    )
    kafka.supports_epoch_fencing()
    test_cluster.clear_request_log()
    shown = kafka.observe_desired(desired, every_offset=False)
    asked = {
        (t.name, p.partition_index, p.timestamp)
        for r in sent(test_cluster, "ListOffsets")
        for t in r.topics
        for p in t.partitions
        if p.timestamp in (EARLIEST, LATEST)
    }
    assert asked == {(n, i, kind) for n in ("cut", "gone", "lowered") for i in range(2) for kind in (EARLIEST, LATEST)}
    for name in ("plain", "unmanaged"):
        partitions = shown.topics[name].partitions
        assert [p.leader for p in partitions] == [test_cluster.partition(name, i).leader for i in range(2)]
        assert all(p.offsets_not_read and p.unreadable == "was not read (its offsets are unknown)" for p in partitions)
    assert [p.high_watermark for n in ("cut", "gone", "lowered") for p in shown.topics[n].partitions] == [5, 0] * 3

    everything = kafka.observe_desired(desired)
    assert not any(p.offsets_not_read for t in everything.topics.values() for p in t.partitions)
    assert everything.topics["plain"].partitions[0].high_watermark == 5
    planned = make_plan(desired, shown)
    assert sorted((a.kind.value, a.topic) for a in planned.actions) == [
        ("alter_configs", "lowered"),
        ("delete_topic", "gone"),
        ("truncate", "cut"),
    ]
    by_topic = {a.topic: a for a in planned.actions}
    gone, lowered = by_topic["gone"], by_topic["lowered"]
    assert isinstance(gone, DeleteTopic) and gone.records == 5
    assert isinstance(lowered, AlterConfigs) and lowered.retention is not None and lowered.retention.counted
    assert planned.model_dump(exclude={"observed_at"}) == make_plan(desired, everything).model_dump(exclude={"observed_at"})


def test_sizes_come_from_describe_log_dirs_once_per_broker(test_cluster, kafka, desired_for):
    test_cluster.create_topic("sized", partitions=3, replication_factor=2)
    test_cluster.produce_many({("sized", 0): 20, ("sized", 2): 3}, value_size=50)
    test_cluster.clear_request_log()
    observed = kafka.observe_desired(desired_for("kind: Topic\nname: sized\nreplication_factor: 2\n"), sizes=True)
    assert [p.size_bytes for p in observed.topics["sized"].partitions] == [
        test_cluster.partition("sized", i).size_bytes for i in range(3)
    ]
    assert observed.topics["sized"].partitions[0].size_bytes > 0
    assert api_counts(test_cluster)["DescribeLogDirs"] == 3


def test_observe_topics_reads_named_or_all_topics_with_full_configs(test_cluster, kafka):
    test_cluster.create_topic("a", partitions=2, configs={"cleanup.policy": "compact"})
    test_cluster.create_topic("b")
    everything = kafka.observe_topics(sizes=True)
    assert sorted(everything.topics) == ["a", "b"]
    assert everything.topics["b"].configs["cleanup.policy"].value == "delete"
    assert everything.topics["a"].explicit_configs()["cleanup.policy"].value == "compact"
    assert all(p.size_bytes == 0 for p in everything.topics["a"].partitions)

    test_cluster.clear_request_log()
    named = kafka.observe_topics(["a", "missing"])
    assert list(named.topics) == ["a"] and named.topics["a"].configs
    [metadata] = [r.request for r in test_cluster.request_log if r.api_name == "Metadata"]
    assert sorted(t.name for t in metadata.topics) == ["a", "missing"]
    assert metadata.allow_auto_topic_creation is False


def test_partitions_without_a_leader_are_reported_offline_not_raised(test_cluster, desired_for):
    test_cluster.create_topic("fragile", partitions=3, replication_factor=1)
    down = test_cluster.partition("fragile", 1).leader
    test_cluster.stop_broker(down)
    notes: list[str] = []
    with kafka_of(test_cluster) as kafka:
        kafka._progress = notes.append
        observed = kafka.observe_desired(desired_for("kind: Topic\nname: fragile\ntruncate: [{keep_last: 1}]\n"))
    by_index = {p.partition: p for p in observed.topics["fragile"].partitions}
    offline = [i for i, p in by_index.items() if test_cluster.partition("fragile", i).leader == -1]
    assert 1 in offline
    for i, p in by_index.items():
        if i in offline:
            assert (p.leader, p.log_start_offset, p.high_watermark, p.epoch_end_offset) == (-1, -1, -1, None)
            assert p.offline_replicas == [down]
        else:
            assert p.leader == test_cluster.partition("fragile", i).leader and p.high_watermark == 0
    assert any("no usable leader" in n and "fragile-1" in n for n in notes)


def test_a_plan_that_reads_no_offsets_of_a_topic_still_reports_its_leaderless_partitions(test_cluster, desired_for):
    test_cluster.create_topic("fragile", partitions=3, replication_factor=1)
    down = test_cluster.partition("fragile", 1).leader
    test_cluster.stop_broker(down)
    notes: list[str] = []
    with kafka_of(test_cluster) as kafka:
        kafka._progress = notes.append
        observed = kafka.observe_desired(desired_for("kind: Topic\nname: fragile\npartitions: 3\n"), every_offset=False)
    for p in observed.topics["fragile"].partitions:
        leader = test_cluster.partition("fragile", p.partition).leader
        assert p.leader == leader and p.unreadable == (
            "has no leader (offline)" if leader < 0 else "was not read (its offsets are unknown)"
        )
    assert any("no usable leader" in n and "fragile-1" in n for n in notes)


def test_a_topic_deleted_while_being_read_is_left_out(test_cluster, kafka, desired_for):
    for name in ("doomed", "kept"):
        test_cluster.create_topic(name, partitions=2)
    desired = desired_for("kind: Topic\nname: doomed\n---\nkind: Topic\nname: kept\n")
    test_cluster.clear_request_log()
    # The brokers hold ListOffsets answers while the topic is deleted after Metadata named it.
    test_cluster.delay(2, 0.5, times=6)
    result: dict[str, ObservedState] = {}
    reader = threading.Thread(target=lambda: result.update(observed=kafka.observe_desired(desired)))
    reader.start()
    while not any(r.api_name == "ListOffsets" for r in test_cluster.request_log):
        time.sleep(0.005)
    test_cluster.delete_topic("doomed")
    reader.join(timeout=30)
    assert sorted(result["observed"].topics) == ["kept"]


def test_sensitive_config_values_are_never_kept():
    # No topic config is a PASSWORD type in Kafka, so the brokers never mark one sensitive; the
    # decoding is checked on a real DescribeConfigs v4 frame instead.
    R = DescribeConfigsResponse.DescribeConfigsResult
    E = R.DescribeConfigsResourceResult
    frame = DescribeConfigsResponse(
        version=4,
        throttle_time_ms=0,
        results=[
            R(
                error_code=0,
                error_message=None,
                resource_type=2,
                resource_name="t",
                configs=[
                    E(
                        name="secret",
                        value="hunter2",
                        read_only=False,
                        config_source=1,
                        is_sensitive=True,
                        config_type=9,
                        documentation=None,
                        synonyms=[],
                    )
                ],
            )
        ],
    ).encode(version=4)
    [entry] = DescribeConfigsResponse.decode(bytes(frame), version=4).results[0].configs
    config = _config(entry, {})
    assert (config.value, config.sensitive, config.source) == (None, True, ConfigSource.DYNAMIC_TOPIC_CONFIG)
