"""The port between the core and a Kafka cluster: what apply, validation and live drift ask of a
connection, and the plain values it answers with. A leaf module, so the adapter and the core
meet here without importing each other.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
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
    # A cancel that found no reassignment in progress on the partition: it had finished.
    NOTHING_IN_PROGRESS = "nothing_in_progress"
    # Not a broker's answer: the write was accepted, but the brokers did not show it in time.
    UNCONFIRMED = "unconfirmed"


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


@dataclass(frozen=True)
class TopicShape:
    """What a write should leave a topic looking like on every broker; what is not given is not
    checked. `configs`: key -> the value set on the topic itself (None: not set there)."""

    exists: bool = True
    partitions: int | None = None
    # partition -> the replica lists it may show (any one of them: a reassignment still running
    # may finish while it is confirmed)
    replicas: Mapping[int, tuple[tuple[int, ...], ...]] = field(default_factory=dict)
    configs: Mapping[str, str | None] = field(default_factory=dict)


@dataclass(frozen=True)
class Visible:
    """Writes to confirm: topics, and brokers' own dynamic configs (key -> value, None: unset)."""

    topics: Mapping[str, TopicShape] = field(default_factory=dict)
    brokers: Mapping[int, Mapping[str, str | None]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.topics or self.brokers)


class ClusterPort(Protocol):
    """What apply and validation need from a cluster connection (implemented by the Kafka adapter)."""

    def observe_for_plan(self, plan: Plan, sized: frozenset[str] = frozenset()) -> ObservedState: ...
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
        progress answers an error of kind NOTHING_IN_PROGRESS (it had finished)."""

    def partition_replicas(self, topics: list[str]) -> dict[TopicPartition, list[int]]: ...
    def live_brokers(self) -> list[int]:
        """The brokers Metadata lists (a stopped one is not among them)."""

    def replica_sizes(self, replicas: dict[TopicPartition, list[int]]) -> dict[tuple[TopicPartition, int], int]:
        """Bytes on disk of each (partition, broker) replica asked for that answered."""

    def elect_preferred_leaders(self, partitions: list[TopicPartition]) -> dict[TopicPartition, BrokerError | None]:
        """None where the preferred replica leads now (elected, or it already did)."""

    def describe_config_values(
        self, resources: list[ConfigResource], keys: list[str] | None
    ) -> dict[ConfigResource, dict[str, str | None]]:
        """The given keys' (None: every key's) values that are set on each resource; an unset key
        is left out, a sensitive one (or one a broker does not know) reads as None."""

    def alter_config_ops(
        self, changes: dict[ConfigResource, list[ConfigChangeOp]]
    ) -> dict[ConfigResource, BrokerError | None]: ...

    def confirm_visible(self, expected: Visible, timeout_s: float) -> dict[ConfigResource, str]:
        """Wait, with backoff and at most `timeout_s`, until every live broker shows `expected`
        (Kafka's metadata reaches each broker a moment after a write: KAFKA_SEMANTICS.md). What
        is still not shown at the end, per topic ("topic", name) or broker ("broker", id): which
        broker shows what instead. Empty when everything is confirmed."""


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
