"""What applying a plan did: one outcome per action (and per partition for truncations and
replica reassignments)."""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum

from pydantic import BaseModel, ConfigDict, Field

from reconciler.models.plan import ActionKind, Plan

RESULT_FORMAT_VERSION = 1


class Status(str, Enum):
    APPLIED = "applied"
    ALREADY_SATISFIED = "already_satisfied"
    # Started (or found running) and not finished within the wait: a later apply waits for it.
    IN_PROGRESS = "in_progress"
    REFUSED = "refused"  # not attempted: a precondition or safety check failed
    FAILED = "failed"  # attempted, the broker said no (or did not answer)


# Best first: an action is as bad as its worst partition.
SEVERITY = [Status.ALREADY_SATISFIED, Status.APPLIED, Status.IN_PROGRESS, Status.REFUSED, Status.FAILED]


def worst(statuses: Iterable[Status]) -> Status:
    return max(statuses, key=SEVERITY.index)


class PartitionOutcome(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    partition: int
    status: Status
    target_offset: int | None = None  # a truncation's target
    low_watermark: int | None = None  # the log start offset the broker reported afterwards
    replicas: list[int] | None = None  # a reassignment's: the replicas the partition has (or gets)
    message: str = ""


class ActionOutcome(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: ActionKind
    topic: str
    status: Status
    message: str = ""
    partitions: list[PartitionOutcome] = Field(default_factory=list)


class ApplyResult(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    format_version: int = RESULT_FORMAT_VERSION
    cluster: str
    outcomes: list[ActionOutcome] = Field(default_factory=list)
    # The plan made after applying: empty when the cluster converged on the manifests.
    follow_up: Plan | None = None
    # Why there is no follow-up plan after writing (the read after the writes failed): whether
    # the cluster converged is unknown. Left out of the JSON when it was checked.
    convergence_unknown: str | None = Field(default=None, exclude_if=lambda v: v is None)

    @property
    def succeeded(self) -> bool:
        """Nothing refused or failed. A reassignment still in progress is no failure: Kafka took
        it and is copying; the convergence line says it is not done, and a later apply waits for it."""
        return all(o.status in (Status.APPLIED, Status.ALREADY_SATISFIED, Status.IN_PROGRESS) for o in self.outcomes)

    @property
    def finished(self) -> bool:
        """Succeeded, and the cluster was read again after it (a command that could not is an error)."""
        return self.succeeded and self.convergence_unknown is None

    @property
    def in_progress(self) -> list[str]:
        """topic-partition of every reassignment still running when apply stopped waiting."""
        return [f"{o.topic}-{p.partition}" for o in self.outcomes for p in o.partitions if p.status is Status.IN_PROGRESS]

    @property
    def converged(self) -> bool | None:
        if self.follow_up is None:
            return None
        return not self.follow_up.has_changes and not self.follow_up.waiting_partitions
