"""What the test cluster answers for the evidence of idle topics (docs/idle-topics.md), as a Kafka
4.0 broker does (../shared/KAFKA_SEMANTICS.md): ListOffsets MAX_TIMESTAMP and groups' members."""

from __future__ import annotations

from kafka.protocol.admin import DeleteGroupsRequest, DescribeGroupsRequest, ListGroupsRequest

from reconciler.testing.handlers.groups import assignment_bytes
from reconciler.testing.state import GroupMember

from .test_offsets import EARLIEST, MAX_TIMESTAMP, NONE, delete_records, list_offsets

DAY = 86_400_000
NOW = 1_760_000_000_000
NON_EMPTY_GROUP = 68


def test_max_timestamp_is_the_largest_timestamp_not_the_newest_record(send, cluster, unique):
    name = unique()
    cluster.create_topic(name)
    cluster.produce(name, 0, [NOW - 10 * DAY, NOW - 5 * DAY, NOW - 8 * DAY])
    leader = cluster.partition(name, 0).leader
    assert list_offsets(send, leader, name, 0, MAX_TIMESTAMP) == (NONE, 1, NOW - 5 * DAY, 0)


def test_max_timestamp_of_an_empty_partition_is_minus_one_without_epoch(send, cluster, unique):
    name = unique()
    cluster.create_topic(name)
    leader = cluster.partition(name, 0).leader
    assert list_offsets(send, leader, name, 0, MAX_TIMESTAMP) == (NONE, -1, -1, -1)


def test_max_timestamp_still_names_the_deleted_record_until_its_segment_goes(send, cluster, unique):
    name = unique()
    cluster.create_topic(name, configs={"retention.ms": "-1"})
    cluster.produce(name, 0, [NOW - 10 * DAY, NOW - 5 * DAY, NOW - 8 * DAY])
    leader = cluster.partition(name, 0).leader
    assert delete_records(send, leader, name, 0, 2) == (NONE, 2)
    assert list_offsets(send, leader, name, 0, MAX_TIMESTAMP) == (NONE, 1, NOW - 5 * DAY, 0)
    assert delete_records(send, leader, name, 0, 3) == (NONE, 3)  # every record deleted
    assert list_offsets(send, leader, name, 0, EARLIEST)[1] == 3
    assert list_offsets(send, leader, name, 0, MAX_TIMESTAMP) == (NONE, 1, NOW - 5 * DAY, 0)
    # The retention check deletes the segments wholly below the log start: the figure goes with
    # them. The active segment stays, and it held every record: so here it is still there.
    cluster.enforce_retention()
    assert list_offsets(send, leader, name, 0, MAX_TIMESTAMP) == (NONE, 1, NOW - 5 * DAY, 0)


def test_max_timestamp_after_retention_deleted_the_segment(send, cluster, unique):
    name = unique()
    cluster.create_topic(name, configs={"segment.bytes": "1048576", "retention.ms": str(7 * DAY)})
    old = [NOW - 30 * DAY] * 11_000  # 100 bytes each: the first segment fills and rolls
    cluster.produce(name, 0, old)
    cluster.produce(name, 0, [NOW - 20 * DAY])
    leader = cluster.partition(name, 0).leader
    assert list_offsets(send, leader, name, 0, MAX_TIMESTAMP)[1:3] == (11_000, NOW - 20 * DAY)
    cluster.enforce_retention(now_ms=NOW)  # every segment is past retention.ms: all go
    assert list_offsets(send, leader, name, 0, MAX_TIMESTAMP) == (NONE, -1, -1, -1)


def test_groups_with_live_members_are_stable_and_described(send, cluster, unique):
    name = unique()
    cluster.create_topic(name, partitions=2)
    live, empty = unique("live"), unique("empty")
    cluster.commit_offsets(live, {(name, 0): 5})
    cluster.commit_offsets(empty, {(name, 1): 3})
    cluster.join_group(live, "m-1", {name: [0, 1]})
    coordinator = cluster.coordinator(live)
    listed = {g.group_id: g for g in send(ListGroupsRequest(version=5, states_filter=[], types_filter=[]), coordinator).groups}
    assert (listed[live].group_state, listed[live].protocol_type, listed[live].group_type) == ("Stable", "consumer", "classic")
    stable_only = send(ListGroupsRequest(version=4, states_filter=["Stable"]), coordinator).groups
    assert empty not in {g.group_id for g in stable_only} and live in {g.group_id for g in stable_only}
    described = send(DescribeGroupsRequest(groups=[live], include_authorized_operations=False), coordinator).groups[0]
    assert (described.group_state, described.protocol_type, described.protocol_data) == ("Stable", "consumer", "range")
    member = described.members[0]
    assert member.member_id == "m-1" and member.member_assignment == assignment_bytes(
        GroupMember("m-1", "consumer-1", "/127.0.0.1", {name: [0, 1]})
    )
    other = cluster.coordinator(empty)
    assert send(DescribeGroupsRequest(groups=[empty]), other).groups[0].group_state == "Empty"
    # Only an Empty group can be deleted; once the last member left it is Empty again.
    assert send(DeleteGroupsRequest(groups_names=[live]), coordinator).results[0].error_code == NON_EMPTY_GROUP
    cluster.leave_group(live, "m-1")
    assert send(DescribeGroupsRequest(groups=[live]), coordinator).groups[0].group_state == "Empty"


def test_a_group_with_members_but_no_commits_is_listed(send, cluster, unique):
    group = unique("fresh")
    cluster.join_group(group, "m-1", {})
    coordinator = cluster.coordinator(group)
    listed = {g.group_id: g.group_state for g in send(ListGroupsRequest(version=4, states_filter=[]), coordinator).groups}
    assert listed[group] == "Stable"
