"""ListOffsets, DeleteRecords and OffsetForLeaderEpoch, including leadership changes."""

from __future__ import annotations

import pytest
from kafka import TopicPartition
from kafka.protocol.admin import DeleteRecordsRequest
from kafka.protocol.consumer import ListOffsetsRequest, OffsetForLeaderEpochRequest

from reconciler.testing import TestCluster

NONE, OFFSET_OUT_OF_RANGE, UNKNOWN_TOPIC, NOT_LEADER, POLICY_VIOLATION = 0, 1, 3, 6, 44
FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH = 74, 75
LATEST, EARLIEST, MAX_TIMESTAMP = -1, -2, -3
T0 = 1_700_000_000_000


def list_offsets(send, broker, topic, partition, timestamp, current_epoch=-1):
    T = ListOffsetsRequest.ListOffsetsTopic
    request = ListOffsetsRequest(
        replica_id=-1,
        isolation_level=0,
        topics=[
            T(
                name=topic,
                partitions=[
                    T.ListOffsetsPartition(partition_index=partition, current_leader_epoch=current_epoch, timestamp=timestamp)
                ],
            )
        ],
    )
    p = send(request, broker).topics[0].partitions[0]
    return p.error_code, p.offset, p.timestamp, p.leader_epoch


def delete_records(send, broker, topic, partition, offset):
    request = DeleteRecordsRequest(topics=[(topic, [(partition, offset)])], timeout_ms=5000)
    p = send(request, broker).topics[0].partitions[0]
    return p.error_code, p.low_watermark


def epoch_end(send, broker, topic, partition, epoch, current_epoch=-1):
    T = OffsetForLeaderEpochRequest.OffsetForLeaderTopic
    request = OffsetForLeaderEpochRequest(
        replica_id=-1,
        topics=[
            T(
                topic=topic,
                partitions=[
                    T.OffsetForLeaderPartition(partition=partition, current_leader_epoch=current_epoch, leader_epoch=epoch)
                ],
            )
        ],
    )
    p = send(request, broker).topics[0].partitions[0]
    return p.error_code, p.leader_epoch, p.end_offset


@pytest.fixture
def seeded(cluster, unique):
    """A 2-replica partition with 10 records at T0, T0+10, ..., T0+90."""
    name = unique("offsets")
    cluster.create_topic(name, partitions=1, replication_factor=2)
    cluster.produce(name, 0, [T0 + 10 * i for i in range(10)])
    p = cluster.partition(name, 0)
    follower = next(r for r in p.replicas if r != p.leader)
    return name, p.leader, follower


# -- ListOffsets -------------------------------------------------------------------------------


def test_latest_and_earliest_carry_timestamp_minus_one_and_leader_epoch(send, seeded):
    name, leader, _ = seeded
    assert list_offsets(send, leader, name, 0, LATEST) == (NONE, 10, -1, 0)
    assert list_offsets(send, leader, name, 0, EARLIEST) == (NONE, 0, -1, 0)


def test_empty_partition_also_carries_the_epoch(send, cluster, unique):
    name = unique()
    cluster.create_topic(name)
    leader = cluster.partition(name, 0).leader
    assert list_offsets(send, leader, name, 0, LATEST) == (NONE, 0, -1, 0)
    assert list_offsets(send, leader, name, 0, EARLIEST) == (NONE, 0, -1, 0)


def test_timestamp_lookup(send, seeded):
    name, leader, _ = seeded
    assert list_offsets(send, leader, name, 0, T0 - 5) == (NONE, 0, T0, 0)  # before every record
    assert list_offsets(send, leader, name, 0, T0 + 15) == (NONE, 2, T0 + 20, 0)  # first ts >= target
    assert list_offsets(send, leader, name, 0, T0 + 90) == (NONE, 9, T0 + 90, 0)
    assert list_offsets(send, leader, name, 0, T0 + 91) == (NONE, -1, -1, -1)  # past every record
    assert list_offsets(send, leader, name, 0, MAX_TIMESTAMP) == (NONE, 9, T0 + 90, 0)


def test_timestamp_lookup_with_unordered_timestamps(send, cluster, unique):
    name = unique()
    cluster.create_topic(name)
    cluster.produce(name, 0, [T0 + 50, T0 + 10, T0 + 30, T0 + 50])
    leader = cluster.partition(name, 0).leader
    assert list_offsets(send, leader, name, 0, T0 + 20)[1] == 0
    assert list_offsets(send, leader, name, 0, MAX_TIMESTAMP)[1:3] == (0, T0 + 50)


def test_current_leader_epoch_fencing_and_follower(send, cluster, seeded):
    name, leader, follower = seeded
    cluster.move_leader(name, 0, to=follower)  # epoch 1
    cluster.move_leader(name, 0, to=leader)  # epoch 2
    assert list_offsets(send, leader, name, 0, LATEST, current_epoch=2)[0] == NONE
    assert list_offsets(send, leader, name, 0, LATEST, current_epoch=1)[0] == FENCED_LEADER_EPOCH
    assert list_offsets(send, leader, name, 0, LATEST, current_epoch=3)[0] == UNKNOWN_LEADER_EPOCH
    assert list_offsets(send, follower, name, 0, LATEST)[0] == NOT_LEADER
    assert list_offsets(send, leader, "no-such-topic", 0, LATEST)[0] == UNKNOWN_TOPIC


def test_earliest_epoch_is_the_earliest_cached_epoch(send, cluster, seeded):
    """Kafka answers EARLIEST with the epoch of the earliest epoch-cache entry (the current epoch
    until leadership changes after records were written)."""
    name, _leader, follower = seeded
    cluster.move_leader(name, 0, to=follower)
    assert list_offsets(send, follower, name, 0, EARLIEST) == (NONE, 0, -1, 0)
    assert list_offsets(send, follower, name, 0, LATEST) == (NONE, 10, -1, 1)
    delete_records(send, follower, name, 0, 10)
    assert list_offsets(send, follower, name, 0, EARLIEST) == (NONE, 10, -1, 1)


def test_admin_client_list_partition_offsets(admin, seeded):
    name, _, _ = seeded
    tp = TopicPartition(name, 0)
    assert admin.list_partition_offsets({tp: LATEST})[tp].offset == 10
    assert admin.list_partition_offsets({tp: T0 + 35})[tp].offset == 4


# -- DeleteRecords -----------------------------------------------------------------------------


def test_delete_records_moves_log_start_and_reports_low_watermark(send, cluster, seeded):
    name, leader, _ = seeded
    assert delete_records(send, leader, name, 0, 4) == (NONE, 4)
    assert delete_records(send, leader, name, 0, 2) == (NONE, 4)  # lower: silent no-op
    assert list_offsets(send, leader, name, 0, EARLIEST)[1] == 4
    assert list_offsets(send, leader, name, 0, T0)[1] == 4  # deleted records are not found
    assert delete_records(send, leader, name, 0, -1) == (NONE, 10)  # -1: the high watermark
    assert cluster.partition(name, 0).log_start_offset == 10


@pytest.mark.parametrize("offset", [-2, 11])
def test_delete_records_out_of_range(send, seeded, offset):
    name, leader, _ = seeded
    assert delete_records(send, leader, name, 0, offset) == (OFFSET_OUT_OF_RANGE, -1)


def test_delete_records_errors_report_low_watermark_minus_one(send, cluster, seeded):
    name, leader, follower = seeded
    assert delete_records(send, follower, name, 0, 1) == (NOT_LEADER, -1)
    assert delete_records(send, leader, "no-such-topic", 0, 1) == (UNKNOWN_TOPIC, -1)
    assert delete_records(send, leader, name, 7, 1) == (UNKNOWN_TOPIC, -1)


@pytest.mark.parametrize("policy,code", [("compact", POLICY_VIOLATION), ("compact,delete", NONE), ("delete", NONE)])
def test_delete_records_needs_delete_in_cleanup_policy(send, cluster, unique, policy, code):
    name = unique()
    cluster.create_topic(name, configs={"cleanup.policy": policy})
    cluster.produce(name, 0, [T0, T0 + 1])
    leader = cluster.partition(name, 0).leader
    assert delete_records(send, leader, name, 0, 1) == (code, 1 if code == NONE else -1)


def test_admin_client_delete_records(admin, cluster, seeded):
    name, _, _ = seeded
    tp = TopicPartition(name, 0)
    assert admin.delete_records({tp: 3})[tp]["low_watermark"] == 3


# -- OffsetForLeaderEpoch ----------------------------------------------------------------------


def test_epoch_end_offsets_follow_the_epoch_history(send, cluster, seeded):
    name, leader, follower = seeded
    cluster.move_leader(name, 0, to=follower)  # epoch 1 starts at 10
    cluster.produce(name, 0, [T0 + 100] * 5)  # 15
    cluster.move_leader(name, 0, to=leader)  # epoch 2 starts at 15
    assert cluster.partition(name, 0).epoch_history == ((0, 0), (1, 10), (2, 15))
    assert epoch_end(send, leader, name, 0, 0) == (NONE, 0, 10)
    assert epoch_end(send, leader, name, 0, 1) == (NONE, 1, 15)
    assert epoch_end(send, leader, name, 0, 2) == (NONE, 2, 15)  # current: the log end offset
    assert epoch_end(send, leader, name, 0, 3) == (NONE, -1, -1)  # above the current: unknown
    assert epoch_end(send, leader, name, 0, -1) == (NONE, -1, -1)


def test_epoch_gap_answers_floor_epoch(send, cluster, seeded):
    name, _leader, _ = seeded
    cluster.unclean_election(name, 0, truncate_to=10)  # epochs 0 -> 2
    new_leader = cluster.partition(name, 0).leader
    assert epoch_end(send, new_leader, name, 0, 1) == (NONE, 0, 10)


def test_epoch_below_every_entry_answers_requested_epoch(send, cluster, seeded):
    name, leader, follower = seeded
    cluster.move_leader(name, 0, to=follower)  # (0,0), (1,10)
    delete_records(send, follower, name, 0, 10)  # cache becomes (1,10)
    cluster.move_leader(name, 0, to=leader)  # (1,10), (2,10) -> (2,10)
    cluster.produce(name, 0, [T0 + 200])
    cluster.move_leader(name, 0, to=follower)  # (2,10), (3,11)
    assert cluster.partition(name, 0).epoch_history == ((2, 10), (3, 11))
    assert epoch_end(send, follower, name, 0, 1) == (NONE, 1, 10)


def test_fencing_and_routing(send, cluster, seeded):
    name, leader, follower = seeded
    cluster.move_leader(name, 0, to=follower)
    assert epoch_end(send, follower, name, 0, 0, current_epoch=1)[0] == NONE
    assert epoch_end(send, follower, name, 0, 0, current_epoch=0)[0] == FENCED_LEADER_EPOCH
    assert epoch_end(send, follower, name, 0, 0, current_epoch=2)[0] == UNKNOWN_LEADER_EPOCH
    assert epoch_end(send, leader, name, 0, 0)[0] == NOT_LEADER
    assert epoch_end(send, leader, "no-such-topic", 0, 0)[0] == UNKNOWN_TOPIC


def test_clean_leader_change_keeps_planned_epoch_end(send, cluster, seeded):
    name, _leader, follower = seeded
    planned_epoch, planned_hw = cluster.partition(name, 0).leader_epoch, 10
    cluster.move_leader(name, 0, to=follower)
    assert epoch_end(send, follower, name, 0, planned_epoch)[2] >= planned_hw


def test_unclean_election_truncates_and_reveals_divergence(send, cluster, seeded):
    name, _leader, follower = seeded
    cluster.produce(name, 0, [T0 + 500] * 40)  # HW 50 in epoch 0
    cluster.unclean_election(name, 0, truncate_to=20, to=follower)
    p = cluster.partition(name, 0)
    assert (p.leader, p.leader_epoch, p.high_watermark) == (follower, 2, 20)
    assert p.epoch_history == ((0, 0), (2, 20))
    assert epoch_end(send, follower, name, 0, 0) == (NONE, 0, 20)


def test_stopped_follower_then_leader_loss_gives_unclean_election_on_restart(unique):
    """The scenario seen on a real 4.0 cluster: RF 2, follower stopped, 50 records with acks=1,
    leader stopped, old follower restarted -> epoch +2 and the planned epoch ends 50 lower."""
    with TestCluster(brokers=3, broker_configs={"unclean.leader.election.enable": "true"}) as c:
        c.create_topic("u", partitions=1, replication_factor=2)
        c.produce("u", 0, [T0] * 100)
        before = c.partition("u", 0)
        follower = next(r for r in before.replicas if r != before.leader)
        c.stop_broker(follower)
        assert c.partition("u", 0).leader_epoch == before.leader_epoch  # ISR shrink: no bump
        c.produce("u", 0, [T0] * 50)
        c.stop_broker(before.leader)
        assert c.partition("u", 0).leader == -1
        c.start_broker(follower)
        after = c.partition("u", 0)
        assert after.leader == follower and after.leader_epoch == before.leader_epoch + 2
        assert after.high_watermark == 100
        assert after.epoch_history[-1] == (before.leader_epoch + 2, 100)
        c.start_broker(before.leader)
        assert set(c.partition("u", 0).isr) == {follower, before.leader}
