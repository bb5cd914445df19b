"""Requests: batched per broker, so their number does not grow with the number of topics; and
every API at the highest version that both the brokers (ApiVersions) and the client speak."""

from __future__ import annotations

from kafka.protocol.broker_version_data import BROKER_API_VERSIONS

from reconciler.apply.executor import apply_plan
from reconciler.manifests import load_manifests
from reconciler.models.plan import AddPartitions, AlterConfigs, ConfigChange, CreateTopic, TopicPreconditions
from reconciler.plan.planner import plan as make_plan
from reconciler.plan.validate_only import validate_on_brokers
from reconciler.testing import TestCluster
from reconciler.testing.protocol import request_class
from tests.kafka.helpers import CLUSTER, api_counts, kafka_of, write_manifests

NEW, EXISTS = TopicPreconditions(exists=False), TopicPreconditions(exists=True)
TOPIC = """\
kind: Topic
name: {name}
configs: {{retention.ms: 1d}}
truncate: [{{keep_last: 5}}, {{before_time: 2023-11-14T22:13:25Z}}, {{consumed_by: [billing, audit]}}]
"""


def requests_to_observe(tmp_path, topics: int) -> dict:
    """Per-API request counts of one observe_desired with sizes, on a fresh 3-broker cluster
    where every managed topic has 3 partitions (one led by each broker), truncation rules and a
    retention.ms whose cut is estimated."""
    with TestCluster(brokers=3) as c:
        names = [f"topic-{i:04d}" for i in range(topics)]
        for name in names:
            c.create_topic(name, partitions=3, replication_factor=1)
        c.produce_many({(name, 0): 10 for name in names}, timestamp_ms=1_700_000_000_000, step_ms=1000)
        for group in ("billing", "audit"):
            c.commit_offsets(group, {(name, 0): 3 for name in names})
        root = write_manifests(tmp_path / str(topics), c.bootstrap_servers, "---\n".join(TOPIC.format(name=n) for n in names))
        desired = load_manifests(root).desired_state(CLUSTER)
        # A timeout long enough for the in-process cluster under coverage and a loaded machine: a
        # request that timed out is sent again, and those retries are not what this test counts.
        with kafka_of(c, request_timeout_s=120.0) as kafka:
            kafka.supports_epoch_fencing()  # connects to every broker, so no ApiVersions below
            c.clear_request_log()
            observed = kafka.observe_desired(desired, sizes=True)
        assert len(observed.topics) == topics + 1  # and __consumer_offsets
        assert all(p.epoch_end_offset is not None for n in names for p in observed.topics[n].partitions)
        assert {n: observed.group_offsets[g][n] for g in ("billing", "audit") for n in names[:1]} == {names[0]: {0: 3}}
        return dict(api_counts(c))


def test_requests_per_api_are_the_same_for_1_and_1000_managed_topics(tmp_path):
    one = requests_to_observe(tmp_path, 1)
    thousand = requests_to_observe(tmp_path, 1000)
    assert one == thousand
    assert one == {
        "Metadata": 1,
        "DescribeConfigs": 1,
        # earliest, latest, the before_time lookup and the retention lookup (now - 1d): one request
        # per leader broker each
        "ListOffsets": 12,
        "OffsetForLeaderEpoch": 3,
        "FindCoordinator": 1,
        "OffsetFetch": one["OffsetFetch"],  # one per coordinator of the two groups
        "DescribeLogDirs": 3,
        "DescribeCluster": 1,  # the cluster's authorized operations: may the principal create topics
        "ListPartitionReassignments": 1,  # reassignments in progress, asked of any one broker
    }
    assert one["OffsetFetch"] in (1, 2)


def requests_to_truncate(tmp_path, topics: int) -> dict:
    """Per-API request counts of applying the truncations of `topics` topics, 3 partitions each
    (one led by each of the 3 brokers), from the first request after the plan to the result."""
    with TestCluster(brokers=3) as c:
        names = [f"cut-{i:03d}" for i in range(topics)]
        for name in names:
            c.create_topic(name, partitions=3, replication_factor=1)
        c.produce_many({(name, p): 10 for name in names for p in range(3)}, timestamp_ms=1_700_000_000_000, step_ms=1000)
        root = write_manifests(
            tmp_path / f"cut{topics}",
            c.bootstrap_servers,
            "---\n".join(f"kind: Topic\nname: {n}\npartitions: 3\ntruncate: [{{keep_last: 4}}]\n" for n in names),
        )
        desired = load_manifests(root).desired_state(CLUSTER)
        with kafka_of(c, request_timeout_s=120.0) as kafka:
            plan = make_plan(desired, kafka.observe_desired(desired))
            c.clear_request_log()
            result = apply_plan(plan, kafka, desired)
        assert [o.status.value for o in result.outcomes] == ["applied"] * topics
        assert {c.partition(n, p).log_start_offset for n in names for p in range(3)} == {6}
        return dict(api_counts(c))


def test_truncations_of_1_and_20_topics_send_the_same_requests(tmp_path):
    one = requests_to_truncate(tmp_path, 1)
    assert requests_to_truncate(tmp_path, 20) == one
    # Fenced, then deleted: one request per leader broker for every truncation of the apply.
    assert one["OffsetForLeaderEpoch"] == 3 + 3 and one["DeleteRecords"] == 3  # the re-read's, then the fence's


def test_versions_are_the_highest_the_brokers_advertise_and_the_client_speaks(test_cluster, desired_for):
    test_cluster.create_topic("versioned", partitions=2)
    test_cluster.produce_many({("versioned", 0): 5})
    test_cluster.commit_offsets("billing", {("versioned", 0): 2})
    desired = desired_for("kind: Topic\nname: versioned\npartitions: 2\ntruncate: [{keep_last: 1}, {consumed_by: [billing]}]\n")
    with kafka_of(test_cluster) as kafka:
        plan = make_plan(desired, kafka.observe_desired(desired, sizes=True))
        validate_on_brokers(
            plan.model_copy(
                update={
                    "actions": [
                        CreateTopic(topic="new", partitions=1, replication_factor=1, preconditions=NEW),
                        AddPartitions(topic="versioned", before=2, after=3, preconditions=EXISTS),
                        AlterConfigs(
                            topic="versioned",
                            preconditions=EXISTS,
                            changes=[ConfigChange(key="retention.ms", op="set", after="1000")],
                        ),
                    ]
                }
            ),
            kafka,
        )
        apply_plan(plan, kafka, desired)
        kafka.delete_topics(["versioned"])
    advertised = BROKER_API_VERSIONS[(4, 0)]
    assert {
        "CreateTopics",
        "CreatePartitions",
        "IncrementalAlterConfigs",
        "DeleteRecords",
        "DeleteTopics",
        "OffsetForLeaderEpoch",
        "OffsetFetch",
        "DescribeLogDirs",
    } <= {r.api_name for r in test_cluster.request_log}
    for record in test_cluster.request_log:
        highest = min(advertised[record.api_key][1], request_class(record.api_key).max_version)
        assert record.version == highest, record.api_name
