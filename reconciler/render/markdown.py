"""Markdown for a pull-request comment: summary first, destructive changes first, details folded."""

from __future__ import annotations

from reconciler.models.plan import (
    Action,
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
from reconciler.plan.guarded_deletion import shown_idle
from reconciler.render.owner_groups import NO_OWNER, action_groups, owners_touched
from reconciler.render.table import html_text, markdown_table
from reconciler.render.text import manifests_line, summary_line
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
    not_validated,
    placed,
    plural,
    reassignment_headline,
    reassignment_rows,
    retention_estimate,
    stepping,
    where,
)

# GitHub refuses comments over 65,536 characters; past this the per-action details are left out.
COMMENT_LIMIT = 60_000


def plan_markdown(plan: Plan) -> str:
    text = _plan_markdown(plan, details=True)
    if len(text) <= COMMENT_LIMIT:
        return text
    return _plan_markdown(plan, details=False) + (
        "\n*Per-partition details left out to fit a pull-request comment; `reconcile plan --format json` has them all.*\n"
    )


def _plan_markdown(plan: Plan, details: bool) -> str:
    out = [f"### Plan for `{plan.cluster}`", "", f"**{summary_line(plan)}**", ""]
    observed = plan.observed_at.isoformat().replace("+00:00", "Z") if plan.observed_at else "unknown time"
    out += [f"Cluster id `{plan.cluster_id or 'unknown'}`, observed {observed}.", ""]
    bound = manifests_line(plan)
    if bound:
        out += [bound, ""]
    unchecked = not_validated(plan)
    if unchecked:
        out += ["> [!NOTE]", f"> {unchecked}", ""]
    errors = [d for d in plan.diagnostics if d.severity is Severity.ERROR]
    if errors:
        out += ["> [!IMPORTANT]", "> **Errors: this plan cannot be applied until they are fixed.**"]
        out += [f"> - {_diagnostic(d)}" for d in errors]
        out.append("")
    destructive = [a for a in plan.actions if a.destructive]
    if destructive:
        out += ["> [!CAUTION]", "> **Destructive: these delete data for good when applied.**"]
        out += [f"> - `{a.kind.facts.symbol}` {_headline(a)}{_owned_by(a)}" for a in destructive]
        touched = owners_touched(plan, destructive)
        if touched:  # a PR comment's handles notify them
            out += [">", "> **Owners whose topics these touch:** " + ", ".join(f"{o.review} (`{o.owner}`)" for o in touched)]
        out.append("")
    if plan.owners:
        out += ["**By owner:**", ""]
        out += markdown_table(
            ["Owner", "Review", "Create", "Change", "Truncate", "Delete", "Destructive", "Errors", "Warnings"],
            [
                [
                    f"`{o.owner}`",
                    o.review,
                    *(count(n) for n in (o.create, o.change, o.truncate, o.delete, o.destructive)),
                    count(o.errors),
                    count(o.warnings),
                ]
                for o in plan.owners
            ],
            right=[2, 3, 4, 5, 6, 7, 8],
        )
        out.append("")
    ordered = [plan.actions[i] for _, indices in action_groups(plan) for i in indices]
    ordered = [a for a in ordered if a.destructive] + [a for a in ordered if not a.destructive]
    if plan.owners:  # grouped by owner, destructive first within each
        rank = {o.owner: i for i, o in enumerate(plan.owners)}
        ordered.sort(key=lambda a: rank.get(a.owner, len(rank)) if a.owner is not None else len(rank))
    if ordered:
        owner_column = ["Owner"] if plan.owners else []
        out += markdown_table(
            ["", "Action", "Topic", *owner_column, "Change", "Disk", "Manifest"],
            [
                [
                    f"`{a.kind.facts.symbol}`",
                    a.kind.facts.label,
                    f"`{a.topic}`",
                    *([f"`{a.owner}`" if a.owner else NO_OWNER] if plan.owners else []),
                    change_summary(a),
                    disk_figure(a.disk) if a.disk is not None else "",
                    where(a.source),
                ]
                for a in ordered
            ],
        )
        out.append("")
        for a in ordered if details else []:
            rows = _details(a)
            if rows:
                out += [f"<details><summary>{html_text(_headline(a, code=False))}</summary>", "", *rows, "", "</details>", ""]
    if plan.capacity:
        out += ["**Disk per broker**, at steady state after this plan:", ""]
        out += markdown_table(CAPACITY_HEADER, capacity_rows(plan), right=CAPACITY_RIGHT)
        out.append("")
    others = [d for d in plan.diagnostics if d.severity is not Severity.ERROR]
    if others:
        out += ["<details><summary>Warnings and notes (" + str(len(others)) + ")</summary>", ""]
        out += [f"- **{d.severity.value}** {_diagnostic(d)}" for d in others]
        out += ["", "</details>", ""]
    if plan.unmanaged_topics:
        out += [
            f"<details><summary>Unmanaged topics: in no manifest, never touched ({len(plan.unmanaged_topics)})</summary>",
            "",
            ", ".join(f"`{t}`" for t in plan.unmanaged_topics),
            "",
            "</details>",
            "",
        ]
    return "\n".join(out).rstrip("\n") + "\n"


def _owned_by(action: Action) -> str:
    return f" (owner `{action.owner}`)" if action.owner else ""


def _headline(action: Action, code: bool = True) -> str:
    topic = f"`{action.topic}`" if code else action.topic
    head = f"{action.kind.facts.heading} {topic}"
    match action:
        case TruncateRecords():
            return (
                f"{head}: {plural(action.records_to_delete, 'record')} in "
                f"{plural(len(action.partitions), 'partition')} ({'; '.join(action.rules)})"
            )
        case DeleteTopic():
            return f"{head} ({plural(action.partitions, 'partition')}, {plural(action.records, 'record')})"
        case ReassignReplicas():
            return f"{head}: {reassignment_headline(action)}"
        case AlterConfigs() if action.retention is not None:
            return f"{head}: {retention_estimate(action.retention)}; {'; '.join(action.retention.effects)}"
        case CreateTopic() | AddPartitions() | AlterConfigs():
            return head
        case _:
            unhandled(action)


def change_summary(action: Action) -> str:
    """One line: what the action changes (the Change column of the plan table)."""
    match action:
        case CreateTopic():
            where = f"; replicas {placed(action.assignments)}" if action.assignments else ""
            return f"{action.partitions} partitions, replication factor {action.replication_factor}{where}"
        case AddPartitions():
            return f"partitions {action.before} → {action.after}"
        case ReassignReplicas():
            return reassignment_headline(action)
        case AlterConfigs():
            keys = ", ".join(f"{'delete ' if c.op == 'delete' else ''}{c.key}" for c in action.changes)
            return keys + (f"; {retention_estimate(action.retention)}" if action.retention else "")
        case TruncateRecords():
            return f"delete {plural(action.records_to_delete, 'record')}"
        case DeleteTopic():
            guard = action.preconditions.idle
            shown = "" if guard is None else f"; only if still idle: {shown_idle(guard.idle_for_ms, guard.evidence)}"
            return f"delete topic, {plural(action.records, 'record')}{shown}"
        case _:
            unhandled(action)


def _details(action: Action) -> list[str]:
    """The folded table under an action's headline; none when the headline says it all."""
    match action:
        case CreateTopic():
            return (
                markdown_table(["Key", "Value"], [[f"`{k}`", config_value(k, v)] for k, v in action.configs.items()])
                if action.configs
                else []
            )
        case AlterConfigs():
            rows = [
                [
                    f"`{c.key}`",
                    config_value(c.key, c.before, c.sensitive) + (f" ({c.before_source})" if c.before_source else ""),
                    "*deleted: reverts to inherited*" if c.op == "delete" else config_value(c.key, c.after, c.sensitive),
                ]
                for c in action.changes
            ]
            lines = [action.reason, "", *markdown_table(["Key", "Current", "Desired"], rows)]
            cut = action.retention
            if cut is not None:
                if cut.steps:
                    lines += ["", "**Stepping:**", *[f"- {step}" for step in stepping(cut)]]
                lines += ["", "**Deletes:**", *[f"- {effect}" for effect in cut.effects]]
                if cut.counted:
                    lines += [
                        "",
                        f"Estimate: {estimate_bound(cut)}.",
                        "",
                        *markdown_table(EXPIRY_HEADER, expiry_rows(cut), right=EXPIRY_RIGHT),
                    ]
            return lines
        case ReassignReplicas():
            return markdown_table(REASSIGNMENT_HEADER, reassignment_rows(action), right=(0, 4))
        case TruncateRecords():
            return markdown_table(
                ["Partition", "Log start", "Target", "High watermark", "Deleted", "Leader (epoch)"],
                [
                    [
                        str(p.partition),
                        count(p.log_start_offset),
                        count(p.target_offset),
                        count(p.high_watermark),
                        count(p.records_to_delete),
                        f"{p.leader} ({p.leader_epoch})",
                    ]
                    for p in action.partitions
                ],
                right=(0, 1, 2, 3, 4),
            )
        case AddPartitions() | DeleteTopic():
            return []
        case _:
            unhandled(action)


def _diagnostic(d: Diagnostic) -> str:
    mentioned = d.partition is None or f"{d.topic}-{d.partition}" in d.message
    topic = f"`{d.topic}`" + ("" if mentioned else f" partition {d.partition}") + ": " if d.topic else ""
    place = f" ({where(d.source)})" if d.source else ""
    return f"{topic}{d.message} `{d.code}`{place}"
