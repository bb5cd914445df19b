"""The evidence of idle topics is read in requests whose number does not grow with the number of
guarded deletions (docs/idle-topics.md), and none is read where no deletion is guarded."""

from __future__ import annotations

from reconciler.manifests import load_manifests
from reconciler.testing import TestCluster
from tests.kafka.helpers import CLUSTER, api_counts, kafka_of, write_manifests

ABSENT = "kind: Topic\nname: {name}\nstate: absent\n{guard}"
T0 = 1_700_000_000_000


def _old_topics(c: TestCluster, topics: int, groups: tuple[str, ...]) -> list[str]:
    """`topics` topics of 3 partitions, 10 records on partition 0 stamped from T0, which each of
    `groups` committed offset 3 on."""
    names = [f"old-{i:04d}" for i in range(topics)]
    for name in names:
        c.create_topic(name, partitions=3, replication_factor=1)
    c.produce_many({(name, 0): 10 for name in names}, timestamp_ms=T0, step_ms=1000)
    for group in groups:
        c.commit_offsets(group, {(name, 0): 3 for name in names})
    return names


def requests_to_observe(tmp_path, topics: int, guard: str) -> dict:
    with TestCluster(brokers=3) as c:
        names = _old_topics(c, topics, ("billing", "audit"))
        documents = "---\n".join(ABSENT.format(name=n, guard=guard) for n in names)
        root = write_manifests(tmp_path / f"{topics}{bool(guard)}", c.bootstrap_servers, documents)
        desired = load_manifests(root).desired_state(CLUSTER)
        with kafka_of(c, request_timeout_s=120.0) as kafka:
            kafka.supports_epoch_fencing()  # connects to every broker, so no ApiVersions below
            c.clear_request_log()
            observed = kafka.observe_desired(desired)
        if guard:
            evidence = observed.activity[names[-1]]
            assert evidence.unknown == [] and [g.group for g in evidence.groups] == ["audit", "billing"]
            assert [p.newest_offset for p in evidence.partitions] == [9, -1, -1]
        else:
            assert observed.activity == {}
        return dict(api_counts(c))


def test_requests_per_api_are_the_same_for_1_and_300_guarded_deletions(tmp_path):
    one = requests_to_observe(tmp_path, 1, "delete_only_if_idle_for: 30d\n")
    many = requests_to_observe(tmp_path, 300, "delete_only_if_idle_for: 30d\n")
    assert one == many
    unguarded = requests_to_observe(tmp_path, 1, "")
    # earliest and latest, and MAX_TIMESTAMP: one request per leader broker each
    assert one["ListOffsets"] == unguarded["ListOffsets"] + 3
    assert one["ListGroups"] == 3 and "ListGroups" not in unguarded  # one per broker
    assert one["OffsetFetch"] in (1, 2)  # one per coordinator of the two groups
    assert one["DescribeCluster"] == unguarded.get("DescribeCluster", 0) + 1


def requests_to_snapshot(tmp_path, topics: int, policy: str) -> dict:
    """What a snapshot's read (every topic, with sizes) sends for `topics` topics, none declared."""
    with TestCluster(brokers=3) as c:
        names = _old_topics(c, topics, ("billing",))
        root = write_manifests(tmp_path / f"snap{topics}{bool(policy)}", c.bootstrap_servers, policy or "kind: Policy\n")
        desired = load_manifests(root).desired_state(CLUSTER)
        with kafka_of(c, request_timeout_s=120.0) as kafka:
            kafka.supports_epoch_fencing()
            c.clear_request_log()
            observed = kafka.observe_desired(desired, sizes=True)
        assert sorted(observed.activity) == (sorted(observed.topics) if policy else [])
        if policy:
            assert [g.group for g in observed.activity[names[-1]].groups] == ["billing"]
        return dict(api_counts(c))


def test_a_snapshot_reads_every_topics_evidence_in_the_same_requests_for_1_and_300_topics(tmp_path):
    policy = "kind: Policy\nidle_after: 30d\n"
    one = requests_to_snapshot(tmp_path, 1, policy)
    assert one == requests_to_snapshot(tmp_path, 300, policy)
    without = requests_to_snapshot(tmp_path, 1, "")
    assert one["ListOffsets"] == without["ListOffsets"] + 3  # MAX_TIMESTAMP: one per leader broker
    assert one["ListGroups"] == 3 and "ListGroups" not in without
    assert one["OffsetFetch"] == 1  # the one coordinator of billing
