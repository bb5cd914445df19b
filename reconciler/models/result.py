"""What applying a plan did: one outcome per action (and per partition for truncations)."""
from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict, Field

from reconciler.models.plan import ActionKind, Plan

RESULT_FORMAT_VERSION = 1


class Status(str, Enum):
    APPLIED = "applied"
    ALREADY_SATISFIED = "already_satisfied"
    REFUSED = "refused"  # not attempted: a precondition or safety check failed
    FAILED = "failed"  # attempted, the broker said no (or did not answer)


class PartitionOutcome(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    partition: int
    status: Status
    target_offset: int
    low_watermark: int | None = None  # the log start offset the broker reported afterwards
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

    @property
    def succeeded(self) -> bool:
        return all(o.status in (Status.APPLIED, Status.ALREADY_SATISFIED) for o in self.outcomes)

    @property
    def converged(self) -> bool | None:
        if self.follow_up is None:
            return None
        return not self.follow_up.has_changes and not self.follow_up.waiting_partitions
