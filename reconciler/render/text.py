"""Terraform-like text: one block per action with `+ ~ x -` symbols, a summary line last."""

from __future__ import annotations

from reconciler.models.plan import (
    Action,
    ActionKind,
    AddPartitions,
    AlterConfigs,
    CreateTopic,
    DeleteTopic,
    Diagnostic,
    Plan,
    ReassignReplicas,
    Severity,
    TruncateRecords,
    unhandled,
)
from reconciler.render.owner_groups import NO_OWNER, action_groups, owner_line
from reconciler.render.style import DESTRUCTIVE_STYLE, SEVERITY_STYLE, Style, kind_style, paint
from reconciler.render.table import text_columns
from reconciler.render.values import (
    CAPACITY_HEADER,
    CAPACITY_RIGHT,
    EXPIRY_HEADER,
    EXPIRY_RIGHT,
    REASSIGNMENT_HEADER,
    capacity_rows,
    config_value,
    count,
    disk_figure,
    estimate_bound,
    expiry_rows,
    more_applies,
    not_validated,
    placed,
    plural,
    reassignment_headline,
    reassignment_rows,
    retention_estimate,
    size,
    stepping,
    where,
)


class _Out:
    def __init__(self, color: bool):
        self.color = color
        self.lines: list[str] = []

    def paint(self, text: str, style: Style) -> str:
        return paint(text, style, self.color)

    def add(self, line: str = "") -> None:
        self.lines.append(line)


def plan_text(plan: Plan, color: bool = False) -> str:
    out = _Out(color)
    observed = plan.observed_at.isoformat().replace("+00:00", "Z") if plan.observed_at else "unknown time"
    out.add(
        out.paint(f"Plan for cluster {plan.cluster}", Style.BOLD)
        + f" (cluster id {plan.cluster_id or 'unknown'}, observed {observed})"
    )
    bound = manifests_line(plan)
    if bound:
        out.add(bound)
    out.add()
    unchecked = not_validated(plan)
    if unchecked:
        out.add(out.paint(unchecked, Style.BOLD))
        out.add()
    placed = _place_diagnostics(plan)
    for owner, indices in action_groups(plan):
        if plan.owners:
            out.add(out.paint(f"Owner {owner_line(owner)}:" if owner else f"Topics with {NO_OWNER}:", Style.BOLD))
            out.add()
        for i in indices:
            _action(out, plan.actions[i])
            for d in placed.get(i, []):
                out.add("      " + _diagnostic(out, d))
            out.add()
    remaining = placed.get(None, [])
    for severity, title in ((Severity.ERROR, "Errors"), (Severity.WARNING, "Warnings"), (Severity.INFO, "Notes")):
        found = [d for d in remaining if d.severity is severity]
        if found:
            out.add(out.paint(f"{title}:", SEVERITY_STYLE[severity]))
            for d in found:
                out.add("  " + _diagnostic(out, d))
            out.add()
    if plan.unmanaged_topics:
        out.add(f"Unmanaged topics (in no manifest, never touched): {', '.join(plan.unmanaged_topics)}")
        out.add()
    if plan.capacity:
        out.add("Disk per broker, at steady state after this plan:")
        out.lines += ["  " + line for line in text_columns(CAPACITY_HEADER, capacity_rows(plan), right=CAPACITY_RIGHT)]
        out.add()
    if plan.owners:
        out.add("By owner:")
        out.lines += [f"  {owner_line(owner)}" for owner in plan.owners]
        out.add()
    out.add(out.paint(summary_line(plan), Style.BOLD))
    return "\n".join(out.lines) + "\n"


def manifests_line(plan: Plan) -> str | None:
    """What the plan was made from, for the reviewer to match with what apply reports; None for a
    plan made without manifests."""
    m = plan.manifests
    if m is None:
        return None
    at = f" at commit {m.commit[:12]}" if m.commit else ""
    return f"Manifests {m.digest[:19]}{at}: apply refuses this plan once they mean something else."


def summary_line(plan: Plan) -> str:
    s = plan.summary()
    problems = f" {plural(s.errors, 'error')}, {plural(s.warnings, 'warning')}."
    if not plan.has_changes:
        head = "No changes: the cluster matches the manifests." if not s.errors else "No changes until the errors are fixed."
        return head + problems
    truncate = f"{count(s.truncate)} to truncate ({plural(s.records_to_delete, 'record')})"
    change = f"{count(s.change)} to change"
    if s.retention_cuts:
        partial = any(not c.counted or c.unknown_partitions for c in plan.retention_cuts)
        if not partial:
            how_many = f"up to {plural(s.records_to_expire, 'record')}"
        elif s.records_to_expire:
            how_many = f"up to {plural(s.records_to_expire, 'record')} and some not counted"
        else:
            how_many = "how many is not known"
        steps = f"; stepping: {more_applies(plan.stepping_applies)}" if plan.stepping_applies else ""
        change += f" ({count(s.retention_cuts)} deleting records: {how_many}{steps})"
    return f"Plan: {count(s.create)} to create, {change}, {truncate}, {count(s.delete)} to delete." + problems


def _action(out: _Out, action: Action) -> None:
    title, details = _describe(action)
    style = DESTRUCTIVE_STYLE if action.destructive else kind_style(action.kind)
    head = f"{out.paint(action.kind.facts.symbol, style)} {action.kind.facts.heading} {title}"
    if action.destructive:
        head += "  " + out.paint("DESTRUCTIVE", DESTRUCTIVE_STYLE)
    out.add(f"  {head}" + (f"    # {where(action.source)}" if action.source else ""))
    if action.reason:
        out.add(f"      {action.reason}")
    for line in details:
        out.add("      " + line)
    if action.disk is not None:
        out.add(f"      disk: {disk_figure(action.disk)}")


def _describe(action: Action) -> tuple[str, list[str]]:
    """The headline after the kind's heading, and the lines below it."""
    match action:
        case CreateTopic():
            rows = [[k, config_value(k, v)] for k, v in action.configs.items()]
            lines = [f"partitions: {action.partitions}, replication factor: {action.replication_factor}"]
            if action.assignments:
                lines.append(f"replicas: {placed(action.assignments)}")
            return action.topic, lines + (text_columns(["Key", "Value"], rows) if rows else [])
        case AddPartitions():
            return f"{action.topic}: {action.before} -> {action.after}", []
        case ReassignReplicas():
            return (
                f"{action.topic}: {reassignment_headline(action)}",
                text_columns(REASSIGNMENT_HEADER, reassignment_rows(action), right=(0, 4)),
            )
        case AlterConfigs():
            rows = [
                [
                    c.key,
                    config_value(c.key, c.before, c.sensitive) + (f" [{c.before_source}]" if c.before_source else ""),
                    "(delete: revert to inherited)" if c.op == "delete" else config_value(c.key, c.after, c.sensitive),
                ]
                for c in action.changes
            ]
            lines = text_columns(["Key", "Current", "Desired"], rows)
            cut = action.retention
            if cut is None:
                return action.topic, lines
            lines += [f"stepping: {step}" for step in stepping(cut)]
            lines += [f"deletes: {effect}" for effect in cut.effects]
            if cut.counted:
                lines += [f"estimate, {estimate_bound(cut)}:", *text_columns(EXPIRY_HEADER, expiry_rows(cut), right=EXPIRY_RIGHT)]
            return f"{action.topic}: {retention_estimate(cut)}", lines
        case TruncateRecords():
            rows = [
                [
                    str(p.partition),
                    count(p.log_start_offset),
                    count(p.target_offset),
                    count(p.high_watermark),
                    count(p.records_to_delete),
                    f"{p.leader} (epoch {p.leader_epoch})",
                ]
                for p in action.partitions
            ]
            about = f", about {size(action.estimated_bytes)}" if action.estimated_bytes else ""
            title = (
                f"{action.topic}: delete {plural(action.records_to_delete, 'record')} in "
                f"{plural(len(action.partitions), 'partition')}{about}"
            )
            header = ["Partition", "Log start", "Target", "High watermark", "Deleted", "Leader"]
            return title, [f"rules: {'; '.join(action.rules)}", *text_columns(header, rows, right=(0, 1, 2, 3, 4))]
        case DeleteTopic():
            return (f"{action.topic} ({plural(action.partitions, 'partition')}, {plural(action.records, 'record')})"), []
        case _:
            unhandled(action)


def _place_diagnostics(plan: Plan) -> dict[int | None, list[Diagnostic]]:
    """Show each diagnostic under the action it concerns (its `action`, or for other partition
    diagnostics the truncation), else under the topic's first action; one tied to an action
    the plan does not have, and those of topics without actions, go in sections below."""
    first: dict[str, int] = {}
    by_kind: dict[tuple[str, ActionKind], int] = {}
    for i, action in enumerate(plan.actions):
        first.setdefault(action.topic, i)
        by_kind[(action.topic, action.kind)] = i
    placed: dict[int | None, list[Diagnostic]] = {}
    for d in plan.diagnostics:
        topic = d.topic or ""
        if d.action is not None:
            home = by_kind.get((topic, d.action))
        elif d.partition is not None:
            home = by_kind.get((topic, ActionKind.TRUNCATE), first.get(topic))
        else:
            home = first.get(topic)
        placed.setdefault(home, []).append(d)
    return placed


def _diagnostic(out: _Out, d: Diagnostic) -> str:
    place = f" ({where(d.source)})" if d.source else ""
    mentioned = d.partition is None or f"{d.topic}-{d.partition}" in d.message
    partition = "" if mentioned else f" partition {d.partition}:"
    return out.paint(f"{d.severity.value}[{d.code}]", SEVERITY_STYLE[d.severity]) + f"{partition} {d.message}{place}"
