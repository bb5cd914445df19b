"""The pure planner: plan(desired, observed, options) -> Plan. No I/O.

Decisions worth knowing:
- A config key declared in a manifest is pinned on the topic. If the cluster only inherits it
  (from a broker setting or Kafka's default), the plan sets it on the topic even when the
  inherited value is equal, so a later change of the broker default cannot move the topic.
  Such a change is marked as a pin in its reason.
- Only keys set on the topic (DYNAMIC_TOPIC_CONFIG) can be deleted, and only when the topic
  opts in with `undeclared_configs: remove`; otherwise they are reported.
- A config change that makes the brokers delete records (lower retention, retention or compaction
  switched on; see `reconciler.plan.retention`) is destructive and carries an estimate of what goes,
  counted against the policy's max_delete_fraction like a truncation. A partition whose deletion
  cannot be estimated is "unknown", never 0, and fails the plan where a limit applies.
- The policy's max_retention_decrease bounds how far one apply may lower retention.ms or
  retention.bytes: to at least (1 - it) x the current effective limit. A larger cut is an error,
  or, for a topic with `retention_stepping: gradual`, planned as one allowed step (the estimate is
  the step's) with the number of applies still to come. A cut from no limit (unlimited, or
  retention switched on) has no bounded step: it passes only while its estimate deletes nothing.
- A declared topic the principal may not DESCRIBE (hidden) is an error, and nothing is planned
  for it: whether it exists is unknown, so it is never created. An action whose ACL operation the
  read shows missing (`reconciler.plan.rights`) is an error under that action; it stays in the plan,
  which cannot be applied, so the reviewer sees what the grant would let it do.
- A replication-factor change, a pinned replica_assignment or a drained broker becomes one
  reassignment per topic, placed and checked by `reconciler.plan.replication`.
- Each truncation rule says "records before X may go"; several rules on one topic combine to
  the largest X per partition. A target at or below the log start is already satisfied; one
  above the high watermark is an error. A time rule that finds no record at or after its time
  resolves to the high watermark seen, never to -1.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from reconciler import kafka_configs
from reconciler.kafka_configs import same_config_value
from reconciler.models.desired import (
    BeforeOffset,
    BeforeTime,
    ConsumedBy,
    DesiredState,
    DesiredTopic,
    Everything,
    KeepLast,
    RetentionStepping,
    SourceRef,
    TopicState,
    UndeclaredConfigs,
)
from reconciler.models.observed import ObservedPartition, ObservedState, ObservedTopic, is_internal_topic
from reconciler.models.plan import (
    SEVERITY_RANK,
    Action,
    ActionKind,
    AddPartitions,
    AlterConfigs,
    BrokerCapacity,
    ConfigChange,
    CreateTopic,
    DeleteTopic,
    Diagnostic,
    DiagnosticCode,
    IdleEvidence,
    PartitionTruncation,
    Plan,
    ReassignReplicas,
    RetentionCut,
    RetentionStep,
    Severity,
    TopicPreconditions,
    TruncateRecords,
)
from reconciler.plan import budgets, capacity, guarded_deletion, ownership, retention, rights
from reconciler.plan.placement import PlacementError
from reconciler.plan.policy import destructive_excess, idle_guard, is_protected
from reconciler.plan.replication import MIN_INSYNC, Elsewhere, ReplicaPlanner
from reconciler.units import epoch_ms


@dataclass(frozen=True)
class PlanOptions:
    # Extra name patterns (regexes) never reported as unmanaged, besides internal `__*` topics
    # and the cluster's own `ignore_topics`.
    ignore_topics: tuple[str, ...] = ()
    # The brokers are asked about this plan (validate_only), which needs the rights the writes do.
    validated: bool = False


@dataclass
class _TopicPlan:
    actions: list[Action] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def diag(
        self,
        severity: Severity,
        code: DiagnosticCode,
        message: str,
        desired: DesiredTopic,
        partition: int | None = None,
        source: SourceRef | None = None,
        action: ActionKind | None = None,
        key: str | None = None,
    ) -> None:
        self.diagnostics.append(
            Diagnostic(
                severity=severity,
                code=code,
                message=message,
                topic=desired.name,
                partition=partition,
                source=source or desired.source,
                action=action,
                key=key,
            )
        )


# The config keys a topic's plan reads off the cluster's other topics: what a topic inherits once
# its override goes (`retention.inherited_values`, and min.insync.replicas under a factor change).
READ_OFF_OTHER_TOPICS = (*retention.SETTINGS_KEYS, MIN_INSYNC)


def plan(
    desired: DesiredState,
    observed: ObservedState,
    options: PlanOptions = PlanOptions(),
    elsewhere: Elsewhere | None = None,
    disk: bool = True,
) -> Plan:
    """The plan of `desired` against `observed`. `elsewhere`: when `observed` holds part of the
    cluster, the current replicas of the topics it leaves out, which the placement weighs
    (`replication.Elsewhere`); the topics left out must not be in `desired`, and the first topics by
    name with each key of READ_OFF_OTHER_TOPICS and config source must be in `observed`. `disk`
    False: no disk figures (each action's `disk`, the capacity table and its cluster-wide
    diagnostics), for a caller that shows none of them (a drift report)."""
    actions: list[Action] = []
    diagnostics: list[Diagnostic] = []
    taken = observed.taken_at
    context = _Context(
        desired,
        observed,
        retention.inherited_values(observed),
        epoch_ms(taken) if taken is not None else None,
        ReplicaPlanner(desired, observed, elsewhere),
    )
    hidden = set(observed.hidden_topics)
    for name in sorted(desired.topics):
        if name in hidden:
            topic_plan = _TopicPlan()
            topic_plan.diag(
                Severity.ERROR,
                DiagnosticCode.NOT_AUTHORISED,
                rights.hidden_topic_message(name, desired.cluster),
                desired.topics[name],
            )
        else:
            topic_plan = _plan_topic(context, desired.topics[name], observed.topics.get(name))
            _check_rights(context, desired.topics[name], topic_plan, options.validated)
        actions.extend(topic_plan.actions)
        diagnostics.extend(topic_plan.diagnostics)
    table: list[BrokerCapacity] = []
    if disk:
        actions = [
            a.model_copy(update={"disk": capacity.disk_estimate(a, desired, observed, context.inherited, context.now_ms)})
            for a in actions
        ]
        table = capacity.broker_table(actions, observed)
        diagnostics += _disk_usage(desired, observed, actions, table)
        diagnostics += budgets.findings(desired, observed, actions, context.inherited)
    if observed.sizes_refused and any(_estimates_bytes(a) for a in actions):
        diagnostics.append(
            Diagnostic(
                severity=Severity.INFO,
                code=DiagnosticCode.SIZES_UNKNOWN,
                message=rights.sizes_refused_line(observed.sizes_refused, desired.cluster),
            )
        )
    excess = destructive_excess(actions, desired.policy)
    if excess is not None:
        diagnostics.append(
            Diagnostic(
                severity=Severity.ERROR,
                code=DiagnosticCode.POLICY_MAX_DESTRUCTIVE_ACTIONS,
                message=excess,
                source=desired.policy.source_of("max_destructive_actions"),
            )
        )
    actions, diagnostics, by_owner = ownership.by_owner(desired, actions, diagnostics)
    actions.sort(key=lambda a: (a.kind.order, a.topic))
    diagnostics.sort(key=lambda d: (SEVERITY_RANK[d.severity], d.topic or "", d.partition or -1, d.code))
    return Plan(
        cluster=observed.cluster,
        cluster_id=observed.cluster_id,
        observed_at=observed.taken_at,
        actions=actions,
        unmanaged_topics=unmanaged_topics(desired, observed, options),
        diagnostics=diagnostics,
        capacity=table,
        owners=by_owner,
    )


def _disk_usage(
    desired: DesiredState, observed: ObservedState, actions: list[Action], table: list[BrokerCapacity]
) -> list[Diagnostic]:
    """The policy's max_disk_usage against each broker's projected share, and what could not be
    checked, said once: unknown capacity never blocks."""
    found = []
    if observed.capacity_unknown and actions:
        line = capacity.capacity_unknown_line(observed.capacity_unknown)
        found.append(Diagnostic(severity=Severity.INFO, code=DiagnosticCode.CAPACITY_UNKNOWN, message=line))
    limit = desired.policy.max_disk_usage
    if limit is None or not actions:
        return found
    for error, message in capacity.usage_findings(table, actions, limit):
        found.append(
            Diagnostic(
                severity=Severity.ERROR if error else Severity.WARNING,
                code=DiagnosticCode.POLICY_MAX_DISK_USAGE,
                message=message,
                source=desired.policy.source_of("max_disk_usage"),
            )
        )
    unchecked = capacity.not_checked_line(table)
    if unchecked is not None:
        found.append(Diagnostic(severity=Severity.INFO, code=DiagnosticCode.CAPACITY_UNKNOWN, message=unchecked))
    return found


def unmanaged_topics(desired: DesiredState, observed: ObservedState, options: PlanOptions = PlanOptions()) -> list[str]:
    patterns = [re.compile(p) for p in (*desired.cluster.ignore_topics, *options.ignore_topics)]
    return sorted(
        name
        for name, topic in observed.topics.items()
        if name not in desired.topics and not is_internal_topic(name, topic) and not any(p.search(name) for p in patterns)
    )


@dataclass(frozen=True)
class _Context:
    """What every topic's planning reads besides its own two halves."""

    desired: DesiredState
    observed: ObservedState
    inherited: dict[str, str]  # key -> what a topic inherits once its override goes
    now_ms: int | None  # the instant retention is measured back from: when the cluster was read
    replicas: ReplicaPlanner  # one placement for the whole plan: topics share the balance


def _check_rights(context: _Context, want: DesiredTopic, out: _TopicPlan, validated: bool) -> None:
    """A diagnostic under each action whose ACL operation the read shows the principal lacks: an
    error where the brokers validate the action (validate_only needs the same right), else a note,
    since the principal that applies may not be the one that planned (and apply checks its own)."""
    for action in out.actions:
        throttled = isinstance(action, ReassignReplicas) and action.throttle_bytes_per_s is not None
        need = rights.lacking(action.kind, want.name, context.observed, throttled)
        if need is None:
            continue
        if validated and action.kind.facts.broker_verb is not None:
            severity, message = (
                Severity.ERROR,
                rights.missing_right_message(action.kind, want.name, need, context.desired.cluster),
            )
        else:
            severity, message = (
                Severity.INFO,
                rights.unproven_right_message(action.kind, want.name, need, context.desired.cluster),
            )
        out.diag(severity, DiagnosticCode.MISSING_RIGHT, message, want, action=action.kind)


def _estimates_bytes(action: Action) -> bool:
    """Whether the action's estimate would show bytes, given partition sizes."""
    return isinstance(action, TruncateRecords) or (
        isinstance(action, AlterConfigs) and action.retention is not None and action.retention.counted
    )


def _plan_topic(context: _Context, want: DesiredTopic, have: ObservedTopic | None) -> _TopicPlan:
    desired, observed = context.desired, context.observed
    out = _TopicPlan()
    protected = is_protected(desired, want.name)
    if want.state is TopicState.ABSENT:
        if have is not None:
            if protected:
                out.diag(
                    Severity.ERROR,
                    DiagnosticCode.PROTECTED_TOPIC_DELETE,
                    f"{want.name} is protected and will not be deleted; remove `state: absent` or the protection first",
                    want,
                )
            else:
                for partition in have.partitions:
                    unknown = partition.unreadable
                    if unknown:
                        out.diag(
                            Severity.WARNING,
                            DiagnosticCode.PARTITION_OFFLINE,
                            f"{want.name}-{partition.partition} {unknown}: its records are deleted with the "
                            "topic but not counted in this plan",
                            want,
                            partition.partition,
                            action=ActionKind.DELETE_TOPIC,
                        )
                guard = idle_guard(desired, want.name)
                evidence = None if guard is None else observed.activity.get(want.name)
                kept = None if guard is None else guarded_deletion.not_shown_idle(want.name, guard, evidence)
                if kept is not None:
                    out.diag(Severity.WARNING, DiagnosticCode.NOT_SHOWN_IDLE, kept, want, action=ActionKind.DELETE_TOPIC)
                    return out
                preconditions = _preconditions(have)
                if guard is not None and evidence is not None:
                    preconditions = preconditions.model_copy(update={"idle": IdleEvidence(idle_for_ms=guard, evidence=evidence)})
                out.actions.append(
                    DeleteTopic(
                        topic=want.name,
                        partitions=len(have.partitions),
                        records=sum(p.record_count for p in have.partitions if not p.unreadable),
                        reason="the manifest declares `state: absent`"
                        + ("" if guard is None or evidence is None else f", and {guarded_deletion.shown_idle(guard, evidence)}"),
                        source=want.source,
                        preconditions=preconditions,
                    )
                )
        return out
    if have is None:
        try:
            assignments = context.replicas.place_new(want)
        except PlacementError as e:
            out.diag(
                Severity.ERROR,
                DiagnosticCode.REPLICA_ASSIGNMENT_INVALID,
                f"{want.name}: {str(e).removeprefix(f'topic {want.name!r}: ')}",
                want,
                action=ActionKind.CREATE_TOPIC,
            )
            assignments = {}
        out.actions.append(
            CreateTopic(
                topic=want.name,
                partitions=want.partitions,
                replication_factor=want.replication_factor,
                assignments=assignments,
                configs=dict(sorted(want.configs.items())),
                reason="declared in the manifests, absent on the cluster",
                source=want.source,
                preconditions=TopicPreconditions(exists=False),
            )
        )
        return out

    current = len(have.partitions)
    if want.partitions > current:
        out.actions.append(
            AddPartitions(
                topic=want.name,
                before=current,
                after=want.partitions,
                source=want.source,
                reason="existing keys keep their partition only if producers do not hash by partition count",
                preconditions=_preconditions(have),
            )
        )
    elif want.partitions < current:
        out.diag(
            Severity.ERROR,
            DiagnosticCode.PARTITION_DECREASE,
            f"{want.name} has {current} partitions and the manifest asks for {want.partitions}; Kafka "
            "cannot remove partitions. Set partitions to at least the current count, or recreate the "
            "topic under a new name",
            want,
        )
    changes = _config_changes(want, have, bool(context.observed.reassignments.get(want.name)), out)
    replicas = context.replicas.plan(want, have, changes)
    out.diagnostics.extend(replicas.diagnostics)
    if replicas.action is not None:
        out.actions.append(replicas.action)
    if changes:
        out.actions.append(_alter_configs(context, want, have, changes, out))

    if want.truncate:
        truncation = _truncation(desired, want, have, observed, protected, out)
        if truncation is not None:
            out.actions.append(truncation)
    return out


def _alter_configs(
    context: _Context, want: DesiredTopic, have: ObservedTopic, changes: list[ConfigChange], out: _TopicPlan
) -> AlterConfigs:
    changes, steps = _within_retention_decrease(context, want, have, changes, out)
    found = retention.classify(*retention.before_and_after(changes, have, context.inherited))
    stepped = {s.key: s for s in steps}
    reasons = [
        c.key
        + ": "
        + (_step_reason(stepped[c.key]) if c.key in stepped else _change_reason(c))
        + (f" ({found.notes[c.key]})" if c.key in found.notes else "")
        for c in changes
    ]
    keys = [c.key for c in changes]
    cut = None
    if found.destructive:
        cut, unknown = retention.retention_cut(found, have, context.now_ms)
        cut = cut.model_copy(update={"steps": steps})
        _check_retention_cut(context.desired, want, cut, unknown, out)
        keys += [k for k in retention.RETENTION_KEYS if k not in keys]
    return AlterConfigs(
        topic=want.name,
        changes=changes,
        source=want.source,
        reason="; ".join(reasons),
        destructive=cut is not None,
        retention=cut,
        preconditions=_preconditions(have, keys=keys),
    )


_LIMITS = (("retention.ms", "time_limit"), ("retention.bytes", "size_limit"))


def _within_retention_decrease(
    context: _Context, want: DesiredTopic, have: ObservedTopic, changes: list[ConfigChange], out: _TopicPlan
) -> tuple[list[ConfigChange], list[RetentionStep]]:
    """The changes, with each retention cut beyond the policy's max_retention_decrease replaced by
    one allowed step where the topic steps gradually (and reported as an error where it does not)."""
    limit = context.desired.policy.max_retention_decrease
    if limit is None:
        return changes, []
    before, after = retention.before_and_after(changes, have, context.inherited)
    by_key = {c.key: c for c in changes}
    steps = []
    for key, attr in _LIMITS:
        was, wanted = getattr(before, attr), getattr(after, attr)
        if wanted is None or (was is not None and wanted >= was):
            continue
        if was is None:
            _check_cut_from_no_limit(context, want, have, key, wanted, before, limit, out)
            continue
        path = retention.steps(was, wanted, limit)
        if len(path) == 1 or key not in by_key:  # within the limit (a key's value only moves when it changes)
            continue
        change = by_key[key]
        if want.retention_stepping is RetentionStepping.GRADUAL:
            steps.append(
                RetentionStep(
                    key=key,
                    current=was,
                    planned=path[0],
                    target=wanted,
                    declared=change.after,
                    remaining=len(path) - 1,
                    max_decrease=limit,
                )
            )
            by_key[key] = change.model_copy(update={"op": "set", "after": str(path[0])})
            continue
        out.diag(
            Severity.ERROR,
            DiagnosticCode.POLICY_MAX_RETENTION_DECREASE,
            f"{want.name}: {key} {_limit(key, was)} -> {_limit(key, wanted)} lowers retention by "
            f"{1 - wanted / was:.0%}, more than the policy's max_retention_decrease of {limit:.0%} per apply: "
            f"the largest allowed step is to {_limit(key, path[0])}. Lower it in {len(path)} steps (one per "
            "apply), or set `retention_stepping: gradual` on the topic to have each apply take the next step",
            want,
            source=context.desired.policy.source_of("max_retention_decrease") or want.source,
            action=ActionKind.ALTER_CONFIGS,
            key=key,
        )
    return [by_key[c.key] for c in changes], steps


def _check_cut_from_no_limit(
    context: _Context,
    want: DesiredTopic,
    have: ObservedTopic,
    key: str,
    wanted: int,
    before: retention.Settings,
    limit: float,
    out: _TopicPlan,
) -> None:
    """From no limit, no step is a share of the current one: the cut passes only while its estimate
    (that limit alone) deletes nothing."""
    ms, size = (wanted, None) if key == "retention.ms" else (None, wanted)
    found = [retention.estimate(p, ms, size, context.now_ms) for p in have.partitions]
    deleted = [None if why else expiry.records_to_delete for expiry, why in found]
    if all(d == 0 for d in deleted):
        return
    was = "unlimited" if "delete" in before.policy else f"not in effect (cleanup.policy {','.join(sorted(before.policy))})"
    what = (
        "what it deletes is not known"
        if None in deleted
        else f"it deletes up to {sum(d for d in deleted if d is not None):,} records now"
    )
    out.diag(
        Severity.ERROR,
        DiagnosticCode.POLICY_MAX_RETENTION_DECREASE,
        f"{want.name}: {key} is {was} and the manifest asks for {_limit(key, wanted)}: a cut from no limit has "
        f"no bounded step, so the policy's max_retention_decrease ({limit:.0%} per apply) allows it only while "
        f"it deletes nothing, and {what}. Declare first a {key} that deletes nothing yet (its plan shows the "
        "estimate), apply it, then lower it from there",
        want,
        source=context.desired.policy.source_of("max_retention_decrease") or want.source,
        action=ActionKind.ALTER_CONFIGS,
        key=key,
    )


def _limit(key: str, value: int) -> str:
    return retention.shown_limit(key, value, raw=True)


def _step_reason(step: RetentionStep) -> str:
    return (
        f"one step toward {_limit(step.key, step.target)}: the policy's max_retention_decrease allows "
        f"{step.max_decrease:.0%} per apply and the topic steps gradually"
    )


def _check_retention_cut(
    desired: DesiredState, want: DesiredTopic, cut: RetentionCut, unknown: dict[int, str], out: _TopicPlan
) -> None:
    """A protected topic is never cut (as it is never truncated); unknown partitions are reported
    (an error where a policy limit cannot be checked), and each partition whose estimate passes
    max_delete_fraction is an error, as for a truncation."""
    if is_protected(desired, want.name):
        out.diag(
            Severity.ERROR,
            DiagnosticCode.PROTECTED_TOPIC_RETENTION_CUT,
            f"{want.name} is protected, and this config change makes the brokers delete records "
            f"({'; '.join(cut.effects)}); keep its retention or remove the protection first",
            want,
            action=ActionKind.ALTER_CONFIGS,
        )
    limit = desired.policy.max_delete_fraction
    by_reason: dict[str, list[int]] = {}
    for partition, why in unknown.items():
        by_reason.setdefault(why, []).append(partition)
    for why, partitions in by_reason.items():
        shown = ", ".join(f"{want.name}-{p}" for p in partitions)
        consequence = (
            f"so the policy's max_delete_fraction ({limit:.0%}) cannot be checked; plan again once it "
            "can be read (live, or from a snapshot taken with these manifests)"
            if limit is not None
            else "the brokers apply the change there all the same"
        )
        out.diag(
            Severity.ERROR if limit is not None else Severity.WARNING,
            DiagnosticCode.RETENTION_ESTIMATE_UNKNOWN,
            f"{shown}: what the retention change deletes is unknown: {why}, {consequence}",
            want,
            action=ActionKind.ALTER_CONFIGS,
        )
    if limit is None:
        return
    for expiry in cut.partitions:
        fraction = expiry.delete_fraction
        if fraction is not None and fraction > limit:
            out.diag(
                Severity.ERROR,
                DiagnosticCode.POLICY_MAX_DELETE_FRACTION,
                f"{want.name}-{expiry.partition}: {expiry.delete_fraction_excess(limit)} (retention estimate); "
                "lower retention in smaller steps or raise max_delete_fraction",
                want,
                expiry.partition,
                desired.policy.source_of("max_delete_fraction") or want.source,
                action=ActionKind.ALTER_CONFIGS,
            )


def _preconditions(have: ObservedTopic, keys: Sequence[str] = ()) -> TopicPreconditions:
    return TopicPreconditions(
        exists=True,
        topic_id=have.topic_id,
        partition_count=len(have.partitions),
        configs={
            k: (have.configs[k].value if k in have.configs and have.configs[k].set_on_topic else None) for k in sorted(keys)
        },
    )


def _change_reason(change: ConfigChange) -> str:
    if change.op == "delete" and change.key in kafka_configs.REPLICATION_THROTTLE_LISTS:
        return (
            "a replication throttle left behind: no reassignment of the topic is in progress (Kafka's "
            "reassignment tool removes it the same way once one is done)"
        )
    if change.op == "delete":
        return "set on the cluster, not declared, and the topic opts in to removing such keys"
    if change.before_source and change.before_source != "DYNAMIC_TOPIC_CONFIG" and change.before == change.after:
        return f"pin the value now inherited from {change.before_source} on the topic"
    return "differs from the manifest"


def _config_changes(want: DesiredTopic, have: ObservedTopic, reassigning: bool, out: _TopicPlan) -> list[ConfigChange]:
    """Declared keys that differ, and undeclared ones set on the topic: removed (opted in) or
    reported. An undeclared replication throttle belongs to a reassignment: left alone while one
    is in progress (removing it mid-copy would unthrottle the copy), removed once none is, as it
    would otherwise throttle the replicas' catching up for good."""
    changes = []
    for key, value in sorted(want.configs.items()):
        now = have.configs.get(key)
        if now is not None and now.sensitive and now.value is None:
            out.diag(
                Severity.WARNING,
                DiagnosticCode.SENSITIVE_CONFIG_UNKNOWN,
                f"{want.name}: {key} is sensitive, so its current value cannot be read or compared; it is left as it is",
                want,
            )
            continue
        if now is not None and now.set_on_topic and same_config_value(key, now.value, value):
            continue
        changes.append(
            ConfigChange(
                key=key, op="set", before=now.value if now else None, after=value, before_source=now.source.name if now else None
            )
        )
    for key, now in sorted(have.explicit_configs().items()):
        if key in want.configs or (reassigning and key in kafka_configs.REPLICATION_THROTTLE_LISTS):
            continue
        if want.undeclared_configs is UndeclaredConfigs.REMOVE or key in kafka_configs.REPLICATION_THROTTLE_LISTS:
            changes.append(
                ConfigChange(key=key, op="delete", before=now.value, before_source=now.source.name, sensitive=now.sensitive)
            )
        else:
            out.diag(
                Severity.WARNING,
                DiagnosticCode.UNDECLARED_CONFIG,
                f"{want.name}: {key}={'(sensitive)' if now.sensitive else now.value} is set on the topic "
                "but not declared; declare it, or set `undeclared_configs: remove` to have it removed",
                want,
            )
    return changes


def _truncation(
    desired: DesiredState, want: DesiredTopic, have: ObservedTopic, observed: ObservedState, protected: bool, out: _TopicPlan
) -> TruncateRecords | None:
    if protected:
        out.diag(
            Severity.ERROR,
            DiagnosticCode.PROTECTED_TOPIC_TRUNCATE,
            f"{want.name} is protected; its truncation rules are refused. Remove the rules or the protection",
            want,
            action=ActionKind.TRUNCATE,
        )
        return None
    policy_value = want.configs.get("cleanup.policy", have.config_value("cleanup.policy"))
    if not kafka_configs.cleanup_policy_allows_delete(policy_value):
        out.diag(
            Severity.ERROR,
            DiagnosticCode.TRUNCATE_COMPACTED_TOPIC,
            f"{want.name} has cleanup.policy={policy_value}; Kafka refuses DeleteRecords unless the "
            "policy includes `delete` (e.g. compact,delete)",
            want,
            action=ActionKind.TRUNCATE,
        )
        return None

    planned = []
    for partition in have.partitions:
        # Checked before any rule is resolved: -1 offsets or epochs mean "could not be read", and
        # a rule resolved against them would be wrong (and block the rest of the plan).
        unknown = partition.unreadable
        if unknown:
            out.diag(
                Severity.WARNING,
                DiagnosticCode.PARTITION_OFFLINE,
                f"{want.name}-{partition.partition} {unknown}; its truncation waits for the next plan, which "
                "resolves the rules for it again once it is back (the other partitions go ahead)",
                want,
                partition.partition,
                action=ActionKind.TRUNCATE,
            )
            continue
        target = _partition_target(want, partition, observed, out)
        if target is None or target <= partition.log_start_offset:
            continue
        planned.append(
            PartitionTruncation(
                partition=partition.partition,
                target_offset=target,
                leader=partition.leader,
                leader_epoch=partition.leader_epoch,
                log_start_offset=partition.log_start_offset,
                high_watermark=partition.high_watermark,
            )
        )
    if not planned:
        return None
    _check_delete_fraction(desired, want, have, planned, out)
    return TruncateRecords(
        topic=want.name,
        rules=[r.describe() for r in want.truncate],
        rule_kinds=[r.kind for r in want.truncate],
        partitions=planned,
        estimated_bytes=_estimated_bytes(have, planned),
        reason="records before the targets are deleted for good (DeleteRecords)",
        source=want.truncate[0].source or want.source,
        preconditions=_preconditions(have, keys=["cleanup.policy"]),
    )


def _partition_target(want: DesiredTopic, partition: ObservedPartition, observed: ObservedState, out: _TopicPlan) -> int | None:
    """The largest offset any rule allows deleting before, or None if no rule applies here."""
    hw, p = partition.high_watermark, partition.partition
    targets = []
    for rule in want.truncate:
        source = rule.source or want.source
        if isinstance(rule, BeforeOffset):
            target = rule.partitions.get(p) if rule.partitions else rule.offset
        elif isinstance(rule, BeforeTime):
            found = partition.offsets_by_timestamp.get(rule.timestamp_ms)
            if found is None:
                out.diag(
                    Severity.ERROR,
                    DiagnosticCode.MISSING_TIME_LOOKUP,
                    f"{want.name}-{p}: the observed state has no offset lookup for {rule.describe()}; "
                    "read the cluster again (or take the snapshot with these manifests)",
                    want,
                    p,
                    source,
                    action=ActionKind.TRUNCATE,
                )
                continue
            # -1 means no record at or after the time: every record now there is older.
            target = hw if found < 0 else found
        elif isinstance(rule, KeepLast):
            target = max(hw - rule.records, 0)
        elif isinstance(rule, Everything):
            target = hw
        elif isinstance(rule, ConsumedBy):
            target = _consumed_offset(want, rule, p, observed, out)
        else:  # pragma: no cover - the rule union is closed
            raise TypeError(rule)
        if target is None:
            continue
        if target > hw:
            advice = (
                "the group committed past the end of the log, so the log no longer holds records the group "
                "consumed (an unclean leader election can do that); check the group before truncating"
                if isinstance(rule, ConsumedBy)
                else "records that do not exist yet cannot be deleted. Lower the offset"
            )
            out.diag(
                Severity.ERROR,
                DiagnosticCode.TRUNCATE_BEYOND_HIGH_WATERMARK,
                f"{want.name}-{p}: {rule.describe()} resolves to offset {target}, beyond the high watermark {hw}; {advice}",
                want,
                p,
                source,
                action=ActionKind.TRUNCATE,
            )
            continue
        targets.append(target)
    return max(targets) if targets else None


def _consumed_offset(want: DesiredTopic, rule: ConsumedBy, p: int, observed: ObservedState, out: _TopicPlan) -> int | None:
    committed: list[int] = []
    for group in rule.groups:
        offset = observed.group_offsets.get(group, {}).get(want.name, {}).get(p)
        if offset is None or offset < 0:
            out.diag(
                Severity.WARNING,
                DiagnosticCode.GROUP_WITHOUT_COMMIT,
                f"{want.name}-{p}: consumer group {group} has no committed offset here, so nothing is "
                "deleted from this partition for rule " + repr(rule.describe()),
                want,
                p,
                rule.source,
                action=ActionKind.TRUNCATE,
            )
            return None
        committed.append(offset)
    return min(committed)


def _check_delete_fraction(
    desired: DesiredState, want: DesiredTopic, have: ObservedTopic, planned: list[PartitionTruncation], out: _TopicPlan
) -> None:
    limit = desired.policy.max_delete_fraction
    if limit is None:
        return
    for t in planned:
        if t.delete_fraction > limit:
            out.diag(
                Severity.ERROR,
                DiagnosticCode.POLICY_MAX_DELETE_FRACTION,
                f"{want.name}-{t.partition}: {t.delete_fraction_excess(limit)}; move the truncation point in "
                "smaller steps or raise max_delete_fraction",
                want,
                t.partition,
                desired.policy.source_of("max_delete_fraction") or want.source,
                action=ActionKind.TRUNCATE,
            )


def _estimated_bytes(have: ObservedTopic, planned: list[PartitionTruncation]) -> int | None:
    by_index = {p.partition: p for p in have.partitions}
    total = 0
    for t in planned:
        observed = by_index[t.partition]
        if observed.size_bytes is None:
            return None
        if observed.record_count:
            total += observed.size_bytes * t.records_to_delete // observed.record_count
    return total
