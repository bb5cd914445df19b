"""What a broker error means is decided once, in the adapter, from Kafka's code (an ErrorKind);
apply decides by the kind. Each decision shown on the test cluster, by the requests it leads to."""

from __future__ import annotations

import pytest
from kafka.protocol.metadata import MetadataResponse

from reconciler.apply.executor import apply_plan
from reconciler.errors import ClusterError
from reconciler.kafka import errors as codes
from reconciler.kafka import metadata
from reconciler.kafka.codec import MetadataAnswer, decode_metadata
from reconciler.models.result import Status
from reconciler.plan.planner import plan
from reconciler.ports import ErrorKind
from tests.kafka.helpers import api_counts

METADATA, LIST_OFFSETS, DELETE_RECORDS = 3, 2, 21
OFFSET_OUT_OF_RANGE, UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE, NOT_LEADER_OR_FOLLOWER = 1, 3, 5, 6
REQUEST_TIMED_OUT, TOPIC_AUTHORIZATION_FAILED, GROUP_AUTHORIZATION_FAILED = 7, 29, 30
INVALID_CONFIG, NOT_CONTROLLER, POLICY_VIOLATION, FENCED_LEADER_EPOCH = 40, 41, 44, 74
UNKNOWN_LEADER_EPOCH, THROTTLING_QUOTA_EXCEEDED = 75, 89
REPLICA_NOT_AVAILABLE, INVALID_TOPIC_EXCEPTION = 9, 17
CUT = "kind: Topic\nname: cut\npartitions: 1\nreplication_factor: 1\ntruncate: [{keep_last: 10}]\n"
# What a truncation's requests are told apart by (connections' ApiVersions left out).
TRUNCATION_APIS = ("Metadata", "ListOffsets", "OffsetForLeaderEpoch", "DeleteRecords")


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        (REQUEST_TIMED_OUT, ErrorKind.TIMED_OUT),
        (NOT_LEADER_OR_FOLLOWER, ErrorKind.LEADER_MOVED),
        (LEADER_NOT_AVAILABLE, ErrorKind.LEADER_MOVED),
        (FENCED_LEADER_EPOCH, ErrorKind.LEADER_MOVED),
        (UNKNOWN_LEADER_EPOCH, ErrorKind.LEADER_MOVED),
        (TOPIC_AUTHORIZATION_FAILED, ErrorKind.NOT_AUTHORISED),
        (GROUP_AUTHORIZATION_FAILED, ErrorKind.NOT_AUTHORISED),
        (NOT_CONTROLLER, ErrorKind.RETRIABLE),
        (THROTTLING_QUOTA_EXCEEDED, ErrorKind.RETRIABLE),
        (UNKNOWN_TOPIC_OR_PARTITION, ErrorKind.RETRIABLE),
        (POLICY_VIOLATION, ErrorKind.REFUSED),
        (INVALID_CONFIG, ErrorKind.REFUSED),
        (OFFSET_OUT_OF_RANGE, ErrorKind.REFUSED),
    ],
)
def test_each_code_has_one_kind(code, kind):
    error = codes.broker_error(code, "said the broker")
    assert (error.code, error.kind, error.retriable) == (code, kind, kind not in (ErrorKind.REFUSED, ErrorKind.NOT_AUTHORISED))


def test_names_are_kafkas_and_a_lost_answer_is_a_timeout():
    assert codes.broker_error(NOT_LEADER_OR_FOLLOWER).name == "NOT_LEADER_OR_FOLLOWER"
    assert codes.answer_error(codes.NONE) is None
    lost = codes.unanswered("broker 1 left cut-0 out of its answer")
    assert (lost.code, lost.kind) == (codes.NO_ANSWER, ErrorKind.TIMED_OUT)


def truncation_requests(test_cluster, kafka, desired_for, inject) -> tuple[Status, str, list[str]]:
    """Plan a truncation of cut-0 to offset 40, inject a DeleteRecords fault, apply: the outcome
    and the requests from the first DeleteRecords on."""
    test_cluster.create_topic("cut", partitions=1)
    test_cluster.produce_many({("cut", 0): 50})
    desired = desired_for(CUT)
    made = plan(desired, kafka.observe_desired(desired))
    inject()
    [outcome] = apply_plan(made, kafka, desired).outcomes
    apis = [r.api_name for r in test_cluster.request_log if r.api_name in TRUNCATION_APIS]
    [partition] = outcome.partitions
    return partition.status, partition.message, apis[apis.index("DeleteRecords") :]


def test_timed_out_is_read_back_then_sent_again_fenced(test_cluster, kafka, desired_for):
    status, _, requests = truncation_requests(
        test_cluster, kafka, desired_for, lambda: test_cluster.inject_error(DELETE_RECORDS, REQUEST_TIMED_OUT, times=1)
    )
    assert status is Status.APPLIED
    # The log start did not move, so the deletion is sent again, behind a new epoch check.
    assert requests == ["DeleteRecords", "Metadata", "ListOffsets", "Metadata", "OffsetForLeaderEpoch", "DeleteRecords"]
    assert test_cluster.partition("cut", 0).log_start_offset == 40


def test_leader_moved_is_sent_again_after_a_metadata_refresh(test_cluster, kafka, desired_for):
    status, _, requests = truncation_requests(
        test_cluster, kafka, desired_for, lambda: test_cluster.inject_error(DELETE_RECORDS, NOT_LEADER_OR_FOLLOWER, times=1)
    )
    assert status is Status.APPLIED
    assert requests == ["DeleteRecords", "Metadata", "OffsetForLeaderEpoch", "DeleteRecords"]


def test_not_authorised_is_not_sent_again(test_cluster, kafka, desired_for):
    status, message, requests = truncation_requests(
        test_cluster,
        kafka,
        desired_for,
        lambda: test_cluster.inject_error(DELETE_RECORDS, TOPIC_AUTHORIZATION_FAILED, times=None),
    )
    assert status is Status.FAILED and "TOPIC_AUTHORIZATION_FAILED(29)" in message
    assert requests == ["DeleteRecords"]
    assert test_cluster.partition("cut", 0).log_start_offset == 0


def test_a_refusal_is_not_sent_again(test_cluster, kafka, desired_for):
    status, message, requests = truncation_requests(
        test_cluster, kafka, desired_for, lambda: test_cluster.inject_error(DELETE_RECORDS, POLICY_VIOLATION, times=None)
    )
    assert status is Status.FAILED and "POLICY_VIOLATION(44)" in message
    assert requests == ["DeleteRecords"]


def test_metadata_not_authorised_is_an_error_at_once_not_an_absent_topic(test_cluster, kafka):
    test_cluster.create_topic("secret")
    test_cluster.clear_request_log()
    test_cluster.inject_error(METADATA, TOPIC_AUTHORIZATION_FAILED, times=None)
    with pytest.raises(ClusterError, match="TOPIC_AUTHORIZATION_FAILED"):
        kafka.observe_topics(["secret"])
    assert api_counts(test_cluster)["Metadata"] == 1


def metadata_answer(*topics: tuple[str, int, list[int]]) -> MetadataAnswer:
    """A Metadata answer: (topic, its error, its partitions' errors) with broker 1 leading each partition
    (encoded by kafka-python, read by the adapter's codec)."""
    T = MetadataResponse.MetadataResponseTopic
    P = T.MetadataResponsePartition
    return decode_metadata(
        MetadataResponse(
            brokers=[],
            topics=[
                T(
                    error_code=error,
                    name=name,
                    partitions=[
                        P(
                            error_code=p_error,
                            partition_index=i,
                            leader_id=1,
                            leader_epoch=0,
                            replica_nodes=[1, 2],
                            isr_nodes=[1],
                            offline_replicas=[],
                        )
                        for i, p_error in enumerate(partitions)
                    ],
                )
                for name, error, partitions in topics
            ],
        ).encode(version=13),
        13,
    )


def test_metadata_topic_and_partition_errors_by_code():
    view, again = metadata.parse(
        metadata_answer(
            ("gone", UNKNOWN_TOPIC_OR_PARTITION, []),
            ("bad name", INVALID_TOPIC_EXCEPTION, []),
            ("electing", LEADER_NOT_AVAILABLE, []),
            ("led", codes.NONE, [codes.NONE, REPLICA_NOT_AVAILABLE, LEADER_NOT_AVAILABLE]),
        ),
        "lab",
    )
    assert list(view.topics) == ["led"] and again == {"electing"}
    # A follower missing leaves the leader usable; no leader elected is leader -1 (asked again by fetch).
    assert [p.leader for p in view.topics["led"].partitions.values()] == [1, 1, -1]
    # Not authorised must not read as "the topic does not exist": a plan would create it.
    with pytest.raises(ClusterError, match="not authorized to describe topic secret"):
        metadata.parse(metadata_answer(("secret", TOPIC_AUTHORIZATION_FAILED, [])), "lab")
    with pytest.raises(ClusterError, match="Metadata for topic odd failed with POLICY_VIOLATION"):
        metadata.parse(metadata_answer(("odd", POLICY_VIOLATION, [])), "lab")


def test_partition_reads_wait_the_throttle_time_the_broker_asked_for(test_cluster, kafka):
    test_cluster.create_topic("slow")
    test_cluster.clear_request_log()
    test_cluster.inject_error(LIST_OFFSETS, LEADER_NOT_AVAILABLE, times=1, throttle_time_ms=300)
    assert kafka.observe_topics(["slow"]).topics["slow"].partitions[0].leader > 0
    # earliest and latest in the first round (one refused), the refused one again in the second
    first, _, again = [r for r in test_cluster.request_log if r.api_name == "ListOffsets"]
    assert again.time - first.time >= 0.3
