"""`reconcile apply`: a saved plan applied exactly, or a fresh plan made, reviewed and applied;
then planned again to tell whether the cluster converged. `--cancel-reassignments` instead
cancels the replica reassignments in progress on the managed topics."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from reconciler.app.cluster_access import Connect, LiveCluster
from reconciler.app.inputs import manifests_commit, require_cluster
from reconciler.app.outcome import Outcome
from reconciler.apply.executor import ApplyOptions, apply_plan, refusal_without_cluster
from reconciler.apply.reassignment import cancel, sweep
from reconciler.errors import PlanRejected, ReconcilerError, failure_text, shown
from reconciler.manifests import load_manifests
from reconciler.models.desired import DesiredState
from reconciler.models.observed import ObservedState
from reconciler.models.plan import Plan
from reconciler.models.result import ApplyResult
from reconciler.plan.binding import binding_refusal
from reconciler.plan.planner import PlanOptions
from reconciler.plan.planner import plan as make_plan
from reconciler.plan.validate_only import validate_on_brokers
from reconciler.ports import ClusterPort, Progress


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
        return Outcome.DONE if self.result.finished else Outcome.FAILED


@dataclass(frozen=True)
class CancelOutcome:
    result: ApplyResult  # one outcome per topic that had reassignments in progress

    @property
    def kind(self) -> Outcome:
        return Outcome.DONE if self.result.finished else Outcome.FAILED


def apply_changes(
    manifests_dir: str,
    plan_file: str | None,
    cluster: str | None,
    connect: Connect,
    review: Review,
    options: ApplyOptions | None = None,
    progress: Progress = lambda _: None,
) -> ApplyOutcome:
    """A saved plan is refused whole, before connecting, when the manifests now mean something else
    for its cluster than when it was made (`reconciler.plan.binding`). Every action's preconditions
    are checked against a fresh read and the current manifests first (see
    `reconciler.apply.executor`); the brokers validate every write before the first one is sent."""
    manifests = load_manifests(manifests_dir)
    options = options or ApplyOptions()
    saved = None
    if plan_file:
        from reconciler.files.saved_plan import load_plan_file

        saved = load_plan_file(plan_file)
        if cluster and cluster != saved.cluster:
            raise PlanRejected(
                f"{plan_file} is a plan for cluster {shown(saved.cluster)}, not {shown(cluster)} as --cluster says; "
                f"nothing was written. Apply the plan made for {shown(cluster)}, or leave --cluster out to apply "
                f"this one to {shown(saved.cluster)}."
            )
        if saved.cluster not in manifests.clusters:
            raise ReconcilerError(
                f"{plan_file} is a plan for cluster {shown(saved.cluster)}, which the manifests in "
                f"{manifests_dir} do not declare (known: {', '.join(manifests.cluster_names())})."
            )
        cluster = saved.cluster
    desired = manifests.desired_state(require_cluster(manifests, cluster))
    if saved is not None and plan_file:
        # Before connecting: a plan is applied only with the manifests it was reviewed with, and
        # what refuses it whole without reading the cluster is said before an unreachable cluster could hide it.
        refusal = binding_refusal(saved, plan_file, desired, manifests_dir, manifests_commit(manifests_dir))
        refusal = refusal or refusal_without_cluster(saved, desired)
        if refusal:
            raise PlanRejected(refusal)
    with connect(desired.cluster) as kafka:
        if saved is not None:
            to_apply = saved
        else:
            # The same preflight as `plan`: what the brokers would refuse is shown now, and nothing is applied.
            observed = kafka.observe_desired(desired, every_offset=False)
            to_apply = validate_on_brokers(make_plan(desired, observed, PlanOptions(validated=True)), kafka)
            review.show(to_apply)
            if not to_apply.has_changes or to_apply.has_errors:
                if not to_apply.has_errors:
                    _sweep(observed, kafka, desired, options, progress)
                return ApplyOutcome(result=None, plan=to_apply)
            review.approve(to_apply, desired.cluster.name)
        result, observed_after = _plan_again(apply_plan(to_apply, kafka, desired, options, progress), kafka, desired)
        if observed_after is not None:
            _sweep(observed_after, kafka, desired, options, progress)
    return ApplyOutcome(result=result, plan=to_apply)


def _plan_again(result: ApplyResult, kafka: LiveCluster, desired: DesiredState) -> tuple[ApplyResult, ObservedState | None]:
    """The result with the plan made after it, and the read it was made from. The writes are done:
    what fails now is reported with their outcomes (convergence unknown), never instead of them.
    An apply already stopped by an interrupt reads nothing more: the user asked it to stop."""
    if result.convergence_unknown:
        return result, None
    try:
        # Every write was confirmed on every broker (or reported as not), so this read sees them.
        observed = kafka.observe_desired(desired, every_offset=False)
        follow_up = make_plan(desired, observed)
    except (Exception, KeyboardInterrupt) as e:  # noqa: BLE001 - whatever it is, the outcomes of the writes must reach the user
        why = f"reading the cluster again after the writes failed: {failure_text(e)}"
        return result.model_copy(update={"convergence_unknown": why}), None
    return result.model_copy(update={"follow_up": follow_up}), observed


def _sweep(observed: ObservedState, kafka: ClusterPort, desired: DesiredState, options: ApplyOptions, progress: Progress) -> None:
    """A reassignment that finished between two runs leaves the broker rates this tool set: remove
    them (reconciler.apply.reassignment.sweep). A clean-up: what it could not check or remove is
    told on progress, and never fails the apply."""
    try:
        problems = sweep(observed, kafka, desired.cluster, progress, options.confirm_timeout_s)
    except (Exception, KeyboardInterrupt) as e:  # noqa: BLE001 - a broker gone, say: the next apply sweeps again
        problems = [f"the replication throttle rates an earlier apply may have left were not checked: {failure_text(e)}"]
    for problem in problems:
        progress(problem)


def cancel_reassignments(
    manifests_dir: str,
    cluster: str | None,
    connect: Connect,
    progress: Progress = lambda _: None,
    confirm_timeout_s: float = 10.0,
) -> CancelOutcome:
    """Cancel the reassignments in progress on the topics the manifests declare for `cluster`
    (Kafka records no owner: these are the ones this tool may have started, and any other one
    there works against the manifests too), remove their throttles (the broker rates this tool
    set are found by their markers, whatever rate was given), then plan again once every broker
    shows the cancel: the manifests still ask for what was cancelled until they change."""
    manifests = load_manifests(manifests_dir)
    desired = manifests.desired_state(require_cluster(manifests, cluster))
    with connect(desired.cluster) as kafka:
        outcomes = cancel(sorted(desired.topics), kafka, progress, confirm_timeout_s)
        result, _ = _plan_again(ApplyResult(cluster=desired.cluster.name, outcomes=outcomes), kafka, desired)
    return CancelOutcome(result)
