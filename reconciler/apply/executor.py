"""Applying a plan: the only writer. Knows nothing of sockets; talks to a `ClusterPort`.

Safety rules, in the order they act:
1. A plan with error diagnostics is refused whole, and so is one with more destructive actions
   than the policy's max_destructive_actions (the planner made that an error; checked again here)
   or one planned against another cluster id than the manifests pin: `refusal_without_cluster`,
   which `reconcile apply` asks before it connects.
2. The cluster is read again before anything is written, and every action's preconditions are
   checked against it and against the current manifests (reconciler.apply.preconditions). An action
   the cluster moved away from, that the manifests no longer ask for or allow (protection,
   policy, rules changed, `state: absent` gone), or that the principal is not authorised to make
   (its topic is hidden now, or the re-read shows the ACL operation missing: reconciler.plan.rights),
   is refused, and so are the later actions on the same topic; actions on other topics still
   run. The result says which. A config change that cuts retention is estimated again from the
   re-read and refused when it now deletes more than the policy allows.
3. Before the first write, every create, partition increase and config change still to run is
   validated by the brokers (validate_only). If they would refuse any, nothing is written: an
   irreversible partition increase must not be stranded by a config the brokers refuse later.
4. Actions run in plan order: creates, partition increases, replica reassignments, config
   changes, truncations, topic deletions. After each kind of write apply waits (bounded) until
   every broker shows it (reconciler.apply.expected_writes); one they do not show in time is reported
   as written but not confirmed, and nothing else touches its topic. When an action fails, the
   later actions on its topic are not sent; nor while a reassignment is still in progress when
   apply stops waiting (reconciler.apply.reassignment).
5. Truncation targets are the offsets fixed in the plan, never recomputed and never -1. The
   truncations of every topic go together: one DeleteRecords per leader broker per round. Right
   before DeleteRecords each partition's current leader is asked OffsetForLeaderEpoch for the
   planned epoch; if that epoch now ends below the target, the log diverged after the plan and
   the partition is refused. After a timeout the log start offset is read again before the
   partition is called failed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from reconciler.apply.expected_writes import confirm_written
from reconciler.apply.preconditions import (
    already_done,
    delete_fraction_problems,
    disk_usage_refusal,
    manifest_refusals,
    retention_problems,
    topic_changes,
    truncation_partition_problems,
)
from reconciler.apply.reassignment import ReassignOptions, reassign
from reconciler.errors import PlanRejected, failure_text
from reconciler.models.desired import ClusterSpec, DesiredState
from reconciler.models.observed import ObservedState
from reconciler.models.plan import (
    Action,
    ActionKind,
    AddPartitions,
    AlterConfigs,
    Diagnostic,
    PartitionTruncation,
    Plan,
    ReassignReplicas,
    TruncateRecords,
    unhandled,
)
from reconciler.models.result import ActionOutcome, ApplyResult, PartitionOutcome, Status, worst
from reconciler.plan import budgets, retention, rights
from reconciler.plan.policy import destructive_excess
from reconciler.plan.validate_only import broker_refusals, send_topic_requests
from reconciler.ports import BrokerError, ClusterPort, EpochCheck, ErrorKind, Progress, TopicPartition

# Bounded rounds for DeleteRecords partitions whose leader moved or whose request timed out.
LEADER_MOVE_ROUNDS = 3


@dataclass(frozen=True)
class ApplyOptions:
    allow_unfenced_truncation: bool = False  # for brokers without OffsetForLeaderEpoch
    # How long every broker is given to show a write (a create: its topic with leaders) before
    # apply reports it as written but not confirmed (reconciler.apply.expected_writes).
    topic_visible_timeout_s: float = 30.0
    confirm_timeout_s: float = 10.0
    # Replica reassignments: a throttle rate overriding the plan's, how long to wait (None: the
    # Cluster document's reassignment.wait), how often to look, and whether to elect preferred leaders.
    throttle_bytes_per_s: int | None = None
    reassignment_wait_s: float | None = None
    reassignment_poll_s: float = 2.0
    elect_leaders: bool = False


Answers = dict[str, BrokerError | None]  # topic -> the broker's error, None where it applied


def apply_plan(
    plan: Plan,
    cluster: ClusterPort,
    desired: DesiredState,
    options: ApplyOptions = ApplyOptions(),
    progress: Progress = lambda _: None,
) -> ApplyResult:
    """Apply `plan` as far as the cluster as it is now and the manifests as they are now (`desired`) allow."""
    refused = refusal_without_cluster(plan, desired)
    if refused:
        raise PlanRejected(refused)
    progress(f"reading {plan.cluster} again to check the plan's preconditions")
    # with the reassignments in progress, when the plan has any, and the sizes the teams' disk budgets count
    now = cluster.observe_for_plan(plan, budgets.sized_topics(desired, plan.actions))
    if plan.cluster_id and now.cluster_id and plan.cluster_id != now.cluster_id:
        raise PlanRejected(
            f"the plan was made for cluster id {plan.cluster_id} but {plan.cluster} now answers as "
            f"{now.cluster_id}; nothing was changed. Plan again against the right cluster."
        )

    full = disk_usage_refusal(plan, now, desired)
    if full is not None:
        raise PlanRejected(full)
    over = budgets.refusal(desired, now, plan.actions, retention.inherited_values(now))
    if over:
        raise PlanRejected(
            f"the plan for {plan.cluster} cannot be applied under the teams' budgets now: {'; '.join(over)}. Nothing was changed."
        )

    run = _Run(plan, progress, desired.cluster)
    grown = {a.topic: a.after for a in plan.actions if isinstance(a, AddPartitions)}
    for index, action in enumerate(plan.actions):
        forbidden = manifest_refusals(action, desired)
        throttled = isinstance(action, ReassignReplicas) and action.throttle_bytes_per_s is not None
        denied = rights.refusal(action.kind, action.topic, now, desired.cluster, throttled)
        moved = topic_changes(action, now, grown)
        if forbidden:
            run.refuse(index, "the manifests no longer allow it: " + "; ".join(forbidden) + ". Plan again")
        elif denied:
            run.refuse(index, denied)
        elif done := already_done(action, now):
            run.settle(index, ActionOutcome(kind=action.kind, topic=action.topic, status=Status.ALREADY_SATISFIED, message=done))
        elif moved:
            run.refuse(index, "the cluster moved since the plan: " + "; ".join(moved))
        elif isinstance(action, AlterConfigs) and (deletes := retention_problems(action, now, desired)):
            run.refuse(
                index,
                "the retention change would now delete more than the policy allows: "
                + "; ".join(deletes)
                + ". Nothing was changed; plan again",
            )
    progress("validating the plan on the brokers (validate_only)")
    refusals = broker_refusals([a for _, a in run.pending()], cluster)
    if refusals:
        return run.refuse_all(refusals)

    try:
        _write(run, now, cluster, desired, options)
    except KeyboardInterrupt as e:  # a CI job cancelled mid-apply: the user stops, and must still learn what was written
        run.stop(failure_text(e))
        return run.result().model_copy(update={"convergence_unknown": f"apply was {failure_text(e)} while writing"})
    except Exception as e:  # noqa: BLE001 - after a write, what was written must still be reported
        run.stop(failure_text(e))
    return run.result()


def _write(run: _Run, now: ObservedState, cluster: ClusterPort, desired: DesiredState, options: ApplyOptions) -> None:
    progress = run.progress
    for kind in ActionKind:  # in apply order
        run.sending = kind
        if kind is ActionKind.REASSIGN_REPLICAS:  # started together, waited for together
            items = run.pending(kind)
            if items:
                wait_s = (
                    options.reassignment_wait_s
                    if options.reassignment_wait_s is not None
                    else desired.cluster.reassignment.wait_ms / 1000
                )
                settings = ReassignOptions(
                    throttle_bytes_per_s=options.throttle_bytes_per_s,
                    wait_s=wait_s,
                    poll_s=options.reassignment_poll_s,
                    confirm_s=options.confirm_timeout_s,
                    elect_leaders=options.elect_leaders,
                )
                moving = [a for _, a in items if isinstance(a, ReassignReplicas)]
                outcomes = reassign(moving, now, cluster, settings, progress, desired.cluster)
                for index, action in items:
                    run.settle(index, outcomes[action.topic])
        elif kind is ActionKind.TRUNCATE:  # all topics together, each partition fenced
            items = run.pending(kind)
            cuts = [a for _, a in items if isinstance(a, TruncateRecords)]
            outcomes = _truncate(cuts, now, cluster, options, desired, progress) if cuts else {}
            for index, action in items:
                run.settle(index, outcomes[action.topic])
        else:
            run.each(kind, lambda actions: _send(cluster, actions, options))


def refusal_without_cluster(plan: Plan, desired: DesiredState) -> str | None:
    """Why `plan` is refused whole on what it and the manifests say, before the cluster is read
    (`reconcile apply` asks before it connects: an unreachable cluster must not hide it), or None."""
    if plan.has_errors:
        return (
            f"the plan for {plan.cluster} has {plan.summary().errors} error(s) and cannot be applied; "
            "fix them (see `reconcile plan`) and plan again."
        )
    excess = destructive_excess(plan.actions, desired.policy)
    if excess is not None:
        return (
            f"the plan for {plan.cluster} cannot be applied under the policy now in the manifests: {excess}. Nothing was changed."
        )
    if desired.cluster.name != plan.cluster:
        return f"the plan is for cluster {plan.cluster}, the manifests given are {desired.cluster.name}'s; nothing was changed."
    pinned = desired.cluster.cluster_id
    if plan.cluster_id and pinned and plan.cluster_id != pinned:
        where = f" ({desired.cluster.source})" if desired.cluster.source else ""
        return (
            f"the plan was made for cluster id {plan.cluster_id}, but the Cluster document{where} pins cluster_id "
            f"{pinned}: it was planned against another cluster (a snapshot of it); nothing was changed. Plan again "
            "against the pinned cluster."
        )
    return None


def _send(cluster: ClusterPort, actions: list[Action], options: ApplyOptions) -> Answers:
    """Write `actions`, all of one kind that is written one request per kind (not a truncation),
    and wait until every broker shows what was accepted (reconciler.apply.expected_writes)."""
    kind = actions[0].kind
    match kind:
        case ActionKind.CREATE_TOPIC | ActionKind.ADD_PARTITIONS | ActionKind.ALTER_CONFIGS:
            answers = {topic: error for (_, topic), error in send_topic_requests(cluster, actions, False).items()}
        case ActionKind.DELETE_TOPIC:
            answers = cluster.delete_topics([a.topic for a in actions])
        case ActionKind.REASSIGN_REPLICAS | ActionKind.TRUNCATE:
            raise ValueError(f"{kind} is applied per partition (reconciler.apply.reassignment, _truncate)")
        case _:
            unhandled(kind)
    timeout_s = options.topic_visible_timeout_s if kind is ActionKind.CREATE_TOPIC else options.confirm_timeout_s
    confirm_written(cluster, actions, answers, timeout_s)
    return answers


class _Run:
    """The outcomes so far. An action that did not apply (refused or failed) stops the later
    actions on its topic: they are refused, never sent."""

    def __init__(self, plan: Plan, progress: Progress, spec: ClusterSpec):
        self.plan, self.progress, self.spec = plan, progress, spec
        self.outcomes: dict[int, ActionOutcome] = {}
        self.stopped: dict[str, str] = {}  # topic -> why its later actions are not sent
        self.sending: ActionKind | None = None  # the kind of write under way

    def refuse(self, index: int, message: str) -> None:
        action = self.plan.actions[index]
        self.settle(index, ActionOutcome(kind=action.kind, topic=action.topic, status=Status.REFUSED, message=message))

    def settle(self, index: int, outcome: ActionOutcome) -> None:
        self.outcomes[index] = outcome
        if outcome.topic in self.stopped:
            return
        earlier = outcome.kind.facts.label
        if outcome.status in (Status.REFUSED, Status.FAILED):
            self.stopped[outcome.topic] = f"not sent: the earlier {earlier} of {outcome.topic} was {outcome.status.value}"
        elif outcome.status is Status.IN_PROGRESS:
            self.stopped[outcome.topic] = (
                f"not sent: the earlier {earlier} of {outcome.topic} is still in progress; "
                "the apply that finds it done sends this"
            )

    def pending(self, kind: ActionKind | None = None) -> list[tuple[int, Action]]:
        """The actions (of this kind) still to run; those of a stopped topic are refused here."""
        found = []
        for index, action in enumerate(self.plan.actions):
            if index in self.outcomes or (kind is not None and action.kind is not kind):
                continue
            if action.topic in self.stopped:
                self.refuse(index, self.stopped[action.topic])
            else:
                found.append((index, action))
        return found

    def each(self, kind: ActionKind, send: Callable[[list[Action]], Answers]) -> None:
        """Send the pending actions of one kind together; each topic's answer is its outcome."""
        items = self.pending(kind)
        if not items:
            return
        actions = [a for _, a in items]
        self.progress(f"{kind}: {len(actions)} topic(s)")
        errors = send(actions)
        for index, action in items:
            error = errors.get(action.topic)
            if error is None:
                message = kind.facts.done or ""
            elif error.kind is ErrorKind.UNCONFIRMED:
                message = error.message
            else:
                message = rights.refused_by_broker(error, kind, action.topic, self.spec)
            self.settle(
                index,
                ActionOutcome(
                    kind=action.kind, topic=action.topic, status=Status.FAILED if error else Status.APPLIED, message=message
                ),
            )

    def refuse_all(self, refusals: Sequence[Diagnostic]) -> ApplyResult:
        """Nothing is written: each action the brokers would refuse says why, the others say so."""
        why = {(d.action, d.topic): d.message for d in refusals}
        summary = f"not sent: the brokers would refuse {len(refusals)} action(s) of this plan, so nothing was changed"
        for index, action in enumerate(self.plan.actions):
            if index not in self.outcomes:
                self.refuse(index, why.get((action.kind, action.topic), summary))
        return self.result()

    def stop(self, error: str) -> None:
        """Apply stopped on an error (a broker gone, say): the actions of the kind being written
        failed, and whether the brokers took them is unknown; the later ones were not sent."""
        for index, action in enumerate(self.plan.actions):
            if index in self.outcomes:
                continue
            if action.kind is self.sending:
                message = f"apply stopped while writing this ({error}); whether the brokers took it is unknown"
                self.settle(index, ActionOutcome(kind=action.kind, topic=action.topic, status=Status.FAILED, message=message))
            else:
                self.refuse(index, f"not sent: apply stopped before it ({error})")

    def result(self) -> ApplyResult:
        return ApplyResult(cluster=self.plan.cluster, outcomes=[self.outcomes[i] for i in range(len(self.plan.actions))])


def _truncate(
    actions: list[TruncateRecords],
    now: ObservedState,
    cluster: ClusterPort,
    options: ApplyOptions,
    desired: DesiredState,
    progress: Progress,
) -> dict[str, ActionOutcome]:
    """Every truncation of the apply together: each round asks the leaders OffsetForLeaderEpoch and
    sends DeleteRecords for every partition still to do, one request per leader broker, all in
    flight together (the adapter groups them). Per topic, its outcome with one per partition."""
    targets = {(a.topic, t.partition): t for a in actions for t in a.partitions}
    results: dict[TopicPartition, PartitionOutcome] = {}

    def settle(tp: TopicPartition, status: Status, message: str, low_watermark: int | None = None) -> None:
        results[tp] = PartitionOutcome(
            partition=tp[1], status=status, target_offset=targets[tp].target_offset, low_watermark=low_watermark, message=message
        )

    for action in actions:
        current = {p.partition: p for p in now.topics[action.topic].partitions}
        problems = {**truncation_partition_problems(action, now), **delete_fraction_problems(action, desired)}
        for p, problem in problems.items():
            settle((action.topic, p), Status.REFUSED, problem)
        for t in action.partitions:
            tp = (action.topic, t.partition)
            if tp not in results and current[t.partition].log_start_offset >= t.target_offset:
                start = current[t.partition].log_start_offset
                settle(tp, Status.ALREADY_SATISFIED, f"log start is already {start}", start)
    fenced = cluster.supports_epoch_fencing()
    if not fenced and not options.allow_unfenced_truncation:
        for tp in targets:
            if tp not in results:
                settle(
                    tp,
                    Status.REFUSED,
                    "the brokers do not support OffsetForLeaderEpoch, so a diverged log "
                    "cannot be detected; pass --allow-unfenced-truncation to accept that risk",
                )

    pending = [tp for tp in targets if tp not in results]
    if pending:
        topics = len({t for t, _ in pending})
        progress(f"truncating {topics} topic(s): {len(pending)} partition(s)")
    for _ in range(LEADER_MOVE_ROUNDS):
        pending = [tp for tp in targets if tp not in results]
        if not pending:
            break
        if fenced:
            checks = cluster.epoch_end_offsets({tp: targets[tp].leader_epoch for tp in pending})
            for tp in pending:
                refusal = _divergence(targets[tp], checks.get(tp))
                if refusal:
                    settle(tp, Status.REFUSED, refusal)
            pending = [tp for tp in pending if tp not in results]
        sent = {tp: targets[tp].target_offset for tp in pending}
        if any(offset < 0 for offset in sent.values()):  # the planner never makes one; never send one
            raise PlanRejected(f"refusing a negative truncation offset {sent}")
        answers = cluster.delete_records(sent) if sent else {}
        timed_out = []
        for tp in pending:
            answer = answers.get(tp)
            if answer is None or (answer.error and answer.error.kind is ErrorKind.TIMED_OUT):
                timed_out.append(tp)
            elif answer.error is None:
                settle(tp, Status.APPLIED, "records deleted", answer.low_watermark)
            elif answer.error.kind is not ErrorKind.LEADER_MOVED:
                settle(tp, Status.FAILED, f"the broker refused: {answer.error}")
        if timed_out:
            starts = cluster.log_start_offsets(timed_out)
            for tp in timed_out:
                start = starts.get(tp, -1)
                if start >= targets[tp].target_offset:
                    settle(tp, Status.APPLIED, "records deleted (confirmed by reading the log start after a timeout)", start)
                # Otherwise the next round sends it again, fenced again: DeleteRecords to a fixed
                # offset is idempotent (the log start becomes max(current, requested)).
    for tp in targets:
        if tp not in results:
            settle(
                tp,
                Status.FAILED,
                f"DeleteRecords was not confirmed in {LEADER_MOVE_ROUNDS} rounds (the leader "
                "kept moving or requests timed out); plan again and retry",
            )
    return {a.topic: _truncation_outcome(a, [results[(a.topic, t.partition)] for t in a.partitions]) for a in actions}


def _truncation_outcome(action: TruncateRecords, results: list[PartitionOutcome]) -> ActionOutcome:
    partitions = sorted(results, key=lambda r: r.partition)
    # The action is as bad as its worst partition (a partly refused truncation is refused).
    status = worst(r.status for r in partitions)
    counts = ", ".join(
        f"{sum(r.status is s for r in partitions)} {s.value}" for s in Status if any(r.status is s for r in partitions)
    )
    return ActionOutcome(kind=action.kind, topic=action.topic, status=status, message=counts, partitions=partitions)


def _divergence(planned: PartitionTruncation, check: EpochCheck | None) -> str | None:
    """Why a partition must not be truncated, or None when its log still holds the planned offsets."""
    if check is None:
        return "no answer to OffsetForLeaderEpoch; nothing was deleted"
    if check.error is not None:
        return f"OffsetForLeaderEpoch failed ({check.error}); nothing was deleted"
    if check.end_offset < 0:
        return (
            f"the leader no longer knows epoch {planned.leader_epoch}, so it cannot be shown that the log "
            "did not diverge; nothing was deleted. Plan again"
        )
    if check.end_offset < planned.target_offset:
        return (
            f"the log diverged after the plan: epoch {planned.leader_epoch} now ends at offset "
            f"{check.end_offset}, below the target {planned.target_offset}, so records the plan saw are gone. "
            "Nothing was deleted; plan again"
        )
    return None
