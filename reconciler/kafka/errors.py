"""Kafka error codes as the reconciler reports them."""
from __future__ import annotations

import kafka.errors as Errors

from reconciler.ports import BrokerError, ErrorKind

NONE = 0
OFFSET_OUT_OF_RANGE = 1
UNKNOWN_TOPIC_OR_PARTITION = 3
LEADER_NOT_AVAILABLE = 5
NOT_LEADER_OR_FOLLOWER = 6
REQUEST_TIMED_OUT = 7
COORDINATOR_LOAD_IN_PROGRESS = 14
COORDINATOR_NOT_AVAILABLE = 15
NOT_COORDINATOR = 16
TOPIC_ALREADY_EXISTS = 36
INVALID_PARTITIONS = 37
NOT_CONTROLLER = 41
FENCED_LEADER_EPOCH = 74
UNKNOWN_LEADER_EPOCH = 75
THROTTLING_QUOTA_EXCEEDED = 89
TOPIC_AUTHORIZATION_FAILED = 29
GROUP_AUTHORIZATION_FAILED = 30
CLUSTER_AUTHORIZATION_FAILED = 31

# kafka-python still uses a few pre-KIP names; users and apply see Apache Kafka's current ones.
_KAFKA_NAMES = {6: "NOT_LEADER_OR_FOLLOWER", 10: "MESSAGE_TOO_LARGE", 17: "INVALID_TOPIC_EXCEPTION",
                39: "INVALID_REPLICA_ASSIGNMENT"}

# Partition errors that mean "ask again, after refreshing metadata": the leader moved, is not
# elected yet, has not caught up with its new epoch, or the topic is not (yet) known there.
PARTITION_RETRIABLE = frozenset({
    UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE, NOT_LEADER_OR_FOLLOWER, REQUEST_TIMED_OUT,
    9,   # REPLICA_NOT_AVAILABLE
    56,  # KAFKA_STORAGE_ERROR
    FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH,
    78,  # OFFSET_NOT_AVAILABLE: a new leader does not know its high watermark yet
})

COORDINATOR_RETRIABLE = frozenset({COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR})


def error_name(code: int) -> str:
    return _KAFKA_NAMES.get(code) or Errors.for_code(code).message


def is_retriable(code: int) -> bool:
    return code in PARTITION_RETRIABLE or code in COORDINATOR_RETRIABLE or Errors.for_code(code).retriable


_LEADER_MOVED = frozenset({NOT_LEADER_OR_FOLLOWER, LEADER_NOT_AVAILABLE, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH})
_NOT_AUTHORISED = frozenset({TOPIC_AUTHORIZATION_FAILED, GROUP_AUTHORIZATION_FAILED, CLUSTER_AUTHORIZATION_FAILED})


def error_kind(code: int) -> ErrorKind:
    if code == REQUEST_TIMED_OUT:
        return ErrorKind.TIMED_OUT
    if code in _LEADER_MOVED:
        return ErrorKind.LEADER_MOVED
    if code in _NOT_AUTHORISED:
        return ErrorKind.NOT_AUTHORISED
    return ErrorKind.RETRIABLE if is_retriable(code) else ErrorKind.REFUSED


def broker_error(code: int, message: str | None = None) -> BrokerError | None:
    """None for success, else the error with Kafka's name, the broker's message and its kind."""
    if code == NONE:
        return None
    return BrokerError(code=code, name=error_name(code), message=message or "", kind=error_kind(code))


def unanswered(message: str) -> BrokerError:
    """A request, or one item of it, that got no answer: it may or may not have taken effect."""
    return BrokerError(-1, "NO_ANSWER", message, kind=ErrorKind.TIMED_OUT)
