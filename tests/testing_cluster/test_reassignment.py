"""Reassignments (KIP-455) and leader elections, conformant to Kafka 4.0.

Sources: KAFKA_SEMANTICS.md "Seen on a real Apache Kafka 4.0 cluster: reassignment and retention"
(cited as "seen"), and apache/kafka 4.0: metadata/.../controller/ReplicationControlManager.java
(alterPartitionReassignments, cancelPartitionReassignment, changePartitionReassignment,
listPartitionReassignments, electLeader, validateManualPartitionAssignment),
PartitionReassignmentReplicas.java, PartitionReassignmentRevert.java, PartitionChangeBuilder.java,
core/.../server/ControllerApis.scala (authorization), clients/.../requests/*Request.java
(getErrorResponse), clients/.../message/{AlterPartitionReassignments,ListPartitionReassignments,
ElectLeaders}{Request,Response}.json.
"""

from __future__ import annotations

import time

import pytest
from kafka import KafkaAdminClient
from kafka.protocol.admin import (
    AlterPartitionReassignmentsRequest,
    DescribeClusterRequest,
    DescribeLogDirsRequest,
    ElectLeadersRequest,
    IncrementalAlterConfigsRequest,
    ListPartitionReassignmentsRequest,
)
from kafka.protocol.metadata import ApiVersionsRequest, MetadataRequest

from reconciler.testing import KafkaApiError, ReassignmentView, TestCluster

NONE, UNKNOWN_TOPIC_OR_PARTITION, CLUSTER_DENIED, INVALID_REPLICA_ASSIGNMENT, INVALID_REQUEST = 0, 3, 31, 39, 42
PREFERRED_LEADER_NOT_AVAILABLE, ELECTION_NOT_NEEDED, NO_REASSIGNMENT_IN_PROGRESS = 80, 84, 85
PREFERRED, UNCLEAN = 0, 1


@pytest.fixture
def rig():
    """A fresh three-broker cluster (reassignments change cluster-wide state) and send(request, broker)."""
    with (
        TestCluster(brokers=3) as cluster,
        KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers, request_timeout_ms=10000) as admin,
    ):

        def send(request, broker=1):
            return admin._manager.run(admin._manager.send, request, broker)

        yield cluster, send


def alter(send, *topics, broker=1):
    """topics: (name, [(partition, replicas or None)]) -> the whole response."""
    return send(AlterPartitionReassignmentsRequest(timeout_ms=30000, topics=list(topics)), broker)


def answers(response):
    """[(topic, [(partition, error, message)])] in response order."""
    return [(t.name, [(p.partition_index, p.error_code, p.error_message) for p in t.partitions]) for t in response.responses]


def listed(send, topics=None):
    response = send(ListPartitionReassignmentsRequest(timeout_ms=30000, topics=topics))
    assert (response.error_code, response.error_message) == (NONE, None)
    return {
        (t.name, p.partition_index): (p.replicas, p.adding_replicas, p.removing_replicas)
        for t in response.topics
        for p in t.partitions
    }


def metadata(send, name):
    """(replicas, isr, leader, epoch, offline) of partition 0, as Metadata v12 reports it."""
    response = send(
        MetadataRequest(version=12, topics=[MetadataRequest.MetadataRequestTopic(name=name)], allow_auto_topic_creation=False)
    )
    [p] = [p for t in response.topics for p in t.partitions if p.partition_index == 0]
    return p.replica_nodes, p.isr_nodes, p.leader_id, p.leader_epoch, p.offline_replicas


def elect(send, election_type, topics, version=2, broker=1):
    response = send(
        ElectLeadersRequest(version=version, election_type=election_type, topic_partitions=topics, timeout_ms=30000), broker
    )
    return response, [
        (r.topic, [(p.partition_id, p.error_code, p.error_message) for p in r.partition_result])
        for r in response.replica_election_results
    ]


def log_dir(send, broker, name):
    """(partition_size, offset_lag, is_future_key) of partition 0 on `broker`, or None."""
    T = DescribeLogDirsRequest.DescribableLogDirTopic
    [result] = send(DescribeLogDirsRequest(version=4, topics=[T(topic=name, partitions=[0])]), broker).results
    found = [(p.partition_size, p.offset_lag, p.is_future_key) for t in result.topics for p in t.partitions]
    return found[0] if found else None


def set_broker_config(send, broker, key, value, op=0):
    request = IncrementalAlterConfigsRequest(resources=[(4, str(broker), [(key, op, value)])], validate_only=False)
    [result] = send(request, broker).responses
    assert result.error_code == NONE, result


# -- versions and answer shapes ------------------------------------------------------------------


def test_versions_offered_are_kafka_4_0s(rig):
    """seen: AlterPartitionReassignments v0 only, ListPartitionReassignments v0 only, ElectLeaders v0-2."""
    _, send = rig
    offered = {k.api_key: (k.min_version, k.max_version) for k in send(ApiVersionsRequest(version=3)).api_keys}
    assert (offered[45], offered[46], offered[43]) == ((0, 0), (0, 0), (0, 2))


def test_alter_answers_every_entry_in_request_order(rig):
    """seen: top-level NONE with a null message; a topic listed twice gets two entries; one
    partition twice: both NONE, applied in order, the last wins. Every entry is checked against
    the partitions as they were before the request (alterPartitionReassignments collects the
    records and commits them together), so a cancel of a reassignment the same request starts
    finds none in progress."""
    cluster, send = rig
    cluster.create_topic("a", partitions=2, replication_factor=1)
    cluster.create_topic("b")
    cluster.stall_reassignments()
    response = alter(send, ("b", [(0, [1, 2])]), ("a", [(1, [1, 2]), (1, [3, 1])]), ("b", [(0, None)]))
    assert (response.error_code, response.error_message) == (NONE, None)
    assert answers(response) == [
        ("b", [(0, NONE, None)]),
        ("a", [(1, NONE, None), (1, NONE, None)]),
        ("b", [(0, NO_REASSIGNMENT_IN_PROGRESS, None)]),
    ]
    assert cluster.reassignments()[("a", 1)].replicas[:2] == (3, 1)


@pytest.mark.parametrize(
    "replicas,message",
    [
        ([1, 2, 1], "The manual partition assignment includes the broker 1 more than once."),
        ([1, 99], "The manual partition assignment includes broker 99, but no such broker is registered."),
        ([], "The manual partition assignment includes an empty replica list."),
    ],
)
def test_invalid_targets_are_invalid_replica_assignment(rig, replicas, message):
    """seen; validateManualPartitionAssignment walks the brokers sorted."""
    cluster, send = rig
    cluster.create_topic("t")
    assert answers(alter(send, ("t", [(0, replicas)]))) == [("t", [(0, INVALID_REPLICA_ASSIGNMENT, message)])]
    assert cluster.replicas("t") == {0: [1]} and cluster.reassignments() == {}


def test_unknown_topic_or_partition(rig):
    """seen: "Unable to find partition t:5." / "Unable to find a topic named x."; the others apply."""
    cluster, send = rig
    cluster.create_topic("t")
    cluster.stall_reassignments()
    got = answers(alter(send, ("t", [(5, [1]), (0, [1, 2])]), ("x", [(0, [1])])))
    assert got == [
        ("t", [(5, UNKNOWN_TOPIC_OR_PARTITION, "Unable to find partition t:5."), (0, NONE, None)]),
        ("x", [(0, UNKNOWN_TOPIC_OR_PARTITION, "Unable to find a topic named x.")]),
    ]
    assert cluster.reassignments() == {("t", 0): ReassignmentView((1, 2), (2,), ())}


def test_the_helper_refuses_like_the_wire(rig):
    cluster, _ = rig
    cluster.create_topic("t")
    with pytest.raises(KafkaApiError) as refused:
        cluster.reassign("t", {0: [1, 1]})
    assert refused.value.code == INVALID_REPLICA_ASSIGNMENT


# -- in progress -----------------------------------------------------------------------------------


def test_while_in_progress_metadata_shows_target_then_removing_and_the_old_isr(rig):
    """seen: move [2,3] -> [1,3]: replicas [1,3,2], adding [1], removing [2]; ISR is the old ISR;
    leader and epoch do not change while in progress."""
    cluster, send = rig
    cluster.create_topic("t", replication_factor=2)
    assert cluster.replicas("t") == {0: [1, 2]}
    cluster.reassign("t", {0: [2, 3]})  # an empty partition: in sync by the next read
    assert metadata(send, "t")[:4] == ([2, 3], [2, 3], 2, 1)
    cluster.stall_reassignments()
    assert answers(alter(send, ("t", [(0, [1, 3])]))) == [("t", [(0, NONE, None)])]
    assert metadata(send, "t") == ([1, 3, 2], [2, 3], 2, 1, [])
    assert listed(send) == {("t", 0): ([1, 3, 2], [1], [2])}


def test_list_leaves_out_idle_and_unknown_partitions(rig):
    """seen: only partitions in progress; topics null = all; unknown ones silently left out."""
    cluster, send = rig
    cluster.create_topic("busy", partitions=2)
    cluster.create_topic("idle")
    cluster.stall_reassignments()
    [current] = cluster.replicas("busy")[1]
    added = current % 3 + 1
    cluster.reassign("busy", {1: [current, added]})
    expected: dict[tuple[str, int], tuple[list[int], list[int], list[int]]] = {("busy", 1): ([current, added], [added], [])}
    assert listed(send) == expected
    assert listed(send, [("busy", [0, 1, 7]), ("idle", [0]), ("nope", [0])]) == expected
    assert listed(send, [("idle", [0])]) == {}


def test_a_new_target_replaces_the_running_one(rig):
    """seen: original [1], [1,2,3] in progress, then [1,2]: replicas [1,2,3], adding [2,3],
    removing [3]; then [3,2]: replicas [3,2,1], adding [2,3], removing [1]. Leader and epoch
    unchanged (PartitionReassignmentReplicas keeps the earlier adding list)."""
    cluster, send = rig
    cluster.create_topic("t")
    cluster.stall_reassignments()
    cluster.reassign("t", {0: [1, 2, 3]})
    assert answers(alter(send, ("t", [(0, [1, 2])]))) == [("t", [(0, NONE, None)])]
    assert listed(send) == {("t", 0): ([1, 2, 3], [2, 3], [3])}
    cluster.reassign("t", {0: [3, 2]})
    assert listed(send) == {("t", 0): ([3, 2, 1], [2, 3], [1])}
    view = cluster.partition("t", 0)
    assert (view.leader, view.leader_epoch, view.isr) == (1, 0, (1,))
    cluster.stall_reassignments(False)
    done = cluster.partition("t", 0)
    # Completion drops the leader: leadership goes to the first target replica in the ISR.
    assert (done.replicas, done.leader, done.leader_epoch, done.adding_replicas) == ((3, 2), 3, 1, ())


def test_adding_replicas_join_the_isr_as_they_catch_up(rig):
    """seen: adding replicas join the ISR as they catch up, before the reassignment is done."""
    cluster, send = rig
    cluster.create_topic("t", configs={"follower.replication.throttled.replicas": "0:3"})
    cluster.produce_many({("t", 0): 100}, value_size=100)
    set_broker_config(send, 3, "follower.replication.throttled.rate", "1000")
    cluster.reassign("t", {0: [1, 2, 3]})
    replicas, isr, leader, epoch, _ = metadata(send, "t")
    assert (replicas, isr, leader, epoch) == ([1, 2, 3], [1, 2], 1, 0)
    assert listed(send) == {("t", 0): ([1, 2, 3], [2, 3], [])}
    cluster.tick(10)  # 10,000 bytes at 1,000 bytes/s
    assert listed(send) == {} and metadata(send, "t")[:4] == ([1, 2, 3], [1, 2, 3], 1, 0)


# -- completion ------------------------------------------------------------------------------------


def test_additions_only_keep_leader_and_epoch(rig):
    """seen: [1] -> [2,3,1]: leader stays 1, epoch 0, though 2 is now the preferred leader."""
    cluster, send = rig
    cluster.create_topic("t")
    cluster.produce_many({("t", 0): 10})
    cluster.reassign("t", {0: [2, 3, 1]})
    assert metadata(send, "t") == ([2, 3, 1], [1, 2, 3], 1, 0, [])
    assert cluster.reassignments() == {}


def test_any_removal_bumps_the_epoch_and_dropping_the_leader_moves_leadership(rig):
    """seen: dropping a follower: same leader, epoch+1; dropping the leader: the first target
    replica in the ISR leads, epoch+1 (PartitionChangeBuilder.triggerLeaderEpochBump...)."""
    cluster, send = rig
    cluster.create_topic("t", replication_factor=3)
    first = metadata(send, "t")
    assert first[:4] == ([1, 2, 3], [1, 2, 3], 1, 0)
    cluster.reassign("t", {0: [1, 2]})
    assert metadata(send, "t")[:4] == ([1, 2], [1, 2], 1, 1)
    cluster.reassign("t", {0: [2]})
    assert metadata(send, "t")[:4] == ([2], [2], 2, 2)


def test_reorder_only_completes_at_once_without_a_leader_change(rig):
    """seen: [1,2,3] -> [3,2,1] completes at once, no leader or epoch change."""
    cluster, send = rig
    cluster.create_topic("t", replication_factor=3)
    cluster.stall_reassignments()  # nothing to copy: it does not wait for catch-up
    assert answers(alter(send, ("t", [(0, [3, 2, 1])]))) == [("t", [(0, NONE, None)])]
    assert metadata(send, "t")[:4] == ([3, 2, 1], [1, 2, 3], 1, 0) and listed(send) == {}


def test_a_stopped_brokers_replica_stays_adding_until_it_is_back(rig):
    """seen: a registered but stopped broker is accepted, stays in adding_replicas, and the
    reassignment completes once it is back."""
    cluster, send = rig
    cluster.create_topic("t")
    cluster.produce_many({("t", 0): 5})
    cluster.stop_broker(3)
    assert answers(alter(send, ("t", [(0, [1, 3])]))) == [("t", [(0, NONE, None)])]
    cluster.tick(60)
    assert listed(send) == {("t", 0): ([1, 3], [3], [])}
    assert metadata(send, "t")[4] == [3]  # offline
    cluster.start_broker(3)
    assert listed(send) == {} and metadata(send, "t") == ([1, 3], [1, 3], 1, 0, [])


# -- cancel ----------------------------------------------------------------------------------------


def test_cancel_when_idle_is_no_reassignment_in_progress(rig):
    """seen: NO_REASSIGNMENT_IN_PROGRESS (85) with a null message."""
    cluster, send = rig
    cluster.create_topic("t")
    assert answers(alter(send, ("t", [(0, None)]))) == [("t", [(0, NO_REASSIGNMENT_IN_PROGRESS, None)])]


def test_cancel_reverts_at_once_and_bumps_the_epoch(rig):
    """seen: [1] -> [1,2,3] in progress, cancel: replicas [1] at once, leader epoch + 1
    (PartitionReassignmentRevert: the adding replicas go, the removing ones stay)."""
    cluster, send = rig
    cluster.create_topic("t")
    cluster.produce_many({("t", 0): 5})
    cluster.stall_reassignments()
    cluster.reassign("t", {0: [1, 2, 3]})
    assert answers(alter(send, ("t", [(0, None)]))) == [("t", [(0, NONE, None)])]
    assert metadata(send, "t") == ([1], [1], 1, 1, []) and listed(send) == {}
    assert log_dir(send, 2, "t") is None  # the new replica's log is gone


def test_cancel_of_a_move_keeps_the_replicas_being_removed(rig):
    cluster, send = rig
    cluster.create_topic("t", replication_factor=2)
    cluster.stall_reassignments()
    cluster.reassign("t", {0: [3, 2]})
    assert listed(send) == {("t", 0): ([3, 2, 1], [3], [1])}
    cluster.reassign("t", {0: None})
    assert metadata(send, "t")[:4] == ([2, 1], [1, 2], 1, 1)


# -- catch-up over time ----------------------------------------------------------------------------


def test_a_new_replicas_log_dir_size_follows_its_copy(rig):
    """A replica being added is a new replica, not a future log (is_future_key false); its
    partition_size is what it has copied, and equals the others' once in sync (seen: same on
    every replica)."""
    cluster, send = rig
    cluster.create_topic("t")
    cluster.produce_many({("t", 0): 1000}, value_size=100)  # 100,000 bytes
    cluster.set_replication_rate(10_000)
    cluster.reassign("t", {0: [1, 2]})
    size, lag, future = log_dir(send, 2, "t")
    assert size < 1000 and (lag, future) == (0, False)  # only the wall time since the request
    cluster.tick(4)
    size = log_dir(send, 2, "t")[0]
    assert 40_000 <= size < 50_000  # 4 s at 10,000 bytes/s, plus the wall time between reads
    assert listed(send) == {("t", 0): ([1, 2], [2], [])}
    cluster.tick(6)
    assert log_dir(send, 2, "t") == log_dir(send, 1, "t") == (100_000, 0, False)
    assert listed(send) == {}


def test_a_copy_follows_the_leaders_retention(rig):
    """A new replica copies from the leader's log start, so segments retention deletes meanwhile
    need no copying; the copying replica runs no retention check of its own."""
    cluster, send = rig
    cluster.create_topic("t", configs={"segment.bytes": "1000", "retention.bytes": "5000"})
    now = int(time.time() * 1000)
    cluster.produce_many({("t", 0): 100}, timestamp_ms=now, value_size=100)  # 10 segments of 1,000 bytes
    cluster.set_replication_rate(1000)
    cluster.reassign("t", {0: [1, 2]})
    cluster.tick(2)
    assert cluster.enforce_retention() == {("t", 0): (0, 50)}
    cluster.tick(3)
    assert cluster.reassignments() == {}
    assert log_dir(send, 2, "t") == log_dir(send, 1, "t") == (5000, 0, False)


def test_stalled_reassignments_stay_in_progress_until_released(rig):
    cluster, send = rig
    cluster.create_topic("t")
    cluster.stall_reassignments()
    cluster.reassign("t", {0: [1, 2]})
    cluster.tick(3600)
    assert listed(send) == {("t", 0): ([1, 2], [2], [])}
    cluster.stall_reassignments(False)
    assert listed(send) == {}


def test_throttled_copies_share_the_leaders_rate(rig):
    """Replicas listed in leader.replication.throttled.replicas (here "*") share the leader
    broker's leader.replication.throttled.rate; an unthrottled topic copies at once."""
    cluster, send = rig
    for name in ("slow1", "slow2"):
        cluster.create_topic(name, configs={"leader.replication.throttled.replicas": "*"})
    cluster.create_topic("fast")
    for name in ("slow1", "slow2", "fast"):
        cluster.reassign(name, {0: [1]})  # every leader on broker 1
        cluster.produce_many({(name, 0): 100}, value_size=100)  # 10,000 bytes each
    set_broker_config(send, 1, "leader.replication.throttled.rate", "1000")
    for name in ("slow1", "slow2", "fast"):
        cluster.reassign(name, {0: [1, 2]})
    cluster.tick(10)  # 500 bytes/s each: half copied
    assert set(cluster.reassignments()) == {("slow1", 0), ("slow2", 0)}
    assert all(4_500 <= log_dir(send, 2, n)[0] < 6_000 for n in ("slow1", "slow2"))
    cluster.tick(10)
    assert cluster.reassignments() == {}


# -- ElectLeaders ----------------------------------------------------------------------------------


def test_elect_preferred(rig):
    """seen: preferred already leads -> ELECTION_NOT_NEEDED with Errors' message; preferred down
    -> PREFERRED_LEADER_NOT_AVAILABLE; unknown topic / partition messages; done -> NONE, the
    first replica leads, epoch + 1."""
    cluster, send = rig
    cluster.create_topic("t", partitions=2, replication_factor=3)
    assert cluster.replicas("t") == {0: [1, 2, 3], 1: [2, 3, 1]}
    cluster.move_leader("t", 0, to=3)
    cluster.move_leader("t", 1, to=3)
    cluster.stop_broker(2)
    response, got = elect(send, PREFERRED, [("t", [0, 1, 9]), ("x", [0])])
    assert response.error_code == NONE
    assert got == [
        (
            "t",
            [
                (0, NONE, None),
                (1, PREFERRED_LEADER_NOT_AVAILABLE, "The preferred leader was not available."),
                (9, UNKNOWN_TOPIC_OR_PARTITION, "No such partition as t-9"),
            ],
        ),
        ("x", [(0, UNKNOWN_TOPIC_OR_PARTITION, "No such topic as x")]),
    ]
    view = cluster.partition("t", 0)
    assert (view.leader, view.leader_epoch) == (view.replicas[0], 2)
    _, again = elect(send, PREFERRED, [("t", [0])])
    assert again == [("t", [(0, ELECTION_NOT_NEEDED, "Leader election not needed for topic partition.")])]


def test_elect_all_partitions_leaves_out_those_needing_none(rig):
    """seen: topic_partitions null = all; partitions needing no election are omitted."""
    cluster, send = rig
    cluster.create_topic("t", partitions=3, replication_factor=2)
    cluster.move_leader("t", 1, to=cluster.replicas("t")[1][1])
    _, got = elect(send, PREFERRED, None)
    assert got == [("t", [(1, NONE, None)])]


def test_unclean_with_a_live_leader_is_not_needed(rig):
    """seen: UNCLEAN with a live leader -> ELECTION_NOT_NEEDED."""
    cluster, send = rig
    cluster.create_topic("t", replication_factor=2)
    _, got = elect(send, UNCLEAN, [("t", [0])])
    assert got == [("t", [(0, ELECTION_NOT_NEEDED, "Leader election not needed for topic partition.")])]


def test_unclean_election_of_a_leaderless_partition(rig):
    """electAnyLeader with Election.UNCLEAN: a live replica out of the ISR leads, records after
    its log end are lost, epoch + 1."""
    cluster, send = rig
    cluster.create_topic("t", replication_factor=2)
    cluster.produce_many({("t", 0): 10})
    cluster.stop_broker(2)
    cluster.produce_many({("t", 0): 5})
    cluster.stop_broker(1)
    cluster.start_broker(2)  # unclean.leader.election.enable is false: stays leaderless
    assert cluster.partition("t", 0).leader == -1
    _, got = elect(send, UNCLEAN, [("t", [0])], version=1, broker=2)
    assert got == [("t", [(0, NONE, None)])]
    view = cluster.partition("t", 0)
    assert (view.leader, view.high_watermark) == (2, 10)


def test_elect_v0_is_preferred_and_an_unknown_type_is_refused(rig):
    cluster, send = rig
    cluster.create_topic("t", replication_factor=2)
    cluster.move_leader("t", 0, to=2)
    _, got = elect(send, UNCLEAN, [("t", [0])], version=0)
    assert got == [("t", [(0, NONE, None)])] and cluster.partition("t", 0).leader == 1
    response, got = elect(send, 7, [("t", [0])])
    assert response.error_code == INVALID_REQUEST
    assert got == [("t", [(0, INVALID_REQUEST, "Unknown election type 7")])]


# -- racks -----------------------------------------------------------------------------------------


def test_racks_in_metadata_and_describe_cluster():
    with (
        TestCluster(brokers=3, racks=["a", "b", None]) as cluster,
        KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers) as admin,
    ):

        def racks(request):
            response = admin._manager.run(admin._manager.send, request, 1)
            return {b.node_id if hasattr(b, "node_id") else b.broker_id: b.rack for b in response.brokers}

        meta = MetadataRequest(version=12, topics=None, allow_auto_topic_creation=False)
        described = DescribeClusterRequest(include_cluster_authorized_operations=False, endpoint_type=1)
        assert racks(meta) == racks(described) == {1: "a", 2: "b", 3: None}
        cluster.set_broker_rack(3, "c")
        assert racks(meta)[3] == racks(described)[3] == "c"


def test_racks_given_per_broker_id():
    with TestCluster(brokers=2, racks={2: "x"}) as cluster:
        assert cluster._state.brokers[2].rack == "x" and cluster._state.brokers[1].rack is None
    with pytest.raises(ValueError):
        TestCluster(brokers=2, racks=["a"])


# -- authorization ---------------------------------------------------------------------------------


def test_cluster_alter_and_describe_are_needed():
    """ControllerApis: ALTER on CLUSTER for AlterPartitionReassignments and ElectLeaders, DESCRIBE
    on CLUSTER for ListPartitionReassignments; refused requests carry the error on every entry
    asked for and at the top level (getErrorResponse)."""
    users = {"admin": "pw", "alice": "pw"}
    with (
        TestCluster(brokers=1, sasl_users=users, super_users={"admin"}) as cluster,
        KafkaAdminClient(
            bootstrap_servers=cluster.bootstrap_servers,
            security_protocol="SASL_PLAINTEXT",
            sasl_mechanism="PLAIN",
            sasl_plain_username="alice",
            sasl_plain_password="pw",
        ) as admin,
    ):

        def send(request, broker=1):
            return admin._manager.run(admin._manager.send, request, broker)

        cluster.create_topic("t")
        response = alter(send, ("t", [(0, [1])]))
        assert response.error_code == CLUSTER_DENIED
        assert [(c, m is not None) for _, parts in answers(response) for _, c, m in parts] == [(CLUSTER_DENIED, True)]
        listing = send(ListPartitionReassignmentsRequest(timeout_ms=1000, topics=[("t", [0])]))
        assert listing.error_code == CLUSTER_DENIED and [t.name for t in listing.topics] == ["t"]
        response, got = elect(send, PREFERRED, [("t", [0])])
        assert response.error_code == CLUSTER_DENIED and got[0][1][0][1] == CLUSTER_DENIED
        cluster.allow("alice", "cluster", "kafka-cluster", "DESCRIBE")
        assert listed(send) == {}
        assert alter(send, ("t", [(0, None)])).error_code == CLUSTER_DENIED
        cluster.allow("alice", "cluster", "kafka-cluster", "ALTER")
        assert answers(alter(send, ("t", [(0, None)]))) == [("t", [(0, NO_REASSIGNMENT_IN_PROGRESS, None)])]
