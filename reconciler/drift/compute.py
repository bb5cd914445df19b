"""Pure drift computation: (desired, observed, plan, earlier observed) -> ClusterDrift. No I/O.

The diff itself is the planner's (`reconciler.plan.planner.plan`); this module only reads a plan and
the observed state and classifies what it finds. The unit of work is one topic of one cluster:
`topic_drift` computes everything for one topic from the plan's actions and diagnostics for that
topic, and `assemble` puts a cluster's topics together. A cluster is planned whole and its plan
split by topic (both engines: the Spark engine runs the same per-cluster work in its tasks,
`reconciler.drift.per_cluster`). Against an earlier observation each topic also carries its
change log (`reconciler.drift.changelog`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from reconciler.drift import changelog
from reconciler.drift.disk import disk_detail, disk_findings
from reconciler.drift.idle_topics import idle_detail, with_idle
from reconciler.drift.lowered_retention import lowered_retention
from reconciler.drift.model import (
    ITEM_KINDS,
    ChangeLogEntry,
    ClusterDrift,
    ConfigDrift,
    DataLossSignal,
    DiskFinding,
    DriftCounts,
    DriftItem,
    IdleTopic,
    ItemKind,
    PendingChange,
    PendingTruncation,
    PlanDiagnostic,
    ReplicaHealth,
    ReplicaProblem,
    RetentionLowered,
    TopicDrift,
    TruncationRow,
    UnverifiedPartition,
)
from reconciler.drift.replica_health import health_items, replica_health
from reconciler.errors import noun
from reconciler.models.desired import DesiredState, DesiredTopic, Policy, UndeclaredConfigs
from reconciler.models.observed import ConfigSource, ObservedState, ObservedTopic, PartitionReassignment
from reconciler.models.plan import (
    SEVERITY_RANK,
    Action,
    ActionKind,
    AddPartitions,
    AlterConfigs,
    CreateTopic,
    DeleteTopic,
    Diagnostic,
    DiagnosticCode,
    Plan,
    ReassignReplicas,
    Severity,
    TruncateRecords,
    unhandled,
)
from reconciler.models.trusted import trusted_each, trusted_maker
from reconciler.plan.planner import same_config_value
from reconciler.render.values import reassignment_headline

# --- one topic ------------------------------------------------------------------------------------


def topic_drift(
    topic: str,
    desired: DesiredTopic | None,
    observed: ObservedTopic | None,
    actions: list[Action],
    diagnostics: list[Diagnostic],
    unmanaged: bool,
    earlier: ObservedTopic | None = None,
    epoch_end_offsets: Mapping[int, int] | None = None,
    epoch_unanswered: Mapping[int, str] | None = None,
    observed_at: datetime | None = None,
    change_log: list[ChangeLogEntry] | None = None,
    hidden: bool = False,
    drain: Sequence[int] = (),
    reassigning: Mapping[int, PartitionReassignment] | None = None,
) -> TopicDrift:
    """Everything found for one topic, from the plan's actions and diagnostics for this topic and
    whether the plan lists it as unmanaged. `observed_at`: when the cluster was read, the instant
    a retention lowered out of band is measured back from. `hidden`: the principal may not see it.
    `drain`: the cluster's drained brokers; `reassigning`: the topic's reassignments in progress.

    `epoch_end_offsets` maps a partition to the end offset the current leader reported
    (OffsetForLeaderEpoch) for the leader epoch seen in `earlier`; -1 means unknown.
    `epoch_unanswered` maps a partition that was asked about but gave no usable answer to why.
    `change_log`: what moved on the topic since the earlier observation (`reconciler.drift.changelog`).
    """
    changes, truncation, rows = planned_findings(topic, actions, observed)
    data_loss, unverified = (
        _data_loss(observed, earlier, epoch_end_offsets or {}, epoch_unanswered or {}) if observed and earlier else ([], [])
    )
    config = _config_drift(topic, desired, observed, actions, diagnostics)
    return TopicDrift(
        topic=topic,
        managed=desired is not None,
        observed=observed is not None,
        hidden=hidden,
        partitions=len(observed.partitions) if observed else 0,
        unmanaged=unmanaged,
        changes=changes,
        config=config,
        truncation=truncation,
        truncation_rows=rows,
        replicas=replica_problems(observed) if observed else [],
        health=replica_health(observed, drain, reassigning) if observed else None,
        data_loss=data_loss,
        unverified=unverified,
        retention=lowered_retention(observed, desired, actions, earlier, observed_at),
        change_log=change_log or [],
        diagnostics=plan_diagnostics(diagnostics),
    )


def planned_findings(
    topic: str, actions: list[Action], observed: ObservedTopic | None
) -> tuple[list[PendingChange], PendingTruncation | None, list[TruncationRow]]:
    """What a topic's plan actions show of themselves: its pending changes, and its pending
    truncation with a row per partition it cuts."""
    truncation: PendingTruncation | None = None
    rows: list[TruncationRow] = []
    for action in actions:
        if isinstance(action, TruncateRecords):
            rows = _truncation_rows(action, observed)
            truncation = PendingTruncation(
                topic=topic,
                rules=list(action.rules),
                partitions=len(action.partitions),
                records=action.records_to_delete,
                estimated_bytes=action.estimated_bytes,
            )
    return [_summarise(a) for a in actions], truncation, rows


def plan_diagnostics(diagnostics: Iterable[Diagnostic]) -> list[PlanDiagnostic]:
    """A topic's plan diagnostics as its findings list them."""
    return [
        PlanDiagnostic(severity=d.severity.value, code=d.code, message=d.message, topic=d.topic, partition=d.partition)
        for d in diagnostics
    ]


def _summarise(action: Action) -> PendingChange:
    match action:
        case CreateTopic():
            summary = f"create with {action.partitions} partitions, replication factor {action.replication_factor}" + (
                f", {len(action.configs)} configs" if action.configs else ""
            )
        case AddPartitions():
            summary = f"partitions {action.before} -> {action.after}"
        case ReassignReplicas():
            summary = reassignment_headline(action)
        case AlterConfigs():
            summary = ", ".join(
                f"set {c.key}={'(sensitive)' if c.sensitive else c.after}" if c.op == "set" else f"delete {c.key}"
                for c in action.changes
            )
        case TruncateRecords():
            summary = (
                f"delete {action.records_to_delete:,} records from {len(action.partitions)} "
                f"{noun(len(action.partitions), 'partition')} ({'; '.join(action.rules)})"
            )
        case DeleteTopic():
            summary = f"delete the topic ({action.partitions} partitions, {action.records:,} records)"
        case _:
            unhandled(action)
    return PendingChange(
        topic=action.topic, kind=action.kind, symbol=action.kind.facts.symbol, summary=summary, destructive=action.destructive
    )


def _origin(source: str | None) -> str:
    if source is None:
        return "absent"
    if source == ConfigSource.DYNAMIC_TOPIC_CONFIG.name:
        return "topic"
    if source == ConfigSource.DEFAULT_CONFIG.name:
        return "default"
    return "broker"


def _config_drift(
    topic: str, desired: DesiredTopic | None, observed: ObservedTopic | None, actions: list[Action], diagnostics: list[Diagnostic]
) -> list[ConfigDrift]:
    out = []
    for action in actions:
        if not isinstance(action, AlterConfigs):
            continue
        for c in action.changes:
            if c.op == "delete":
                out.append(
                    ConfigDrift(
                        topic=topic,
                        key=c.key,
                        drift="undeclared",
                        origin="topic",
                        source=c.before_source,
                        current=None if c.sensitive else c.before,
                        sensitive=c.sensitive,
                        will_remove=True,
                    )
                )
                continue
            origin = _origin(c.before_source)
            if origin == "topic":
                drift = "differs"
            elif origin != "absent" and same_config_value(c.key, c.before, c.after):
                drift = "not-pinned"
            else:
                drift = "inherited"
            out.append(
                ConfigDrift(
                    topic=topic,
                    key=c.key,
                    drift=drift,
                    origin=origin,
                    source=c.before_source,
                    current=c.before,
                    desired=None if c.sensitive else c.after,
                    sensitive=c.sensitive,
                )
            )
    # Keys the planner reports (does not change): set on the topic, not declared.
    if (
        desired is not None
        and observed is not None
        and desired.undeclared_configs is UndeclaredConfigs.REPORT
        and any(d.code == DiagnosticCode.UNDECLARED_CONFIG for d in diagnostics)
    ):
        for key, now in sorted(observed.explicit_configs().items()):
            if key not in desired.configs:
                out.append(
                    ConfigDrift(
                        topic=topic,
                        key=key,
                        drift="undeclared",
                        origin="topic",
                        source=now.source.name,
                        current=None if now.sensitive else now.value,
                        sensitive=now.sensitive,
                    )
                )
    return sorted(out, key=lambda c: c.key)


def _truncation_rows(action: TruncateRecords, observed: ObservedTopic | None) -> list[TruncationRow]:
    """One row per partition the action cuts. Built as trusted models: every value is the action's
    own (validated: a target within the log seen) or an int made of the observed partition's."""
    by_index = {p.partition: p for p in observed.partitions} if observed else {}
    rows = []
    for t in action.partitions:
        p = by_index.get(t.partition)
        estimated = None
        if p is not None and p.size_bytes is not None:
            estimated = p.size_bytes * t.records_to_delete // p.record_count if p.record_count else 0
        rows.append(
            {
                "topic": action.topic,
                "partition": t.partition,
                "leader": t.leader,
                "leader_epoch": t.leader_epoch,
                "log_start_offset": t.log_start_offset,
                "high_watermark": t.high_watermark,
                "target_offset": t.target_offset,
                "records": t.records_to_delete,
                "estimated_bytes": estimated,
            }
        )
    return trusted_each(TruncationRow, rows)


def replica_problems(observed: ObservedTopic) -> list[ReplicaProblem]:
    """The topic's offline and under-replicated partitions."""
    out = []
    for p in observed.partitions:
        if p.leader < 0:
            state = "offline"
        elif p.isr != p.replicas and len(set(p.isr)) < len(set(p.replicas)):  # most partitions: in sync, as listed
            state = "under-replicated"
        else:
            continue
        out.append(
            ReplicaProblem(
                topic=observed.name,
                partition=p.partition,
                state=state,
                leader=p.leader,
                replicas=list(p.replicas),
                isr=list(p.isr),
                offline_replicas=list(p.offline_replicas),
            )
        )
    return out


def _data_loss(
    observed: ObservedTopic, earlier: ObservedTopic, epoch_end_offsets: Mapping[int, int], epoch_unanswered: Mapping[int, str]
) -> tuple[list[DataLossSignal], list[UnverifiedPartition]]:
    """KIP-320's divergence test against an earlier snapshot of the same topic.

    Having seen high watermark O under leader epoch E, the log was truncated below O if the
    current leader's end offset for E is below O (OffsetForLeaderEpoch, when it was asked), or
    if the high watermark itself went back below O. A recreated topic (another topic id) is a
    new log, not a truncated one. Partitions asked about without a usable answer, and without a
    signal from their offsets, are returned as unverified.
    """
    if observed.topic_id and earlier.topic_id and observed.topic_id != earlier.topic_id:
        return [], []
    now = {p.partition: p for p in observed.partitions}
    out, unverified = [], []
    for before in earlier.partitions:
        current = now.get(before.partition)
        if current is None or before.high_watermark <= 0:
            continue
        if current.leader < 0 or current.high_watermark < 0:  # offline: its offsets are unknown, not lower
            unverified.append(
                UnverifiedPartition(
                    topic=observed.name,
                    partition=before.partition,
                    earlier_epoch=before.leader_epoch,
                    earlier_high_watermark=before.high_watermark,
                    current_epoch=current.leader_epoch,
                    current_high_watermark=current.high_watermark,
                    reason="offline: no leader to read offsets from",
                )
            )
            continue
        end = epoch_end_offsets.get(before.partition)
        seen: int = before.high_watermark  # typed here: mypy cannot read the snapshot model's int aliases
        if end is not None and 0 <= end < seen:
            evidence, lost = "leader-epoch", seen - end
        elif current.high_watermark < seen:
            evidence, lost = "offsets-backwards", seen - current.high_watermark
        else:
            reason = epoch_unanswered.get(before.partition)
            if reason is not None:
                unverified.append(
                    UnverifiedPartition(
                        topic=observed.name,
                        partition=before.partition,
                        earlier_epoch=before.leader_epoch,
                        earlier_high_watermark=before.high_watermark,
                        current_epoch=current.leader_epoch,
                        current_high_watermark=current.high_watermark,
                        reason=reason,
                    )
                )
            continue
        out.append(
            DataLossSignal(
                topic=observed.name,
                partition=before.partition,
                evidence=evidence,
                earlier_epoch=before.leader_epoch,
                earlier_high_watermark=before.high_watermark,
                current_epoch=current.leader_epoch,
                current_high_watermark=current.high_watermark,
                epoch_end_offset=end,
                records_lost=lost,
            )
        )
    return out, unverified


# --- a cluster ------------------------------------------------------------------------------------


def assemble(
    cluster: str,
    cluster_id: str | None,
    observed_at: datetime | None,
    since: datetime | None,
    topics: Iterable[TopicDrift],
    sizes_refused: str | None = None,
    disk: Sequence[DiskFinding] = (),
    idle_after_ms: int | None = None,
) -> ClusterDrift:
    """A cluster's report from its topics' findings, in any order. `sizes_refused`: the snapshot's;
    `disk`: the cluster's disk findings (`reconciler.drift.disk`); `idle_after_ms`: the Policy's
    idle_after (None: idle topics are not looked for, and the report says nothing of them)."""
    topics = sorted(topics, key=lambda t: t.topic)
    changes: list[PendingChange] = []
    config: list[ConfigDrift] = []
    truncations: list[PendingTruncation] = []
    rows: list[TruncationRow] = []
    replicas: list[ReplicaProblem] = []
    health: list[ReplicaHealth] = []
    data_loss: list[DataLossSignal] = []
    retention: list[RetentionLowered] = []
    unverified: list[UnverifiedPartition] = []
    found: list[PlanDiagnostic] = []
    unmanaged: list[str] = []
    change_log: list[ChangeLogEntry] = []
    hidden: list[str] = []
    idle: list[IdleTopic] = []
    observed = managed = partitions = changed = 0
    # One pass over the topics (a fleet's cluster has tens of thousands), most of them with one
    # finding or none: each list in topic order, as the report lists them.
    for t in topics:
        observed += t.observed
        managed += t.managed
        partitions += t.partitions
        if t.changes:
            changes += t.changes
        if t.config:
            config += t.config
        if t.truncation is not None:
            truncations.append(t.truncation)
        if t.truncation_rows:
            rows += t.truncation_rows
        if t.replicas:
            replicas += t.replicas
        if t.health is not None:
            health.append(t.health)
        if t.data_loss:
            data_loss += t.data_loss
        if t.retention is not None:
            retention.append(t.retention)
        if t.unverified:
            unverified += t.unverified
        if t.diagnostics:
            found += t.diagnostics
        if t.unmanaged:
            unmanaged.append(t.topic)
        if t.change_log:
            change_log += t.change_log
            changed += 1
        if t.hidden:
            hidden.append(t.topic)
        if t.idle is not None:
            idle.append(t.idle)
    diagnostics = sorted(
        found,
        key=lambda d: (
            SEVERITY_RANK[d.severity],
            d.topic or "",
            -1 if d.partition is None else d.partition,
            d.code,
            d.message,
        ),
    )
    items = _items(
        cluster, changes, unmanaged, config, truncations, replicas, data_loss, diagnostics, retention, hidden, health, idle
    )
    items += disk_items(cluster, disk)
    counts = DriftCounts(
        pending_changes=len(changes),
        unmanaged_topics=len(unmanaged),
        config_drift=len(config),
        pending_truncations=len(truncations),
        truncation_records=sum(r.records for r in rows),
        truncation_bytes=sum(r.estimated_bytes or 0 for r in rows),
        under_replicated=sum(r.state == "under-replicated" for r in replicas),
        offline=sum(r.state == "offline" for r in replicas),
        data_loss=len(data_loss),
        retention_lowered=len(retention),
        retention_records=sum(r.cut.known_records for r in retention),
        retention_bytes=sum(p.bytes_to_delete or 0 for r in retention for p in r.cut.partitions),
        unverified=len(unverified),
        change_log=len(change_log),
        changed_topics=changed,
        not_visible=len(hidden),
        plan_errors=sum(d.severity == Severity.ERROR.value and d.code != DiagnosticCode.NOT_AUTHORISED for d in diagnostics),
        on_drained_brokers=sum(len(h.drained) for h in health),
        reassigning=sum(len(h.reassigning) for h in health),
        leader_not_preferred=sum(len(h.not_preferred) for h in health),
        disk_above_limit=sum(d.kind == "disk-above-limit" for d in disk),
        unbounded_growth=sum(d.kind == "unbounded-growth" for d in disk),
        idle_topics=None if idle_after_ms is None else len(idle),
        items=len(items),
    )
    return ClusterDrift(
        cluster=cluster,
        cluster_id=cluster_id,
        observed_at=observed_at,
        since=since,
        topics_observed=observed,
        topics_managed=managed,
        partitions_observed=partitions,
        sizes_refused=sizes_refused,
        counts=counts,
        changes=changes,
        unmanaged_topics=unmanaged,
        not_visible_topics=hidden,
        config=config,
        truncations=truncations,
        truncation_rows=rows,
        replicas=replicas,
        health=health,
        data_loss=data_loss,
        retention=retention,
        unverified=unverified,
        diagnostics=diagnostics,
        items=items,
        change_log=change_log,
        disk=list(disk),
        idle_after_ms=idle_after_ms,
        idle=None if idle_after_ms is None else idle,
    )


def _item(
    cluster: str,
    kind: ItemKind,
    topic: str,
    detail: str,
    partition: int | None = None,
    key: str | None = None,
    records: int | None = None,
    bytes: int | None = None,
) -> DriftItem:
    """A DriftItem, not validated again: its values are the findings' own (validated models) or
    text made of them. Keys in field order: a model is dumped in the order of its values. Every
    field given, the owner as not set (`by_owner` sets it)."""
    return _make_item(
        {
            "cluster": cluster,
            "kind": kind,
            "topic": topic,
            "partition": partition,
            "key": key,
            "detail": detail,
            "records": records,
            "bytes": bytes,
            "owner": None,
        }
    )


_make_item = trusted_maker(DriftItem, set(DriftItem.model_fields) - {"owner"})


def disk_items(cluster: str, disk: Sequence[DiskFinding]) -> list[DriftItem]:
    """The disk findings as items: a broker's under topic "" (key `broker N`), a topic's under it."""
    return [_item(cluster, d.kind, d.topic, key=f"broker {d.broker}", bytes=_item_bytes(d), detail=disk_detail(d)) for d in disk]


def _item_bytes(d: DiskFinding) -> int | None:
    return d.used_bytes if d.kind == "disk-above-limit" else d.bytes_per_day


def _items(
    cluster: str,
    changes: Sequence[PendingChange],
    unmanaged: Sequence[str],
    config: Sequence[ConfigDrift],
    truncations: Sequence[PendingTruncation],
    replicas: Sequence[ReplicaProblem],
    data_loss: Sequence[DataLossSignal],
    diagnostics: Sequence[PlanDiagnostic],
    retention: Sequence[RetentionLowered] = (),
    hidden: Sequence[str] = (),
    health: Sequence[ReplicaHealth] = (),
    idle: Sequence[IdleTopic] = (),
) -> list[DriftItem]:
    items = [
        _item(
            cluster,
            "data-loss",
            s.topic,
            partition=s.partition,
            records=s.records_lost,
            detail=f"log ends below offset {s.earlier_high_watermark:,} seen under epoch {s.earlier_epoch} "
            f"({s.evidence}); up to {s.records_lost:,} records lost or rewritten",
        )
        for s in data_loss
    ]
    items += [
        _item(
            cluster,
            "retention-lowered",
            r.topic,
            key=",".join(r.against),
            records=r.cut.records_to_delete,
            bytes=r.cut.bytes_to_delete,
            detail=retention_detail(r),
        )
        for r in retention
    ]
    items += [
        _item(
            cluster,
            "offline-partition" if r.state == "offline" else "under-replicated",
            r.topic,
            partition=r.partition,
            detail=(f"no leader; replicas {r.replicas}" if r.state == "offline" else f"in-sync {r.isr} of replicas {r.replicas}"),
        )
        for r in replicas
    ]
    # A hidden topic's one diagnostic says why it is not visible: its item, not a plan error besides.
    unseen = {d.topic: d.message for d in diagnostics if d.code == DiagnosticCode.NOT_AUTHORISED}
    items += [
        _item(
            cluster,
            "not-visible",
            name,
            detail=unseen.get(name, "not authorised to see it: grant DESCRIBE on the topic (whether it exists is unknown)"),
        )
        for name in hidden
    ]
    items += [
        _item(cluster, "plan-error", d.topic or "", partition=d.partition, key=d.code, detail=d.message)
        for d in diagnostics
        if d.severity == Severity.ERROR.value and d.code != DiagnosticCode.NOT_AUTHORISED
    ]
    items += [
        _item(cluster, "pending-change", c.topic, key=c.kind.value, detail=f"{c.symbol} {c.summary}")
        for c in changes
        if c.kind in _PENDING_CHANGE_KINDS
    ]
    items += [
        _item(
            cluster,
            "pending-truncation",
            t.topic,
            records=t.records,
            bytes=t.estimated_bytes,
            detail=f"{t.records:,} records in {t.partitions} partitions ({'; '.join(t.rules)})",
        )
        for t in truncations
    ]
    items += [_item(cluster, "config-drift", c.topic, key=c.key, detail=_config_detail(c)) for c in config]
    items += [_item(cluster, "unmanaged-topic", name, detail="in no manifest") for name in unmanaged]
    items += health_items(cluster, health)
    items += [
        _item(
            cluster,
            "idle-topic",
            t.topic,
            key="managed" if t.managed else "unmanaged",
            records=t.records,
            bytes=t.size_bytes,
            detail=idle_detail(t),
        )
        for t in idle
    ]
    order = {k: i for i, k in enumerate(ITEM_KINDS)}
    return sorted(items, key=lambda i: (order[i.kind], i.topic, -1 if i.partition is None else i.partition, i.key or ""))


# The kinds of change listed as pending-change items (the others are their own findings).
_PENDING_CHANGE_KINDS = frozenset(k for k in ActionKind if k.facts.drift_finding == "pending-change")


def retention_detail(r: RetentionLowered) -> str:
    """One line: what the cut deletes and the estimate, DESTRUCTIVE first (text and the tables)."""
    return f"DESTRUCTIVE: {'; '.join(r.cut.effects)}; {estimate_text(r)}"


def estimate_text(r: RetentionLowered) -> str:
    cut = r.cut
    if not cut.counted:
        text = "not counted (compaction: which values are superseded is not readable)"
    else:
        unknown = len(cut.unknown_partitions)
        records, size = cut.records_to_delete, cut.bytes_to_delete
        shown = f"{records:,} records" if records is not None else f"{cut.known_records:,} records"
        if size is not None:
            shown += f" ({size:,} bytes)"
        elif all(p.bytes_to_delete is None for p in cut.partitions):
            shown += " (bytes unknown)"
        text = (
            f"up to {shown} in {len(cut.partitions)} {noun(len(cut.partitions), 'partition')}"
            + (f", {unknown} of them unknown" if unknown else "")
            + " at the next retention check"
        )
    if r.records_since is not None:
        text += f"; the log start moved {r.records_since:,} records since the earlier observation"
    return text


_WHERE = {"topic": "set on the topic", "default": "Kafka's default", "absent": "not reported"}


def _config_detail(c: ConfigDrift) -> str:
    current = "(sensitive)" if c.sensitive else c.current
    where = f"inherited from the broker ({c.source})" if c.origin == "broker" else _WHERE[c.origin]
    if c.drift == "undeclared":
        return f"{current} {where}, not declared" + ("; will be removed" if c.will_remove else "")
    if c.drift == "not-pinned":
        return f"{current} ({where}) equals the manifest but is not set on the topic"
    return f"{current} ({where}) -> {c.desired}"


def cluster_drift(
    desired: DesiredState,
    observed: ObservedState,
    cluster_plan: Plan,
    earlier: ObservedState | None = None,
    epoch_end_offsets: Mapping[tuple[str, int], int] | None = None,
    epoch_unanswered: Mapping[tuple[str, int], str] | None = None,
) -> ClusterDrift:
    """A cluster's report from its whole plan (what the local engine does); with `earlier`, also
    its change log, which lists the topics only `earlier` holds (deleted since)."""
    topics = cluster_topics(desired, observed, cluster_plan, earlier, epoch_end_offsets, epoch_unanswered)
    internal = {n for n, t in observed.topics.items() if t.internal}
    topics = with_idle(desired, topics, observed.activity, internal, earlier.activity if earlier else None)
    return assemble_cluster(observed, earlier, topics, desired.policy)


def assemble_cluster(
    observed: ObservedState, earlier: ObservedState | None, topics: Iterable[TopicDrift], policy: Policy
) -> ClusterDrift:
    """A cluster's report from its topics' findings and its snapshots' disk figures (against the
    policy's max_disk_usage; idle topics, if it sets idle_after)."""
    since = earlier.taken_at if earlier else None
    disk = disk_findings(
        observed.log_dirs,
        policy.max_disk_usage,
        observed.taken_at,
        observed.topics.values(),
        earlier.topics if earlier else {},
        since,
    )
    return assemble(
        observed.cluster,
        observed.cluster_id,
        observed.taken_at,
        since,
        topics,
        observed.sizes_refused,
        disk,
        policy.idle_after_ms,
    )


def cluster_topics(
    desired: DesiredState,
    observed: ObservedState,
    cluster_plan: Plan,
    earlier: ObservedState | None = None,
    epoch_end_offsets: Mapping[tuple[str, int], int] | None = None,
    epoch_unanswered: Mapping[tuple[str, int], str] | None = None,
) -> list[TopicDrift]:
    """Every topic's findings, from the cluster's plan: the topics of `desired`, `observed` and `earlier`."""
    actions: defaultdict[str, list[Action]] = defaultdict(list)
    diagnostics: defaultdict[str | None, list[Diagnostic]] = defaultdict(list)
    ends: defaultdict[str, dict[int, int]] = defaultdict(dict)
    unanswered: defaultdict[str, dict[int, str]] = defaultdict(dict)
    for a in cluster_plan.actions:
        actions[a.topic].append(a)
    for d in cluster_plan.diagnostics:
        diagnostics[d.topic].append(d)
    for (t, p), offset in (epoch_end_offsets or {}).items():
        ends[t][p] = offset
    for (t, p), reason in (epoch_unanswered or {}).items():
        unanswered[t][p] = reason
    unmanaged = set(cluster_plan.unmanaged_topics)
    names = sorted(desired.topics.keys() | observed.topics.keys() | (earlier.topics.keys() if earlier else set()))
    changes = changelog.change_log(earlier, observed) if earlier else {}
    hidden = set(observed.hidden_topics)
    topics = [
        topic_drift(
            name,
            desired.topics.get(name),
            observed.topics.get(name),
            actions.get(name, []),
            diagnostics.get(name, []),
            name in unmanaged,
            earlier.topics.get(name) if earlier else None,
            ends.get(name),
            unanswered.get(name),
            observed.taken_at,
            changes.get(name),
            hidden=name in hidden and name in desired.topics,
            drain=desired.cluster.drain_brokers,
            reassigning=observed.reassignments.get(name),
        )
        for name in names
    ]
    return topics
