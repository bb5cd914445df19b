"""`reconcile apply`: a saved plan applied exactly, or a fresh plan made, reviewed and applied;
then planned again to tell whether the cluster converged. `--cancel-reassignments` instead
cancels the replica reassignments in progress on the managed topics."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from reconciler.app.cluster_access import Connect
from reconciler.app.inputs import require_cluster
from reconciler.app.outcome import Outcome
from reconciler.apply.executor import ApplyOptions, apply_plan
from reconciler.apply.reassignment import cancel
from reconciler.errors import ReconcilerError, shown
from reconciler.manifests import load_manifests
from reconciler.models.plan import Plan
from reconciler.models.result import ApplyResult
from reconciler.plan.planner import plan as make_plan
from reconciler.plan.validate_only import validate_on_brokers
from reconciler.ports import Progress


class Review(Protocol):
    """How a freshly made plan is shown and approved before it is applied (the CLI: on the terminal)."""

    def show(self, plan: Plan) -> None:
        """Every fresh plan is shown, also one with nothing to apply or with errors."""

    def approve(self, plan: Plan, cluster: str) -> None:
        """Asked only for a plan that can be applied: return to apply it, raise to stop."""


@dataclass(frozen=True)
class ApplyOutcome:
    result: ApplyResult | None  # None: the fresh plan had nothing to apply, or errors (it was shown)
    plan: Plan

    @property
    def kind(self) -> Outcome:
        if self.result is None:
            return Outcome.FAILED if self.plan.has_errors else Outcome.DONE
        return Outcome.DONE if self.result.succeeded else Outcome.FAILED


@dataclass(frozen=True)
class CancelOutcome:
    result: ApplyResult  # one outcome per topic that had reassignments in progress

    @property
    def kind(self) -> Outcome:
        return Outcome.DONE if self.result.succeeded else Outcome.FAILED


def apply_changes(
    manifests_dir: str,
    plan_file: str | None,
    cluster: str | None,
    connect: Connect,
    review: Review,
    options: ApplyOptions | None = None,
    progress: Progress = lambda _: None,
) -> ApplyOutcome:
    """Every action's preconditions are checked against a fresh read and the current manifests
    first (see `reconciler.apply.executor`); the brokers validate every write before the first one is sent."""
    manifests = load_manifests(manifests_dir)
    saved = None
    if plan_file:
        from reconciler.files.saved_plan import load_plan_file

        saved = load_plan_file(plan_file)
        if cluster and cluster != saved.cluster:
            raise ReconcilerError(f"{plan_file} is a plan for {shown(saved.cluster)}, not {shown(cluster)}.")
        if saved.cluster not in manifests.clusters:
            raise ReconcilerError(
                f"{plan_file} is a plan for cluster {shown(saved.cluster)}, which the manifests in "
                f"{manifests_dir} do not declare (known: {', '.join(manifests.cluster_names())})."
            )
        cluster = saved.cluster
    desired = manifests.desired_state(require_cluster(manifests, cluster))
    with connect(desired.cluster) as kafka:
        if saved is not None:
            to_apply = saved
        else:
            # The same preflight as `plan`: what the brokers would refuse is shown now, and nothing is applied.
            to_apply = validate_on_brokers(make_plan(desired, kafka.observe_desired(desired, every_offset=False)), kafka)
            review.show(to_apply)
            if not to_apply.has_changes or to_apply.has_errors:
                return ApplyOutcome(result=None, plan=to_apply)
            review.approve(to_apply, desired.cluster.name)
        result = apply_plan(to_apply, kafka, desired, options or ApplyOptions(), progress=progress)
        follow_up = make_plan(desired, kafka.observe_desired(desired, every_offset=False))
    return ApplyOutcome(result=result.model_copy(update={"follow_up": follow_up}), plan=to_apply)


def cancel_reassignments(
    manifests_dir: str,
    cluster: str | None,
    connect: Connect,
    throttle_bytes_per_s: int | None = None,
    progress: Progress = lambda _: None,
) -> CancelOutcome:
    """Cancel the reassignments in progress on the topics the manifests declare for `cluster`
    (Kafka records no owner: these are the ones this tool may have started, and any other one
    there works against the manifests too), remove their throttles, then plan again: the
    manifests still ask for what was cancelled until they change."""
    manifests = load_manifests(manifests_dir)
    desired = manifests.desired_state(require_cluster(manifests, cluster))
    rate = throttle_bytes_per_s or desired.cluster.reassignment.throttle_bytes_per_s
    with connect(desired.cluster) as kafka:
        outcomes = cancel(sorted(desired.topics), kafka, rate, progress)
        follow_up = make_plan(desired, kafka.observe_desired(desired, every_offset=False))
    return CancelOutcome(ApplyResult(cluster=desired.cluster.name, outcomes=outcomes, follow_up=follow_up))
