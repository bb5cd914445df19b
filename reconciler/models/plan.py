"""A plan: the ordered actions that would take the cluster to the declared state.

Plain data (the saved-plan format is its JSON). Each action records the observed values it
depends on, so that `apply` can refuse it when the cluster has moved on since the plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Annotated, Any, Literal, NoReturn

from pydantic import BaseModel, ConfigDict, Field, model_validator

from reconciler.models.desired import SourceRef
from reconciler.models.idle import TopicActivity

PLAN_FORMAT_VERSION = 1


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Name(str, Enum):
    """An enum whose members are their stable names: in JSON, f-strings and comparisons with str."""

    def __str__(self) -> str:
        return str(self.value)


class ActionKind(_Name):
    """The six things a plan can do, in apply order. What a layer needs to know about a kind is
    in its `KindFacts` (below); code that must act differently per kind matches on the action (or
    the kind) with `unhandled` as the last case, so the type checker names every place a new kind
    needs."""

    CREATE_TOPIC = "create_topic"
    ADD_PARTITIONS = "add_partitions"
    REASSIGN_REPLICAS = "reassign_replicas"
    ALTER_CONFIGS = "alter_configs"
    TRUNCATE = "truncate"
    DELETE_TOPIC = "delete_topic"

    @property
    def facts(self) -> KindFacts:
        return KIND_FACTS[self]

    @property
    def order(self) -> int:
        """Apply order: creates, partition increases, replica reassignments (new partitions get the
        new replicas too; a min.insync.replicas raise waits for the replicas it needs), config
        changes, truncations, deletions last."""
        return _KIND_ORDER[self]


_KIND_ORDER: dict[ActionKind, int] = {kind: i for i, kind in enumerate(ActionKind)}  # in declaration order


@dataclass(frozen=True)
class KindFacts:
    symbol: str  # shown in plans and drift reports: + ~ x -
    label: str  # the kind in words: "add partitions"
    heading: str  # what precedes the topic in a headline: "add partitions to <topic>"
    # The outcome message of an action applied in one request per topic; None for truncations,
    # whose outcome is told per partition.
    done: str | None
    destructive: bool  # always deletes data for good (a config change does when it cuts retention: its own flag)
    summary: Literal["create", "change", "truncate", "delete"]  # the PlanSummary count it adds to
    # What the brokers are asked with validate_only ("would refuse to <verb> <topic>"); None for
    # kinds Kafka cannot validate (DeleteRecords, DeleteTopics).
    broker_verb: str | None
    epoch_fenced: bool  # written per partition, fenced by the leader epoch seen when planning
    # The drift finding it shows up as: config changes and truncations have their own, with details.
    drift_finding: Literal["pending-change", "config-drift", "pending-truncation"]


KIND_FACTS: dict[ActionKind, KindFacts] = {
    ActionKind.CREATE_TOPIC: KindFacts(
        symbol="+",
        label="create topic",
        heading="create topic",
        done="created",
        destructive=False,
        summary="create",
        broker_verb="create",
        epoch_fenced=False,
        drift_finding="pending-change",
    ),
    ActionKind.ADD_PARTITIONS: KindFacts(
        symbol="~",
        label="add partitions",
        heading="add partitions to",
        done="partitions added",
        destructive=False,
        summary="change",
        broker_verb="add partitions to",
        epoch_fenced=False,
        drift_finding="pending-change",
    ),
    ActionKind.REASSIGN_REPLICAS: KindFacts(
        symbol="~",
        label="reassign replicas",
        heading="reassign replicas of",
        done="replicas reassigned",
        destructive=False,
        summary="change",
        broker_verb=None,
        epoch_fenced=False,
        drift_finding="pending-change",
    ),
    ActionKind.ALTER_CONFIGS: KindFacts(
        symbol="~",
        label="alter configs",
        heading="alter configs of",
        done="configs changed",
        destructive=False,
        summary="change",
        broker_verb="change the configs of",
        epoch_fenced=False,
        drift_finding="config-drift",
    ),
    ActionKind.TRUNCATE: KindFacts(
        symbol="x",
        label="truncate",
        heading="truncate",
        done=None,
        destructive=True,
        summary="truncate",
        broker_verb=None,
        epoch_fenced=True,
        drift_finding="pending-truncation",
    ),
    ActionKind.DELETE_TOPIC: KindFacts(
        symbol="-",
        label="delete topic",
        heading="delete topic",
        done="deleted",
        destructive=True,
        summary="delete",
        broker_verb=None,
        epoch_fenced=False,
        drift_finding="pending-change",
    ),
}


def unhandled(value: NoReturn) -> NoReturn:
    """The last case of a match over the actions or their kinds: the type checker proves it
    unreachable, and names the match when a kind is added."""
    raise TypeError(f"unhandled action kind: {value!r}")


def _absent(value: object) -> bool:
    """An optional part a plan does not have, left out of its JSON: plans made before the part
    existed (or without it: the pure planner's, in tests and drift) keep their JSON. A field rule,
    not a model serializer, so that pydantic-core dumps a plan without calling back into Python
    for every action."""
    return value is None or value == []


class Severity(str, Enum):
    ERROR = "error"  # the plan must not be applied
    WARNING = "warning"
    INFO = "info"


# Each severity's place, most severe first, by its value (a member is its value: it finds its place too).
SEVERITY_RANK: dict[str, int] = {severity.value: i for i, severity in enumerate(Severity)}


class DiagnosticCode(_Name):
    """The stable identifier of each diagnostic the planner makes (JSON `code`). A refusal by the
    brokers has the code `broker_refusal(error name)`, one per Kafka error."""

    PARTITION_DECREASE = "partition-decrease"
    REPLICATION_FACTOR_CHANGE = "replication-factor-change"  # one the planner cannot place (which brokers, why)
    REASSIGNMENT_IN_PROGRESS = "reassignment-in-progress"  # to a target other than the manifests': left alone
    REPLICA_ASSIGNMENT_INVALID = "replica-assignment-invalid"  # a pinned list names a broker that cannot take it
    MIN_INSYNC_ABOVE_REPLICATION = "min-insync-above-replication"  # acks=all writes would fail
    POLICY_REPLICATION_FACTOR = "policy-replication-factor"  # a factor the policy's allowed list lacks
    RACK_SPREAD = "rack-spread"  # replicas that must share a rack, or racks ignored
    PROTECTED_TOPIC_DELETE = "protected-topic-delete"
    NOT_SHOWN_IDLE = "not-shown-idle"  # a deletion guarded by idleness whose topic is not shown idle: kept
    PROTECTED_TOPIC_TRUNCATE = "protected-topic-truncate"
    PROTECTED_TOPIC_RETENTION_CUT = "protected-topic-retention-cut"
    TRUNCATE_COMPACTED_TOPIC = "truncate-compacted-topic"
    TRUNCATE_BEYOND_HIGH_WATERMARK = "truncate-beyond-high-watermark"
    POLICY_MAX_DELETE_FRACTION = "policy-max-delete-fraction"
    POLICY_MAX_RETENTION_DECREASE = "policy-max-retention-decrease"  # a retention cut larger than one apply may make
    POLICY_MAX_DESTRUCTIVE_ACTIONS = "policy-max-destructive-actions"  # more data-deleting actions than one plan may hold
    MISSING_TIME_LOOKUP = "missing-time-lookup"
    RETENTION_ESTIMATE_UNKNOWN = "retention-estimate-unknown"  # some partition's deletion could not be estimated
    GROUP_WITHOUT_COMMIT = "group-without-commit"
    PARTITION_OFFLINE = "partition-offline"  # its planning waits until it is back
    SENSITIVE_CONFIG_UNKNOWN = "sensitive-config-unknown"
    UNDECLARED_CONFIG = "undeclared-config"
    NOT_AUTHORISED = "not-authorised"  # a declared topic the principal may not DESCRIBE: nothing is planned for it
    MISSING_RIGHT = "missing-right"  # the principal lacks the ACL operation an action needs
    SIZES_UNKNOWN = "sizes-unknown"  # DescribeLogDirs was refused: estimates have no bytes
    CAPACITY_UNKNOWN = "capacity-unknown"  # some broker's disk capacity is not known: said once
    POLICY_MAX_DISK_USAGE = "policy-max-disk-usage"  # a broker's projected disk usage above (or near) the policy's limit
    # a team's budget (docs/teams.md): its totals above (or near) it, or one of its topics outside it
    TEAM_MAX_TOPICS = "team-max-topics"
    TEAM_MAX_PARTITIONS = "team-max-partitions"
    TEAM_MAX_DISK = "team-max-disk"
    TEAM_MAX_RETENTION = "team-max-retention"
    TEAM_NAME_PREFIX = "team-name-prefix"


def broker_refusal(error_name: str) -> str:
    """The code of a diagnostic for a broker refusal: REQUEST_TIMED_OUT -> "broker-request-timed-out"."""
    return "broker-" + error_name.lower().replace("_", "-")


class Diagnostic(_Model):
    severity: Severity
    code: str  # a DiagnosticCode, or broker_refusal(...) of a Kafka error
    message: str
    topic: str | None = None
    partition: int | None = None
    source: SourceRef | None = None
    # The kind of the topic's action it concerns, and the config key where known, so that every
    # renderer shows it under that action and not another of the topic's.
    action: ActionKind | None = None
    key: str | None = None
    owner: str | None = Field(default=None, exclude_if=_absent)  # the Team of its topic or budget (docs/teams.md)


class ConfigChange(_Model):
    key: str
    op: Literal["set", "delete"]
    before: str | None = None  # effective value now (None if unknown or sensitive)
    before_source: str | None = None  # ConfigSource name of the current value
    after: str | None = None  # value set; for delete, None (the key reverts to its inherited value)
    sensitive: bool = False


class IdleEvidence(_Model):
    """What showed a topic idle when its guarded deletion was planned (docs/idle-topics.md)."""

    idle_for_ms: int = Field(ge=1)  # the guard: delete_only_if_idle_for, or the policy's requirement
    evidence: TopicActivity


class TopicPreconditions(_Model):
    """What apply re-reads and compares before touching a topic."""

    exists: bool
    topic_id: str | None = None
    partition_count: int | None = None
    # Topic-level config values the action depends on: key -> value set on the topic (None = not set).
    configs: dict[str, str | None] = Field(default_factory=dict)
    # A deletion guarded by idleness: the evidence it was planned on, read again by apply.
    idle: IdleEvidence | None = Field(default=None, exclude_if=lambda v: v is None)


class DiskEstimate(_Model):
    """What an action adds to the brokers' disks at steady state after it, per broker (negative:
    what it frees); docs/capacity.md. `bytes` None: not known (`method` says why: unknown is never
    0), or unbounded (`bytes_per_day` then says how fast it grows without end)."""

    bytes: int | None = None
    per_broker: dict[int, int] = Field(default_factory=dict)  # the brokers whose figure is known
    method: str  # how the figure was made, or why there is none
    bytes_per_day: int | None = Field(default=None, ge=0)  # the ingest rate it was estimated from
    unbounded: bool = False  # no limit after the change: it grows until the disk is full


class _Action(_Model):
    topic: str
    destructive: bool = False
    reason: str = ""  # explains, never decides
    preconditions: TopicPreconditions
    source: SourceRef | None = None
    # None: not estimated (a plan made before capacity estimates)
    disk: DiskEstimate | None = Field(default=None, exclude_if=_absent)
    owner: str | None = Field(default=None, exclude_if=_absent)  # the Team owning the topic (docs/teams.md)


class CreateTopic(_Action):
    kind: Literal[ActionKind.CREATE_TOPIC] = ActionKind.CREATE_TOPIC
    partitions: int
    replication_factor: int
    # partition -> replicas (the first leads), sent in CreateTopics when the manifests constrain
    # the placement (reconciler.plan.replication.place_new); empty: the brokers place it.
    assignments: dict[int, list[int]] = Field(default_factory=dict)
    configs: dict[str, str] = Field(default_factory=dict)


class AddPartitions(_Action):
    kind: Literal[ActionKind.ADD_PARTITIONS] = ActionKind.ADD_PARTITIONS
    before: int
    after: int


class PartitionMove(_Model):
    """One partition's replicas, before (as seen when planning: apply refuses the move if they
    changed) and after (the first is the preferred leader)."""

    partition: int = Field(ge=0)
    before: list[int] = Field(min_length=1)
    after: list[int] = Field(min_length=1)
    # The partition's size on disk times the replicas added: what replication copies. None: unknown.
    bytes_to_copy: int | None = Field(default=None, ge=0)
    # Already being reassigned to `after` (started by an earlier apply): apply waits for it and
    # sends nothing new.
    in_progress: bool = False

    @model_validator(mode="after")
    def _distinct_brokers(self) -> PartitionMove:
        for name, brokers in (("before", self.before), ("after", self.after)):
            if len(set(brokers)) != len(brokers):
                raise ValueError(f"partition {self.partition}: {name} lists a broker twice: {brokers}")
        return self

    @property
    def adding(self) -> list[int]:
        return [b for b in self.after if b not in self.before]

    @property
    def removing(self) -> list[int]:
        return [b for b in self.before if b not in self.after]


class ReassignReplicas(_Action):
    """A replication-factor change or a move off drained brokers: AlterPartitionReassignments for
    the partitions whose replicas change. Kafka has no validate_only for it: the planner checks
    brokers, racks, min.insync.replicas and the policy itself."""

    kind: Literal[ActionKind.REASSIGN_REPLICAS] = ActionKind.REASSIGN_REPLICAS
    replication_factor_before: int = Field(ge=1)
    replication_factor_after: int = Field(ge=1)
    partitions: list[PartitionMove] = Field(min_length=1)
    # leader/follower.replication.throttled.rate while copying; None: not throttled.
    throttle_bytes_per_s: int | None = Field(default=None, ge=1)

    @property
    def bytes_to_copy(self) -> int | None:
        sizes = [p.bytes_to_copy for p in self.partitions if p.adding]
        return None if None in sizes else sum(s for s in sizes if s is not None)


def delete_fraction_excess(records: int, present: int, limit: float, up_to: bool = False) -> str:
    """Why deleting `records` of the `present` ones breaks the policy's max_delete_fraction."""
    share = records / present if present else 0.0
    return (
        f"deleting {'up to ' if up_to else ''}{records:,} of {present:,} records ({share:.0%}) exceeds "
        f"the policy limit of {limit:.0%} per apply"
    )


class PartitionExpiry(_Model):
    """What a retention change makes the brokers delete from one partition, estimated from the
    plan's read. A time limit's records and a size limit's bytes are upper bounds (the brokers
    delete whole segments only, so they may keep more); the other figure is proportional. None is
    "unknown" (the partition was offline, or its size or time lookup was not read), never 0."""

    partition: int = Field(ge=0)
    log_start_offset: int | None = Field(default=None, ge=0)
    high_watermark: int | None = Field(default=None, ge=0)
    keep_from_offset: int | None = Field(default=None, ge=0)  # the first offset kept is at most this
    bytes_to_delete: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _within_the_log(self) -> PartitionExpiry:
        start, keep, end = self.log_start_offset, self.keep_from_offset, self.high_watermark
        if keep is not None and (start is None or end is None or not start <= keep <= end):
            raise ValueError(
                f"partition {self.partition}: kept-from offset {keep} is outside the log seen when planning [{start}, {end}]"
            )
        return self

    @property
    def records_to_delete(self) -> int | None:
        if self.keep_from_offset is None or self.log_start_offset is None:
            return None
        return self.keep_from_offset - self.log_start_offset

    @property
    def present(self) -> int | None:
        if self.log_start_offset is None or self.high_watermark is None:
            return None
        return self.high_watermark - self.log_start_offset

    @property
    def delete_fraction(self) -> float | None:
        """The share of the records present at plan time that may be deleted (max_delete_fraction)."""
        records, present = self.records_to_delete, self.present
        if records is None or present is None:
            return None
        return records / present if present else 0.0

    def delete_fraction_excess(self, limit: float) -> str:
        return delete_fraction_excess(self.records_to_delete or 0, self.present or 0, limit, up_to=True)


class RetentionStep(_Model):
    """One key of a retention cut taken gradually (the topic's `retention_stepping: gradual`): this
    apply lowers it from `current` to `planned`, the next allowed step toward `target` under the
    policy's max_retention_decrease; `remaining` more applies reach `target`."""

    key: Literal["retention.ms", "retention.bytes"]
    current: int = Field(ge=0)  # the effective limit seen when planning
    planned: int = Field(ge=0)
    target: int = Field(ge=0)  # the effective limit the manifests ask for
    declared: str | None = None  # the value the manifests declare; None: they remove the key (target is inherited)
    remaining: int = Field(ge=1)  # applies after this one
    max_decrease: float = Field(ge=0.01, lt=1)  # the policy's limit the step was planned with

    @model_validator(mode="after")
    def _a_step_down(self) -> RetentionStep:
        if not self.target < self.planned < self.current:
            raise ValueError(f"{self.key}: a step goes down from {self.current} toward {self.target}, not to {self.planned}")
        return self


class RetentionCut(_Model):
    """What a config change makes the brokers delete on their own (retention, compaction), and the
    settings its estimate was made with, so that apply can estimate again from a fresh read."""

    effects: list[str] = Field(min_length=1)  # each cause in words: "records older than 12h"
    # The limits the estimate applies (None: that limit does not cut). Time is measured back from
    # the plan's observed_at, the instant the brokers are asked for offsets by time.
    retention_ms: int | None = Field(default=None, ge=0)
    retention_bytes: int | None = Field(default=None, ge=0)
    # Per partition, when a time or size limit cuts; compaction alone is not counted.
    partitions: list[PartitionExpiry] = Field(default_factory=list)
    # Keys lowered one allowed step this apply rather than to the declared value (stepping).
    # Empty (a cut taken in one apply): left out, as before stepping existed.
    steps: list[RetentionStep] = Field(default_factory=list, exclude_if=_absent)

    @property
    def remaining_applies(self) -> int:
        """How many more applies the stepping keys need after this one (0: none step)."""
        return max((s.remaining for s in self.steps), default=0)

    @property
    def counted(self) -> bool:
        return self.retention_ms is not None or self.retention_bytes is not None

    @property
    def known_records(self) -> int:
        return sum(p.records_to_delete or 0 for p in self.partitions)

    @property
    def records_to_delete(self) -> int | None:
        """Up to how many records are deleted; None when any partition is unknown or nothing is counted."""
        found = [p.records_to_delete for p in self.partitions]
        return None if not self.counted or None in found else sum(r for r in found if r is not None)

    @property
    def bytes_to_delete(self) -> int | None:
        found = [p.bytes_to_delete for p in self.partitions]
        return None if not self.counted or None in found else sum(b for b in found if b is not None)

    @property
    def unknown_partitions(self) -> list[int]:
        return [p.partition for p in self.partitions if p.records_to_delete is None]


class AlterConfigs(_Action):
    """A config change; destructive exactly when it makes the brokers delete records (`retention`)."""

    kind: Literal[ActionKind.ALTER_CONFIGS] = ActionKind.ALTER_CONFIGS
    changes: list[ConfigChange]
    retention: RetentionCut | None = Field(default=None, exclude_if=_absent)  # a change that deletes nothing: left out

    @model_validator(mode="after")
    def _destructive_when_it_deletes(self) -> AlterConfigs:
        # A saved plan is a file anyone can edit: the flag and the estimate must agree.
        if self.destructive != (self.retention is not None):
            raise ValueError("a config change is destructive exactly when it carries a retention estimate")
        return self


class PartitionTruncation(_Model):
    partition: int = Field(ge=0)
    target_offset: int = Field(ge=0)  # records below this offset are deleted; never -1
    # Observed when planning: the preconditions of epoch-fenced truncation.
    leader: int
    leader_epoch: int = Field(ge=0)
    log_start_offset: int = Field(ge=0)
    high_watermark: int = Field(ge=0)

    @model_validator(mode="after")
    def _target_within_the_log(self) -> PartitionTruncation:
        # A saved plan is a file anyone can edit; one that deletes outside the log seen is refused on load.
        if not self.log_start_offset <= self.target_offset <= self.high_watermark:
            raise ValueError(
                f"partition {self.partition}: target offset {self.target_offset} is outside the "
                f"log seen when planning [{self.log_start_offset}, {self.high_watermark}]"
            )
        return self

    @property
    def records_to_delete(self) -> int:
        return self.target_offset - self.log_start_offset

    @property
    def delete_fraction(self) -> float:
        """The share of the records present at plan time that this deletes (policy's max_delete_fraction)."""
        present = self.high_watermark - self.log_start_offset
        return self.records_to_delete / present if present else 0.0

    def delete_fraction_excess(self, limit: float) -> str:
        return delete_fraction_excess(self.records_to_delete, self.high_watermark - self.log_start_offset, limit)


class TruncateRecords(_Action):
    kind: Literal[ActionKind.TRUNCATE] = ActionKind.TRUNCATE
    destructive: bool = ActionKind.TRUNCATE.facts.destructive
    rules: list[str]  # human descriptions of the rules that set the targets
    rule_kinds: list[str]
    partitions: list[PartitionTruncation]
    estimated_bytes: int | None = None

    @property
    def records_to_delete(self) -> int:
        return sum(p.records_to_delete for p in self.partitions)


class DeleteTopic(_Action):
    kind: Literal[ActionKind.DELETE_TOPIC] = ActionKind.DELETE_TOPIC
    destructive: bool = ActionKind.DELETE_TOPIC.facts.destructive
    partitions: int
    records: int


Action = Annotated[
    CreateTopic | AddPartitions | ReassignReplicas | AlterConfigs | TruncateRecords | DeleteTopic, Field(discriminator="kind")
]


class PlanSummary(_Model):
    create: int = 0
    change: int = 0
    truncate: int = 0
    delete: int = 0
    records_to_delete: int = 0
    # Config changes that make the brokers delete records, and up to how many (the known part of
    # their estimates: an upper bound, never added to the exact truncation count above).
    retention_cuts: int = 0
    records_to_expire: int = 0
    errors: int = 0
    warnings: int = 0


class OwnerSummary(_Model):
    """What a plan does to one team's topics (docs/teams.md)."""

    owner: str
    review: str  # its review handle (@org/team or @user)
    create: int = 0
    change: int = 0
    truncate: int = 0
    delete: int = 0
    destructive: int = 0  # of those, the actions that delete data for good
    errors: int = 0  # the plan's errors about its topics or its budget
    warnings: int = 0


class ManifestBinding(_Model):
    """What a plan was made from, so that `apply` can refuse it once the manifests mean something
    else for its cluster: the digest of the cluster's canonical desired state (its meaning, not the
    bytes of the files; `reconciler.plan.binding`), that state itself, to list what differs, and
    the Git commit of the manifests when they are in a repository."""

    digest: str = Field(pattern=r"^sha256:[0-9a-f]{64}$")
    commit: str | None = None
    desired: dict[str, Any]


class BrokerCapacity(_Model):
    """One broker's disk in a plan (docs/capacity.md): its log directories' figures as read, what
    the plan's actions add, and the share of the filesystem that makes. None: not known."""

    broker: int
    log_dirs: list[str] = Field(default_factory=list)
    used_bytes: int | None = Field(default=None, ge=0)  # total - usable of its filesystems now
    total_bytes: int | None = Field(default=None, ge=1)
    added_bytes: int = 0  # what the actions add (negative: free), of the figures known
    # Some action that may add to this broker has an unknown or unbounded figure: the projection
    # is then a lower bound (what an unknown cut or truncation frees is left out: never counted on).
    added_unknown: bool = False
    unknown: str | None = None  # why capacity is unknown, where it is

    @property
    def projected_bytes(self) -> int | None:
        return None if self.added_unknown else self.projected_at_least

    @property
    def projected_at_least(self) -> int | None:
        return None if self.used_bytes is None else max(0, self.used_bytes + self.added_bytes)

    @property
    def projected_share(self) -> float | None:
        projected = self.projected_bytes
        return None if projected is None or self.total_bytes is None else projected / self.total_bytes


class Plan(_Model):
    format_version: int = PLAN_FORMAT_VERSION
    cluster: str
    cluster_id: str | None = None
    observed_at: datetime | None = None
    # Whether the brokers were asked about every write they can check (validate_only); false for a
    # plan made with --offline or against a snapshot (apply runs the same preflight before writing).
    validated_on_brokers: bool = False
    actions: list[Action] = Field(default_factory=list)
    unmanaged_topics: list[str] = Field(default_factory=list)
    diagnostics: list[Diagnostic] = Field(default_factory=list)
    # Set by the use case that plans from manifests; a saved plan without it is never applied.
    manifests: ManifestBinding | None = Field(default=None, exclude_if=_absent)
    # Per broker, what the actions do to its disk (docs/capacity.md); empty: nothing estimated.
    capacity: list[BrokerCapacity] = Field(default_factory=list, exclude_if=_absent)
    # Per team owning a topic the plan acts on or reports about (docs/teams.md); empty without teams.
    owners: list[OwnerSummary] = Field(default_factory=list, exclude_if=_absent)

    @property
    def has_changes(self) -> bool:
        return bool(self.actions)

    @property
    def has_errors(self) -> bool:
        return any(d.severity is Severity.ERROR for d in self.diagnostics)

    @property
    def waiting_partitions(self) -> list[str]:
        """Partitions whose planning waits until they are back online ("topic-partition")."""
        return [f"{d.topic}-{d.partition}" for d in self.diagnostics if d.code == DiagnosticCode.PARTITION_OFFLINE]

    @property
    def retention_cuts(self) -> list[RetentionCut]:
        return [a.retention for a in self.actions if isinstance(a, AlterConfigs) and a.retention is not None]

    @property
    def stepping_applies(self) -> int:
        """How many more applies after this plan's the retention steps need (0: nothing steps)."""
        return max((c.remaining_applies for c in self.retention_cuts), default=0)

    def summary(self) -> PlanSummary:
        buckets = [a.kind.facts.summary for a in self.actions]
        cuts = self.retention_cuts
        return PlanSummary(
            create=buckets.count("create"),
            change=buckets.count("change"),
            truncate=buckets.count("truncate"),
            delete=buckets.count("delete"),
            records_to_delete=sum(a.records_to_delete for a in self.actions if isinstance(a, TruncateRecords)),
            retention_cuts=len(cuts),
            records_to_expire=sum(c.known_records for c in cuts),
            errors=sum(d.severity is Severity.ERROR for d in self.diagnostics),
            warnings=sum(d.severity is Severity.WARNING for d in self.diagnostics),
        )
