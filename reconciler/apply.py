"""Applying a plan: the only writer. Knows nothing of sockets; talks to a `ClusterPort`.

Safety rules, in the order they act:
1. A plan with error diagnostics is refused whole.
2. The cluster is read again before anything is written, and every action's preconditions are
   checked against it (reconciler.preconditions). A stale action is refused, and so are the
   later actions on the same topic; actions on other topics still run. The result says which.
3. Actions run in plan order: creates, partition increases, config changes, truncations, topic
   deletions. A created topic is waited for in Metadata before anything else touches it.
4. Truncation targets are the offsets fixed in the plan, never recomputed and never -1. Right
   before DeleteRecords each partition's current leader is asked OffsetForLeaderEpoch for the
   planned epoch; if that epoch now ends below the target, the log diverged after the plan and
   the partition is refused. After a timeout the log start offset is read again before the
   partition is called failed.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Protocol

from reconciler.errors import PlanRejected
from reconciler.models.observed import ObservedState
from reconciler.models.plan import (
    AddPartitions, AlterConfigs, CreateTopic, DeleteTopic, Plan, TruncateRecords)
from reconciler.models.result import ActionOutcome, ApplyResult, PartitionOutcome, Status
from reconciler.preconditions import topic_changes, truncation_partition_problems

TopicPartition = tuple[str, int]
# KRaft refuses one CreateTopics that would write more than 10,000 metadata records.
MAX_METADATA_RECORDS_PER_REQUEST = 10_000
_SEVERITY = [Status.ALREADY_SATISFIED, Status.APPLIED, Status.REFUSED, Status.FAILED]
# Bounded rounds for DeleteRecords partitions whose leader moved or whose request timed out.
LEADER_MOVE_ROUNDS = 3


@dataclass(frozen=True)
class BrokerError:
    code: int
    name: str
    message: str = ""
    retriable: bool = False

    def __str__(self) -> str:
        return f"{self.name}({self.code})" + (f": {self.message}" if self.message else "")


@dataclass(frozen=True)
class EpochCheck:
    """The current leader's answer to OffsetForLeaderEpoch(planned epoch)."""

    leader: int
    leader_epoch: int  # the leader's current epoch
    end_offset: int  # end offset of the planned epoch on that leader; -1 if unknown
    error: Optional[BrokerError] = None


@dataclass(frozen=True)
class DeleteOutcome:
    low_watermark: int  # -1 when the broker reported an error
    error: Optional[BrokerError] = None


class ClusterPort(Protocol):
    """What apply needs from a cluster connection (implemented by the Kafka adapter)."""

    def observe_for_plan(self, plan: Plan) -> ObservedState: ...
    def supports_epoch_fencing(self) -> bool: ...
    def create_topics(self, actions: list[CreateTopic], validate_only: bool) -> dict[str, Optional[BrokerError]]: ...
    def wait_for_topics(self, names: list[str], timeout_s: float) -> list[str]: ...
    def create_partitions(self, actions: list[AddPartitions], validate_only: bool) -> dict[str, Optional[BrokerError]]: ...
    def alter_configs(self, actions: list[AlterConfigs], validate_only: bool) -> dict[str, Optional[BrokerError]]: ...
    def epoch_end_offsets(self, planned_epochs: dict[TopicPartition, int]) -> dict[TopicPartition, EpochCheck]: ...
    def delete_records(self, targets: dict[TopicPartition, int]) -> dict[TopicPartition, DeleteOutcome]: ...
    def log_start_offsets(self, partitions: list[TopicPartition]) -> dict[TopicPartition, int]: ...
    def delete_topics(self, names: list[str]) -> dict[str, Optional[BrokerError]]: ...


@dataclass(frozen=True)
class ApplyOptions:
    allow_unfenced_truncation: bool = False  # for brokers without OffsetForLeaderEpoch
    topic_visible_timeout_s: float = 30.0


Progress = Callable[[str], None]


def create_topic_batches(actions: list[CreateTopic]) -> list[list[CreateTopic]]:
    """Split creations so no request writes more than KRaft's metadata-record limit."""
    batches, current, records = [], [], 0
    for action in actions:
        cost = 1 + action.partitions + len(action.configs)
        if current and records + cost > MAX_METADATA_RECORDS_PER_REQUEST:
            batches.append(current)
            current, records = [], 0
        current.append(action)
        records += cost
    return batches + ([current] if current else [])


def apply_plan(plan: Plan, cluster: ClusterPort, options: ApplyOptions = ApplyOptions(),
               progress: Progress = lambda _: None) -> ApplyResult:
    if plan.has_errors:
        raise PlanRejected(
            f"the plan for {plan.cluster} has {plan.summary().errors} error(s) and cannot be applied; "
            "fix them (see `reconcile plan`) and plan again.")
    progress(f"reading {plan.cluster} again to check the plan's preconditions")
    now = cluster.observe_for_plan(plan)
    if plan.cluster_id and now.cluster_id and plan.cluster_id != now.cluster_id:
        raise PlanRejected(
            f"the plan was made for cluster id {plan.cluster_id} but {plan.cluster} now answers as "
            f"{now.cluster_id}; nothing was changed. Plan again against the right cluster.")

    outcomes: dict[int, ActionOutcome] = {}
    refused_topics: set[str] = set()
    runnable = []
    for index, action in enumerate(plan.actions):
        moved = topic_changes(action, now)
        if action.topic in refused_topics:
            moved = moved or [f"an earlier action on {action.topic} was refused"]
        if moved:
            refused_topics.add(action.topic)
            outcomes[index] = ActionOutcome(kind=action.kind, topic=action.topic, status=Status.REFUSED,
                                            message="the cluster moved since the plan: " + "; ".join(moved))
        else:
            runnable.append((index, action))

    def of_kind(cls):
        return [(i, a) for i, a in runnable if isinstance(a, cls)]

    _run_simple(of_kind(CreateTopic), outcomes, "created", progress, lambda acts: _create(cluster, acts, options))
    _run_simple(of_kind(AddPartitions), outcomes, "partitions added", progress,
                lambda acts: cluster.create_partitions(acts, validate_only=False))
    _run_simple(of_kind(AlterConfigs), outcomes, "configs changed", progress,
                lambda acts: cluster.alter_configs(acts, validate_only=False))
    for index, action in of_kind(TruncateRecords):
        progress(f"truncating {action.topic}: {len(action.partitions)} partition(s)")
        outcomes[index] = _truncate(action, now, cluster, options)
    _run_simple(of_kind(DeleteTopic), outcomes, "deleted", progress,
                lambda acts: cluster.delete_topics([a.topic for a in acts]))
    return ApplyResult(cluster=plan.cluster, outcomes=[outcomes[i] for i in range(len(plan.actions))])


def _run_simple(items, outcomes, done: str, progress: Progress, send) -> None:
    if not items:
        return
    actions = [a for _, a in items]
    progress(f"{actions[0].kind}: {len(actions)} topic(s)")
    errors = send(actions)
    for index, action in items:
        error = errors.get(action.topic)
        outcomes[index] = ActionOutcome(
            kind=action.kind, topic=action.topic, status=Status.FAILED if error else Status.APPLIED,
            message=f"the broker refused: {error}" if error else done)


def _create(cluster: ClusterPort, actions: list[CreateTopic], options: ApplyOptions) -> dict:
    errors = {}
    for batch in create_topic_batches(actions):
        errors.update(cluster.create_topics(batch, validate_only=False))
    created = [a.topic for a in actions if not errors.get(a.topic)]
    for name in cluster.wait_for_topics(created, options.topic_visible_timeout_s):
        errors[name] = BrokerError(
            -1, "NOT_VISIBLE", f"created but not visible in Metadata after {options.topic_visible_timeout_s:.0f}s")
    return errors


def _truncate(action: TruncateRecords, now: ObservedState, cluster: ClusterPort,
              options: ApplyOptions) -> ActionOutcome:
    results: dict[int, PartitionOutcome] = {}
    targets = {t.partition: t for t in action.partitions}
    current = {p.partition: p for p in now.topics[action.topic].partitions}

    def settle(p: int, status: Status, message: str, low_watermark: int | None = None) -> None:
        results[p] = PartitionOutcome(partition=p, status=status, target_offset=targets[p].target_offset,
                                      low_watermark=low_watermark, message=message)

    for p, problem in truncation_partition_problems(action, now).items():
        settle(p, Status.REFUSED, problem)
    for p, t in targets.items():
        if p not in results and current[p].log_start_offset >= t.target_offset:
            settle(p, Status.ALREADY_SATISFIED, f"log start is already {current[p].log_start_offset}",
                   current[p].log_start_offset)
    fenced = cluster.supports_epoch_fencing()
    if not fenced and not options.allow_unfenced_truncation:
        for p in targets:
            if p not in results:
                settle(p, Status.REFUSED, "the brokers do not support OffsetForLeaderEpoch, so a diverged log "
                       "cannot be detected; pass --allow-unfenced-truncation to accept that risk")

    for _ in range(LEADER_MOVE_ROUNDS):
        pending = [p for p in targets if p not in results]
        if not pending:
            break
        if fenced:
            checks = cluster.epoch_end_offsets({(action.topic, p): targets[p].leader_epoch for p in pending})
            for p in pending:
                refusal = _divergence(targets[p], checks.get((action.topic, p)))
                if refusal:
                    settle(p, Status.REFUSED, refusal)
            pending = [p for p in pending if p not in results]
        sent = {(action.topic, p): targets[p].target_offset for p in pending}
        if any(offset < 0 for offset in sent.values()):  # the planner never makes one; never send one
            raise PlanRejected(f"{action.topic}: refusing a negative truncation offset {sent}")
        answers = cluster.delete_records(sent) if sent else {}
        timed_out = []
        for p in pending:
            answer = answers.get((action.topic, p))
            if answer is None or (answer.error and answer.error.name == "REQUEST_TIMED_OUT"):
                timed_out.append(p)
            elif answer.error is None:
                settle(p, Status.APPLIED, "records deleted", answer.low_watermark)
            elif answer.error.name != "NOT_LEADER_OR_FOLLOWER":
                settle(p, Status.FAILED, f"the broker refused: {answer.error}")
        if timed_out:
            starts = cluster.log_start_offsets([(action.topic, p) for p in timed_out])
            for p in timed_out:
                start = starts.get((action.topic, p), -1)
                if start >= targets[p].target_offset:
                    settle(p, Status.APPLIED, "records deleted (confirmed by reading the log start after a "
                           "timeout)", start)
                # Otherwise the next round sends it again, fenced again: DeleteRecords to a fixed
                # offset is idempotent (the log start becomes max(current, requested)).
    for p in targets:
        if p not in results:
            settle(p, Status.FAILED, f"DeleteRecords was not confirmed in {LEADER_MOVE_ROUNDS} rounds (the leader "
                   "kept moving or requests timed out); plan again and retry")

    partitions = [results[p] for p in sorted(results)]
    # The action is as bad as its worst partition (a partly refused truncation is refused).
    status = max((r.status for r in partitions), key=_SEVERITY.index)
    counts = ", ".join(f"{sum(r.status is s for r in partitions)} {s.value}" for s in Status
                       if any(r.status is s for r in partitions))
    return ActionOutcome(kind=action.kind, topic=action.topic, status=status, message=counts, partitions=partitions)


def _divergence(planned, check: EpochCheck | None) -> str | None:
    """Why a partition must not be truncated, or None when its log still holds the planned offsets."""
    if check is None:
        return "no answer to OffsetForLeaderEpoch; nothing was deleted"
    if check.error is not None:
        return f"OffsetForLeaderEpoch failed ({check.error}); nothing was deleted"
    if check.end_offset < 0:
        return (f"the leader no longer knows epoch {planned.leader_epoch}, so it cannot be shown that the log "
                "did not diverge; nothing was deleted. Plan again")
    if check.end_offset < planned.target_offset:
        return (f"the log diverged after the plan: epoch {planned.leader_epoch} now ends at offset "
                f"{check.end_offset}, below the target {planned.target_offset} (an unclean leader election?). "
                "Nothing was deleted; plan again")
    return None
