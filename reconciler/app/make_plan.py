"""`reconcile plan`: the manifests planned against a saved snapshot, or against the live cluster
and then validated on its brokers (validate_only: nothing is changed)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from reconciler.app.inputs import manifests_commit, require_cluster, snapshot_to_plan_on
from reconciler.app.outcome import Outcome
from reconciler.manifests import load_manifests
from reconciler.models.desired import DesiredState
from reconciler.models.plan import Plan
from reconciler.plan.binding import bind
from reconciler.plan.planner import PlanOptions
from reconciler.plan.planner import plan as make_plan

if TYPE_CHECKING:
    from reconciler.app.cluster_access import Connect


@dataclass(frozen=True)
class PlanOutcome:
    plan: Plan

    @property
    def kind(self) -> Outcome:
        if self.plan.has_errors:
            return Outcome.FAILED
        return Outcome.CHANGES if self.plan.has_changes else Outcome.DONE


def plan_cluster(
    manifests_dir: str, cluster: str | None, snapshot: str | None, connect: Connect, validate: bool = True
) -> PlanOutcome:
    """Against `snapshot` when given (of `cluster`, if named), else against the live `cluster`;
    `validate`: ask the brokers whether they would accept each write. The plan records what the
    manifests meant (`reconciler.plan.binding`): `apply` refuses it once they mean something else."""
    manifests = load_manifests(manifests_dir)
    if snapshot:
        observed = snapshot_to_plan_on(manifests, snapshot, cluster)
        desired = manifests.desired_state(observed.cluster)
        return PlanOutcome(_bound(make_plan(desired, observed), desired, manifests_dir))
    from reconciler.plan.validate_only import validate_on_brokers  # a plan against a snapshot has no brokers to ask

    desired = manifests.desired_state(require_cluster(manifests, cluster))
    with connect(desired.cluster) as kafka:
        result = make_plan(desired, kafka.observe_desired(desired, every_offset=False), PlanOptions(validated=validate))
        if validate:
            result = validate_on_brokers(result, kafka)
    return PlanOutcome(_bound(result, desired, manifests_dir))


def _bound(result: Plan, desired: DesiredState, manifests_dir: str) -> Plan:
    return result.model_copy(update={"manifests": bind(desired, manifests_commit(manifests_dir))})
