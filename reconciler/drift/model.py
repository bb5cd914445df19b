"""The drift report: plain data, computed by `reconciler.drift.compute`, rendered by
`reconciler.drift.render`, and the same whichever engine (local or Spark) produced it.

A report has one `ClusterDrift` per cluster. Inside it every finding is also one flat `DriftItem`
(one row of the `drift_items` Parquet table), each partition a pending truncation would cut is
one `TruncationRow` (one row of the `pending_truncations` table), each partition of a topic
whose retention was lowered out of band is one row of the `retention_lowered` table, and each
entry of the change log against an earlier observation is one `ChangeLogEntry` (one row of the
`changes` table).

Replica health (`ReplicaHealth`, one per topic) is reported in every format, but only replicas
left on drained brokers count as drift (the cluster declares the brokers to empty, so it is drift
from Git, like a replication factor other than the manifest's, which is a pending change). A
reassignment in progress and a partition led by a replica other than its preferred leader are
health findings (`HEALTH_KINDS`): items and table rows like the others, but they do not make a
report "drifted" (exit code 3). Under-replicated and offline partitions count as drift, as before.
"""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from reconciler.models.plan import ActionKind, RetentionCut

DRIFT_FORMAT_VERSION = 1

# Every kind of finding, in the order reports list them.
# not-visible: a declared topic the principal may not DESCRIBE, so whether it exists (and what it
# holds) is unknown: said as itself, never as a topic to create.
ItemKind = Literal[
    "data-loss",
    "retention-lowered",
    "offline-partition",
    "under-replicated",
    "replicas-on-drained-broker",
    "not-visible",
    "plan-error",
    "pending-change",
    "pending-truncation",
    "config-drift",
    "unmanaged-topic",
    "reassignment-in-progress",
    "leader-not-preferred",
    "disk-above-limit",
    "unbounded-growth",
    "idle-topic",
]
ITEM_KINDS: tuple[ItemKind, ...] = get_args(ItemKind)
# Findings about the cluster's health that are not drift from the manifests: no exit code 3. A
# topic without limits that grows is what its manifest declares; a broker above the policy's
# max_disk_usage is not (`disk-above-limit` is drift).
# An idle topic is not drift either: its manifest (or none) may well still want it.
HEALTH_KINDS: frozenset[ItemKind] = frozenset(
    {"reassignment-in-progress", "leader-not-preferred", "unbounded-growth", "idle-topic"}
)

# Every kind of change-log entry, in the order a topic's entries are listed.
ChangeKind = Literal[
    "topic-created",
    "topic-deleted",
    "topic-recreated",
    "partitions-added",
    "partitions-removed",
    "replication-factor",
    "replicas",
    "leaders",
    "config-set",
    "config-changed",
    "config-removed",
]
CHANGE_KINDS: tuple[ChangeKind, ...] = get_args(ChangeKind)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PendingChange(_Model):
    """One planned action, summarised (`symbol` as in plans: + ~ x -)."""

    topic: str
    kind: ActionKind
    symbol: str
    summary: str
    destructive: bool = False


class ConfigDrift(_Model):
    """One config key whose value on the cluster is not what the manifests declare.

    `origin` tells a key set on the topic (`topic`) from a value inherited from a broker setting
    (`broker`: dynamic per-broker, dynamic cluster default or static server.properties) or from
    Kafka's built-in default (`default`); `absent` when the cluster does not report the key.
    """

    topic: str
    key: str
    drift: Literal["differs", "inherited", "not-pinned", "undeclared"]
    # differs: set on the topic with another value; inherited: not set on the topic and the
    # inherited value differs; not-pinned: inherited value equals the manifest's but is not set on
    # the topic (a broker change would move it); undeclared: set on the topic, not in the manifest.
    origin: Literal["topic", "broker", "default", "absent"]
    source: str | None = None  # the ConfigSource name reported by the broker
    current: str | None = None
    desired: str | None = None
    sensitive: bool = False
    will_remove: bool = False  # undeclared and the topic opts in to `undeclared_configs: remove`


class TruncationRow(_Model):
    topic: str
    partition: int
    leader: int
    leader_epoch: int
    log_start_offset: int
    high_watermark: int
    target_offset: int
    records: int
    estimated_bytes: int | None = None  # None when the partition's size is unknown


class PendingTruncation(_Model):
    topic: str
    rules: list[str]
    partitions: int
    records: int
    estimated_bytes: int | None = None  # None unless every cut partition's size is known


class ReplicaProblem(_Model):
    topic: str
    partition: int
    state: Literal["offline", "under-replicated"]
    leader: int
    replicas: list[int]
    isr: list[int]
    offline_replicas: list[int] = Field(default_factory=list)


class ReassigningPartition(_Model):
    """A partition with a reassignment in progress: its replicas as Metadata shows them (the
    target, then the replicas being removed) and the brokers being added and removed."""

    partition: int
    replicas: list[int]
    adding: list[int] = Field(default_factory=list)
    removing: list[int] = Field(default_factory=list)


class ReplicaHealth(_Model):
    """Where one topic's replicas stand, summarised: partitions being reassigned, partitions with a
    replica on a broker the cluster drains, and partitions led by a replica other than the first
    (the preferred leader) while not being reassigned."""

    topic: str
    partitions: int
    reassigning: list[ReassigningPartition] = Field(default_factory=list)
    drained: list[int] = Field(default_factory=list)  # partitions
    drained_brokers: list[int] = Field(default_factory=list)
    not_preferred: list[int] = Field(default_factory=list)  # partitions

    @property
    def empty(self) -> bool:
        return not (self.reassigning or self.drained or self.not_preferred)


class DataLossSignal(_Model):
    """A partition whose log now ends below an offset seen earlier (KIP-320's divergence test)."""

    topic: str
    partition: int
    evidence: Literal["leader-epoch", "offsets-backwards"]
    earlier_epoch: int
    earlier_high_watermark: int
    current_epoch: int
    current_high_watermark: int
    # The end offset the current leader reports for earlier_epoch (OffsetForLeaderEpoch), when asked.
    epoch_end_offset: int | None = None
    records_lost: int  # upper bound: offsets seen earlier that the log no longer holds as they were


class RetentionLowered(_Model):
    """A topic whose retention on the cluster deletes records that the manifests, or the cluster as
    observed earlier, would keep: lowered out of band (`reconciler.drift.lowered_retention`).

    `cut` is the planner's estimate for the change from that value to the cluster's, measured back
    from when the cluster was read: per partition, up to what the brokers delete at their next
    retention check (or may already have deleted). None in it is "unknown", never 0.
    """

    topic: str
    against: list[Literal["manifests", "earlier"]]  # what the cluster's settings are lower than
    cut: RetentionCut
    unknown: dict[int, str] = Field(default_factory=dict)  # partition -> why its estimate is unknown
    # Against an earlier observation: how far the log start moved since (summed over partitions
    # readable in both), i.e. records already gone, by retention or otherwise.
    records_since: int | None = None


class UnverifiedPartition(_Model):
    """A partition whose leader epoch changed since the earlier snapshot and whose current leader
    gave no usable OffsetForLeaderEpoch answer for the earlier epoch (an error, no answer, or
    "epoch unknown"). That is no evidence either way: only offsets going backwards were checked,
    and those found nothing, so a truncation the high watermark has since grown past would go
    unseen. Not a finding (no item, no effect on the exit code); listed so nobody reads the
    report as "checked, no loss".
    """

    topic: str
    partition: int
    earlier_epoch: int
    earlier_high_watermark: int
    current_epoch: int
    current_high_watermark: int
    reason: str


class ChangeLogEntry(_Model):
    """One thing that moved on a topic between the earlier observation and this one
    (`reconciler.drift.changelog`). Not a finding: what differs from Git is the rest of the report.

    `old` and `new` are the values before and now, as text: a topic's shape ("3 partitions,
    replication factor 3") for topic-created / topic-deleted, its ids for topic-recreated, counts
    for partitions-* and replication-factor, broker ids ("1,2,3") for replicas, config values for
    config-*. None where there is none, and always for a `sensitive` key.
    """

    topic: str
    kind: ChangeKind
    partition: int | None = None  # replicas
    key: str | None = None  # config-*
    old: str | None = None
    new: str | None = None
    source: str | None = None  # config-*: where `new` comes from (a ConfigSource name); None when the key is gone
    count: int | None = None  # leaders: how many partitions have another leader
    sensitive: bool = False  # config-*: sensitive in either observation, so neither value is shown


class PlanDiagnostic(_Model):
    severity: str
    code: str
    message: str
    topic: str | None = None
    partition: int | None = None


class DiskFinding(_Model):
    """A broker's disk (docs/capacity.md): `disk-above-limit`, its log directories use more of their
    filesystem than the policy's max_disk_usage; `unbounded-growth`, a topic without any limit
    (delete policy, retention.ms and retention.bytes -1) grows, filling `broker` first (in
    `days_until_full` at the current rate; None: that broker's capacity is unknown)."""

    kind: Literal["disk-above-limit", "unbounded-growth"]
    broker: int
    topic: str = ""  # unbounded-growth
    log_dirs: list[str] = Field(default_factory=list)
    used_bytes: int | None = None
    total_bytes: int | None = None
    limit: float | None = None  # disk-above-limit: the policy's max_disk_usage
    bytes_per_day: int | None = None  # unbounded-growth: the topic's, over all its replicas
    broker_bytes_per_day: int | None = None  # unbounded-growth: on `broker`
    days_until_full: float | None = None
    method: str = ""  # unbounded-growth: how the rate was measured


class IdleTopic(_Model):
    """A topic shown idle for at least the Policy's `idle_after` (`reconciler.drift.idle_topics`): its
    evidence (docs/idle-topics.md) as read at `read_at_ms`, summarised."""

    topic: str
    managed: bool  # declared in the manifests
    # How long since the largest record timestamp on disk, at the read; None: no record on disk.
    idle_for_ms: int | None
    newest_timestamp: int | None = None  # ms since the epoch; None: no record
    newest_partition: int | None = None
    read_at_ms: int
    partitions: int
    records: int  # high watermark - log start, summed
    size_bytes: int | None = None
    groups: list[str] = Field(default_factory=list)  # groups with committed offsets on it: "name (state)"
    unchanged_since: bool = False  # compared with the earlier observation: nothing written or committed since


class DriftItem(_Model):
    """One finding as one flat row (the `drift_items` table)."""

    cluster: str
    kind: ItemKind
    topic: str
    partition: int | None = None
    key: str | None = None
    detail: str
    records: int | None = None
    bytes: int | None = None
    # The Team owning the topic (docs/teams.md), set after either engine (reconciler.drift.by_owner);
    # left out of the JSON without one, and out of the tables.
    owner: str | None = Field(default=None, exclude_if=lambda v: v is None)


class OwnerDrift(_Model):
    """One team's part of a cluster's findings: how many, by kind."""

    owner: str
    findings: int
    kinds: dict[str, int]


class TopicDrift(_Model):
    """Everything found for one topic of one cluster: the unit both engines compute."""

    topic: str
    managed: bool  # declared in the manifests (present or absent)
    observed: bool  # on the cluster
    hidden: bool = False  # declared, and the principal may not DESCRIBE it (whether it exists is unknown)
    partitions: int = 0  # observed partitions
    unmanaged: bool = False  # on the cluster, in no manifest, not excluded
    changes: list[PendingChange] = Field(default_factory=list)
    config: list[ConfigDrift] = Field(default_factory=list)
    truncation: PendingTruncation | None = None
    truncation_rows: list[TruncationRow] = Field(default_factory=list)
    replicas: list[ReplicaProblem] = Field(default_factory=list)
    health: ReplicaHealth | None = None
    data_loss: list[DataLossSignal] = Field(default_factory=list)
    retention: RetentionLowered | None = None
    unverified: list[UnverifiedPartition] = Field(default_factory=list)
    diagnostics: list[PlanDiagnostic] = Field(default_factory=list)
    change_log: list[ChangeLogEntry] = Field(default_factory=list)
    idle: IdleTopic | None = None

    # What a report lists for a topic (`empty` when none), and the fields that say which topic it
    # is or detail a finding: tests/drift/test_compute.py checks that every field is one or the
    # other and that `empty` reads every finding.
    FINDINGS: ClassVar[tuple[str, ...]] = (
        "hidden",
        "unmanaged",
        "changes",
        "config",
        "truncation",
        "replicas",
        "health",
        "data_loss",
        "retention",
        "unverified",
        "diagnostics",
        "change_log",
        "idle",
    )
    NOT_FINDINGS: ClassVar[tuple[str, ...]] = ("topic", "managed", "observed", "partitions", "truncation_rows")

    @property
    def empty(self) -> bool:
        return not (  # spelled out rather than a loop over FINDINGS: asked of every topic of a fleet
            self.hidden
            or self.unmanaged
            or self.changes
            or self.config
            or self.truncation
            or self.replicas
            or self.health
            or self.data_loss
            or self.retention
            or self.unverified
            or self.diagnostics
            or self.change_log
            or self.idle
        )


class DriftCounts(_Model):
    pending_changes: int = 0
    unmanaged_topics: int = 0
    config_drift: int = 0
    pending_truncations: int = 0
    truncation_records: int = 0
    truncation_bytes: int = 0  # sum over partitions whose size is known
    under_replicated: int = 0
    offline: int = 0
    data_loss: int = 0
    # Topics whose retention was lowered out of band, and up to how many records and bytes their
    # cuts delete (the known part of the estimates: partitions whose estimate is unknown add nothing).
    retention_lowered: int = 0
    retention_records: int = 0
    retention_bytes: int = 0
    unverified: int = 0  # partitions without leader-epoch evidence (not findings)
    # The change log against the earlier observation (not findings): entries, and topics with any.
    change_log: int = 0
    changed_topics: int = 0
    not_visible: int = 0  # declared topics the principal may not see
    plan_errors: int = 0  # besides those of topics not visible
    # Partitions: with a replica on a drained broker (drift), being reassigned and led by a
    # replica other than the preferred one (health).
    on_drained_brokers: int = 0
    reassigning: int = 0
    leader_not_preferred: int = 0
    disk_above_limit: int = 0  # brokers
    unbounded_growth: int = 0  # topics
    # Topics shown idle (health, not drift); None: the Policy sets no idle_after (left out of JSON).
    idle_topics: int | None = Field(default=None, exclude_if=lambda v: v is None)
    items: int = 0


class ClusterDrift(_Model):
    cluster: str
    cluster_id: str | None = None
    observed_at: datetime | None = None
    since: datetime | None = None  # when the earlier snapshot was taken, if one was given
    topics_observed: int = 0
    topics_managed: int = 0
    partitions_observed: int = 0
    # Why partition sizes are unknown (the error DescribeLogDirs answered), said once; None: read
    # or not asked for.
    sizes_refused: str | None = None
    counts: DriftCounts = DriftCounts()
    changes: list[PendingChange] = Field(default_factory=list)
    unmanaged_topics: list[str] = Field(default_factory=list)
    not_visible_topics: list[str] = Field(default_factory=list)
    config: list[ConfigDrift] = Field(default_factory=list)
    truncations: list[PendingTruncation] = Field(default_factory=list)
    truncation_rows: list[TruncationRow] = Field(default_factory=list)
    replicas: list[ReplicaProblem] = Field(default_factory=list)
    health: list[ReplicaHealth] = Field(default_factory=list)
    data_loss: list[DataLossSignal] = Field(default_factory=list)
    retention: list[RetentionLowered] = Field(default_factory=list)
    unverified: list[UnverifiedPartition] = Field(default_factory=list)
    diagnostics: list[PlanDiagnostic] = Field(default_factory=list)
    items: list[DriftItem] = Field(default_factory=list)
    # Per team owning a topic with findings (reconciler.drift.by_owner); left out without one.
    owners: list[OwnerDrift] = Field(default_factory=list, exclude_if=lambda v: v == [])
    # What moved since `since`, topic by topic; not drift by itself (`has_drift` is the items').
    change_log: list[ChangeLogEntry] = Field(default_factory=list)
    disk: list[DiskFinding] = Field(default_factory=list)  # brokers above the limit, then growing topics
    # The Policy's idle_after and the topics shown idle that long; None: not set (left out of JSON).
    idle_after_ms: int | None = Field(default=None, exclude_if=lambda v: v is None)
    idle: list[IdleTopic] | None = Field(default=None, exclude_if=lambda v: v is None)

    @property
    def has_drift(self) -> bool:
        return any(i.kind not in HEALTH_KINDS for i in self.items)


class DriftReport(_Model):
    format_version: int = DRIFT_FORMAT_VERSION
    generated_at: datetime | None = None
    engine: str | None = None
    clusters: list[ClusterDrift] = Field(default_factory=list)

    @property
    def has_drift(self) -> bool:
        return any(c.has_drift for c in self.clusters)

    def comparable(self) -> dict:
        """The report without when and how it was produced: equal for equal inputs."""
        return self.model_dump(mode="json", exclude={"generated_at", "engine"})
