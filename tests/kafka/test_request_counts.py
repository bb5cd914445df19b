"""Reading is batched per broker: the number of requests does not grow with the number of topics."""
from __future__ import annotations

from reconciler.manifests import load_manifests
from reconciler.testing import TestCluster
from tests.kafka.helpers import CLUSTER, api_counts, kafka_of, write_manifests

TOPIC = """\
kind: Topic
name: {name}
truncate: [{{keep_last: 5}}, {{before_time: 2023-11-14T22:13:25Z}}, {{consumed_by: [billing, audit]}}]
"""


def requests_to_observe(tmp_path, topics: int) -> dict:
    """Per-API request counts of one observe_desired with sizes, on a fresh 3-broker cluster
    where every managed topic has 3 partitions (one led by each broker) and truncation rules."""
    with TestCluster(brokers=3) as c:
        names = [f"topic-{i:04d}" for i in range(topics)]
        for name in names:
            c.create_topic(name, partitions=3, replication_factor=1)
        c.produce_many({(name, 0): 10 for name in names}, timestamp_ms=1_700_000_000_000, step_ms=1000)
        for group in ("billing", "audit"):
            c.commit_offsets(group, {(name, 0): 3 for name in names})
        root = write_manifests(tmp_path / str(topics), c.bootstrap_servers,
                               "---\n".join(TOPIC.format(name=n) for n in names))
        desired = load_manifests(root).desired_state(CLUSTER)
        with kafka_of(c) as kafka:
            kafka.supports_epoch_fencing()  # connects to every broker, so no ApiVersions below
            c.clear_request_log()
            observed = kafka.observe_desired(desired, sizes=True)
        assert len(observed.topics) == topics + 1  # and __consumer_offsets
        assert all(p.epoch_end_offset is not None for n in names for p in observed.topics[n].partitions)
        assert {n: observed.group_offsets[g][n] for g in ("billing", "audit") for n in names[:1]} == {
            names[0]: {0: 3}}
        return dict(api_counts(c))


def test_requests_per_api_are_the_same_for_1_and_1000_managed_topics(tmp_path):
    one = requests_to_observe(tmp_path, 1)
    thousand = requests_to_observe(tmp_path, 1000)
    assert one == thousand
    assert one == {
        "Metadata": 1,
        "DescribeConfigs": 1,
        # earliest, latest and the before_time lookup: one request per leader broker each
        "ListOffsets": 9,
        "OffsetForLeaderEpoch": 3,
        "FindCoordinator": 1,
        "OffsetFetch": one["OffsetFetch"],  # one per coordinator of the two groups
        "DescribeLogDirs": 3,
    }
    assert one["OffsetFetch"] in (1, 2)
