"""The port between the core and a Kafka cluster: what apply, validation and live drift ask of a
connection, and the plain values it answers with. A leaf module, so the adapter and the core
meet here without importing each other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Literal, Protocol

from reconciler.models.observed import ObservedState
from reconciler.models.plan import AddPartitions, AlterConfigs, CreateTopic, Plan

TopicPartition = tuple[str, int]
# Told a line at a time what a long step is doing (apply's waits, connecting to a cluster).
Progress = Callable[[str], None]
# KRaft refuses one CreateTopics that would write more than 10,000 metadata records.
MAX_METADATA_RECORDS_PER_REQUEST = 10_000


class ErrorKind(str, Enum):
    """What a broker error means for the caller, decided once in the adapter from Kafka's code."""

    TIMED_OUT = "timed_out"  # may or may not have taken effect: read back before deciding
    LEADER_MOVED = "leader_moved"  # ask the current leader, after refreshing metadata
    RETRIABLE = "retriable"  # transient: the same request may be sent again after a backoff
    NOT_AUTHORISED = "not_authorised"  # the principal lacks an ACL; sending again changes nothing
    REFUSED = "refused"  # the broker said no; sending again changes nothing


@dataclass(frozen=True)
class BrokerError:
    code: int
    name: str
    message: str = ""
    kind: ErrorKind = ErrorKind.REFUSED

    @property
    def retriable(self) -> bool:
        return self.kind in (ErrorKind.TIMED_OUT, ErrorKind.LEADER_MOVED, ErrorKind.RETRIABLE)

    def __str__(self) -> str:
        return f"{self.name}({self.code})" + (f": {self.message}" if self.message else "")


@dataclass(frozen=True)
class EpochCheck:
    """The current leader's answer to OffsetForLeaderEpoch(planned epoch)."""

    leader: int
    leader_epoch: int  # the leader's current epoch
    end_offset: int  # end offset of the planned epoch on that leader; -1 if unknown
    error: BrokerError | None = None


@dataclass(frozen=True)
class DeleteOutcome:
    low_watermark: int  # -1 when the broker reported an error
    error: BrokerError | None = None


@dataclass(frozen=True)
class Reassignment:
    """One partition's reassignment in progress, as ListPartitionReassignments tells it (KIP-455):
    `replicas` is the target followed by the replicas being removed."""

    replicas: tuple[int, ...]
    adding: tuple[int, ...]
    removing: tuple[int, ...]

    @property
    def original(self) -> list[int]:
        """The replicas before it started (what a cancel reverts to)."""
        return [b for b in self.replicas if b not in self.adding]

    @property
    def target(self) -> list[int]:
        return [b for b in self.replicas if b not in self.removing]


class ConfigOp(str, Enum):
    """IncrementalAlterConfigs' operations; APPEND and SUBTRACT change one entry of a list config."""

    SET = "set"
    DELETE = "delete"
    APPEND = "append"
    SUBTRACT = "subtract"


@dataclass(frozen=True)
class ConfigChangeOp:
    key: str
    op: ConfigOp
    value: str | None = None  # None for DELETE


@dataclass(frozen=True, order=True)
class ConfigResource:
    """A topic's configs, or one broker's own (sent to that broker: another refuses it)."""

    kind: Literal["topic", "broker"]
    name: str


class ClusterPort(Protocol):
    """What apply and validation need from a cluster connection (implemented by the Kafka adapter)."""

    def observe_for_plan(self, plan: Plan) -> ObservedState: ...
    def supports_epoch_fencing(self) -> bool: ...
    def create_topics(self, actions: list[CreateTopic], validate_only: bool) -> dict[str, BrokerError | None]: ...
    def wait_for_topics(self, names: list[str], timeout_s: float) -> list[str]: ...
    def create_partitions(self, actions: list[AddPartitions], validate_only: bool) -> dict[str, BrokerError | None]: ...
    def alter_configs(self, actions: list[AlterConfigs], validate_only: bool) -> dict[str, BrokerError | None]: ...
    def epoch_end_offsets(self, planned_epochs: dict[TopicPartition, int]) -> dict[TopicPartition, EpochCheck]: ...
    def delete_records(self, targets: dict[TopicPartition, int]) -> dict[TopicPartition, DeleteOutcome]: ...
    def log_start_offsets(self, partitions: list[TopicPartition]) -> dict[TopicPartition, int]: ...
    def delete_topics(self, names: list[str]) -> dict[str, BrokerError | None]: ...
    # Replica reassignment (reconciler.apply.reassignment).
    def list_reassignments(self, topics: list[str]) -> dict[TopicPartition, Reassignment]: ...
    def alter_reassignments(self, targets: dict[TopicPartition, list[int] | None]) -> dict[TopicPartition, BrokerError | None]:
        """Start (replicas) or cancel (None) reassignments. A cancel of a partition with none in
        progress is no error (None): the partition's replicas tell what happened."""

    def partition_replicas(self, topics: list[str]) -> dict[TopicPartition, list[int]]: ...
    def live_brokers(self) -> list[int]:
        """The brokers Metadata lists (a stopped one is not among them)."""

    def replica_sizes(self, replicas: dict[TopicPartition, list[int]]) -> dict[tuple[TopicPartition, int], int]:
        """Bytes on disk of each (partition, broker) replica asked for that answered."""

    def elect_preferred_leaders(self, partitions: list[TopicPartition]) -> dict[TopicPartition, BrokerError | None]:
        """None where the preferred replica leads now (elected, or it already did)."""

    def describe_config_values(self, resources: list[ConfigResource], keys: list[str]) -> dict[ConfigResource, dict[str, str]]:
        """The given keys' values that are set on each resource (an unset key is left out)."""

    def alter_config_ops(
        self, changes: dict[ConfigResource, list[ConfigChangeOp]]
    ) -> dict[ConfigResource, BrokerError | None]: ...


def create_topic_batches(actions: list[CreateTopic]) -> list[list[CreateTopic]]:
    """Split creations so no request writes more than KRaft's metadata-record limit."""
    batches: list[list[CreateTopic]] = []
    current: list[CreateTopic] = []
    records = 0
    for action in actions:
        cost = 1 + action.partitions + len(action.configs)
        if current and records + cost > MAX_METADATA_RECORDS_PER_REQUEST:
            batches.append(current)
            current, records = [], 0
        current.append(action)
        records += cost
    return batches + ([current] if current else [])
