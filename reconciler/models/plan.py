"""A plan: the ordered actions that would take the cluster to the declared state.

Plain data (the saved-plan format is its JSON). Each action records the observed values it
depends on, so that `apply` can refuse it when the cluster has moved on since the plan.
"""
from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from reconciler.models.desired import SourceRef

PLAN_FORMAT_VERSION = 1


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Severity(str, Enum):
    ERROR = "error"  # the plan must not be applied
    WARNING = "warning"
    INFO = "info"


class Diagnostic(_Model):
    severity: Severity
    code: str  # stable identifier, e.g. "partition-decrease"
    message: str
    topic: str | None = None
    partition: int | None = None
    source: SourceRef | None = None
    # The kind of the topic's action it concerns ("alter_configs", ...), and the config key where
    # known, so that every renderer shows it under that action and not another of the topic's.
    action: str | None = None
    key: str | None = None


class ConfigChange(_Model):
    key: str
    op: Literal["set", "delete"]
    before: str | None = None  # effective value now (None if unknown or sensitive)
    before_source: str | None = None  # ConfigSource name of the current value
    after: str | None = None  # value set; for delete, None (the key reverts to its inherited value)
    sensitive: bool = False


class TopicPreconditions(_Model):
    """What apply re-reads and compares before touching a topic."""

    exists: bool
    topic_id: str | None = None
    partition_count: int | None = None
    # Topic-level config values the action depends on: key -> value set on the topic (None = not set).
    configs: dict[str, str | None] = Field(default_factory=dict)


class _Action(_Model):
    topic: str
    destructive: bool = False
    reason: str = ""  # explains, never decides
    preconditions: TopicPreconditions
    source: SourceRef | None = None


class CreateTopic(_Action):
    kind: Literal["create_topic"] = "create_topic"
    partitions: int
    replication_factor: int
    configs: dict[str, str] = Field(default_factory=dict)


class AddPartitions(_Action):
    kind: Literal["add_partitions"] = "add_partitions"
    before: int
    after: int


class AlterConfigs(_Action):
    kind: Literal["alter_configs"] = "alter_configs"
    changes: list[ConfigChange]


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
            raise ValueError(f"partition {self.partition}: target offset {self.target_offset} is outside the "
                             f"log seen when planning [{self.log_start_offset}, {self.high_watermark}]")
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
        present = self.high_watermark - self.log_start_offset
        return (f"deleting {self.records_to_delete:,} of {present:,} records ({self.delete_fraction:.0%}) exceeds "
                f"the policy limit of {limit:.0%} per apply")


class TruncateRecords(_Action):
    kind: Literal["truncate"] = "truncate"
    destructive: bool = True
    rules: list[str]  # human descriptions of the rules that set the targets
    rule_kinds: list[str]
    partitions: list[PartitionTruncation]
    estimated_bytes: int | None = None

    @property
    def records_to_delete(self) -> int:
        return sum(p.records_to_delete for p in self.partitions)


class DeleteTopic(_Action):
    kind: Literal["delete_topic"] = "delete_topic"
    destructive: bool = True
    partitions: int
    records: int


Action = Annotated[
    CreateTopic | AddPartitions | AlterConfigs | TruncateRecords | DeleteTopic,
    Field(discriminator="kind")]

# Apply order, and the symbol each kind is shown with.
ACTION_ORDER = {"create_topic": 0, "add_partitions": 1, "alter_configs": 2, "truncate": 3, "delete_topic": 4}
ACTION_SYMBOLS = {"create_topic": "+", "add_partitions": "~", "alter_configs": "~", "truncate": "x",
                  "delete_topic": "-"}


class PlanSummary(_Model):
    create: int = 0
    change: int = 0
    truncate: int = 0
    delete: int = 0
    records_to_delete: int = 0
    errors: int = 0
    warnings: int = 0


class Plan(_Model):
    format_version: int = PLAN_FORMAT_VERSION
    cluster: str
    cluster_id: str | None = None
    observed_at: datetime | None = None
    actions: list[Action] = Field(default_factory=list)
    unmanaged_topics: list[str] = Field(default_factory=list)
    diagnostics: list[Diagnostic] = Field(default_factory=list)

    @property
    def has_changes(self) -> bool:
        return bool(self.actions)

    @property
    def has_errors(self) -> bool:
        return any(d.severity is Severity.ERROR for d in self.diagnostics)

    @property
    def waiting_partitions(self) -> list[str]:
        """Partitions whose planning waits until they are back online ("topic-partition")."""
        return [f"{d.topic}-{d.partition}" for d in self.diagnostics if d.code == "partition-offline"]

    def summary(self) -> PlanSummary:
        kinds = [a.kind for a in self.actions]
        return PlanSummary(
            create=kinds.count("create_topic"),
            change=kinds.count("add_partitions") + kinds.count("alter_configs"),
            truncate=kinds.count("truncate"),
            delete=kinds.count("delete_topic"),
            records_to_delete=sum(a.records_to_delete for a in self.actions if isinstance(a, TruncateRecords)),
            errors=sum(d.severity is Severity.ERROR for d in self.diagnostics),
            warnings=sum(d.severity is Severity.WARNING for d in self.diagnostics),
        )
