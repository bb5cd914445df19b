"""Kafka's error codes: every code the adapter decides on, named once, the groups of codes each
decision is made by, and what an error means for the caller (its `ErrorKind`). Decisions are
made here, by number; nothing downstream compares an error's name or message text.
"""

from __future__ import annotations

import kafka.errors as Errors

from reconciler.ports import BrokerError, ErrorKind

# Named from kafka-python's error classes, so that no number can be mistyped.
NONE = Errors.NoError.errno
OFFSET_OUT_OF_RANGE = Errors.OffsetOutOfRangeError.errno
UNKNOWN_TOPIC_OR_PARTITION = Errors.UnknownTopicOrPartitionError.errno
LEADER_NOT_AVAILABLE = Errors.LeaderNotAvailableError.errno
NOT_LEADER_OR_FOLLOWER = Errors.NotLeaderForPartitionError.errno
REQUEST_TIMED_OUT = Errors.RequestTimedOutError.errno
REPLICA_NOT_AVAILABLE = Errors.ReplicaNotAvailableError.errno
MESSAGE_TOO_LARGE = Errors.MessageSizeTooLargeError.errno
COORDINATOR_LOAD_IN_PROGRESS = Errors.CoordinatorLoadInProgressError.errno
COORDINATOR_NOT_AVAILABLE = Errors.CoordinatorNotAvailableError.errno
NOT_COORDINATOR = Errors.NotCoordinatorError.errno
INVALID_TOPIC_EXCEPTION = Errors.InvalidTopicError.errno
TOPIC_AUTHORIZATION_FAILED = Errors.TopicAuthorizationFailedError.errno
GROUP_AUTHORIZATION_FAILED = Errors.GroupAuthorizationFailedError.errno
CLUSTER_AUTHORIZATION_FAILED = Errors.ClusterAuthorizationFailedError.errno
TOPIC_ALREADY_EXISTS = Errors.TopicAlreadyExistsError.errno
INVALID_PARTITIONS = Errors.InvalidPartitionsError.errno
INVALID_REPLICA_ASSIGNMENT = Errors.InvalidReplicationAssignmentError.errno
NOT_CONTROLLER = Errors.NotControllerError.errno
KAFKA_STORAGE_ERROR = Errors.KafkaStorageError.errno
FENCED_LEADER_EPOCH = Errors.FencedLeaderEpochError.errno
UNKNOWN_LEADER_EPOCH = Errors.UnknownLeaderEpochError.errno
OFFSET_NOT_AVAILABLE = Errors.OffsetNotAvailableError.errno
THROTTLING_QUOTA_EXCEEDED = Errors.ThrottlingQuotaExceededError.errno
ELECTION_NOT_NEEDED = Errors.ElectionNotNeededError.errno
NO_REASSIGNMENT_IN_PROGRESS = Errors.NoReassignmentInProgressError.errno
UNSUPPORTED_VERSION = Errors.UnsupportedVersionError.errno
# Not an answer from Kafka: a request, or one item of it, that got none.
NO_ANSWER = -1

# kafka-python still uses a few pre-KIP names; users and apply see Apache Kafka's current ones.
_KAFKA_NAMES = {
    NOT_LEADER_OR_FOLLOWER: "NOT_LEADER_OR_FOLLOWER",
    MESSAGE_TOO_LARGE: "MESSAGE_TOO_LARGE",
    INVALID_TOPIC_EXCEPTION: "INVALID_TOPIC_EXCEPTION",
    INVALID_REPLICA_ASSIGNMENT: "INVALID_REPLICA_ASSIGNMENT",
}

# Partition errors that mean "ask again, after refreshing metadata": the leader moved, is not
# elected yet, has not caught up with its new epoch, or the topic is not (yet) known there;
# OFFSET_NOT_AVAILABLE: a new leader does not know its high watermark yet.
PARTITION_RETRIABLE = frozenset(
    {
        UNKNOWN_TOPIC_OR_PARTITION,
        LEADER_NOT_AVAILABLE,
        NOT_LEADER_OR_FOLLOWER,
        REQUEST_TIMED_OUT,
        REPLICA_NOT_AVAILABLE,
        KAFKA_STORAGE_ERROR,
        FENCED_LEADER_EPOCH,
        UNKNOWN_LEADER_EPOCH,
        OFFSET_NOT_AVAILABLE,
    }
)
# Group errors that mean "find the coordinator again and ask it".
COORDINATOR_RETRIABLE = frozenset({COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR})
# Controller-bound (admin) errors sent again after waiting: the controller moved, or the broker
# asked us to slow down.
ADMIN_RETRIABLE = frozenset({NOT_CONTROLLER, THROTTLING_QUOTA_EXCEEDED})
# DeleteRecords answers that mean the Metadata it was routed by is out of date.
ROUTING_STALE = frozenset({NOT_LEADER_OR_FOLLOWER, LEADER_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION, FENCED_LEADER_EPOCH})
# Metadata: a topic answered with these does not exist (a name Kafka finds invalid cannot).
TOPIC_ABSENT = frozenset({UNKNOWN_TOPIC_OR_PARTITION, INVALID_TOPIC_EXCEPTION})
# Metadata: a partition answered with these has a usable leader (only a follower is missing).
LEADER_USABLE = frozenset({NONE, REPLICA_NOT_AVAILABLE})

_LEADER_MOVED = frozenset({NOT_LEADER_OR_FOLLOWER, LEADER_NOT_AVAILABLE, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH})
_NOT_AUTHORISED = frozenset({TOPIC_AUTHORIZATION_FAILED, GROUP_AUTHORIZATION_FAILED, CLUSTER_AUTHORIZATION_FAILED})


def error_name(code: int) -> str:
    return _KAFKA_NAMES.get(code) or Errors.for_code(code).message


def is_retriable(code: int) -> bool:
    return code in PARTITION_RETRIABLE or code in COORDINATOR_RETRIABLE or bool(Errors.for_code(code).retriable)


def error_kind(code: int) -> ErrorKind:
    if code == REQUEST_TIMED_OUT:
        return ErrorKind.TIMED_OUT
    if code in _LEADER_MOVED:
        return ErrorKind.LEADER_MOVED
    if code in _NOT_AUTHORISED:
        return ErrorKind.NOT_AUTHORISED
    if code == NO_REASSIGNMENT_IN_PROGRESS:
        return ErrorKind.NOTHING_IN_PROGRESS
    return ErrorKind.RETRIABLE if is_retriable(code) else ErrorKind.REFUSED


def broker_error(code: int, message: str | None = None) -> BrokerError:
    """The error with Kafka's name, the broker's message and its kind (`code` is not NONE)."""
    return BrokerError(code=code, name=error_name(code), message=message or "", kind=error_kind(code))


def answer_error(code: int, message: str | None = None) -> BrokerError | None:
    """None for success, else `broker_error`."""
    return None if code == NONE else broker_error(code, message)


def unanswered(message: str) -> BrokerError:
    """A request, or one item of it, that got no answer: it may or may not have taken effect."""
    return BrokerError(NO_ANSWER, "NO_ANSWER", message, kind=ErrorKind.TIMED_OUT)


def partition_unavailable(error: BrokerError) -> bool:
    """Whether a partition's error means it could not be read (no answer, leader moving or
    missing), as opposed to the broker refusing. Below zero: no answer, or Kafka's
    UNKNOWN_SERVER_ERROR(-1), neither of which is a refusal."""
    return error.code < 0 or error.code in PARTITION_RETRIABLE
