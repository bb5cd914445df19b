"""Markdown for a pull-request comment: summary first, destructive changes first, details folded."""
from __future__ import annotations

from reconciler.models.plan import (
    ACTION_SYMBOLS,
    AddPartitions,
    AlterConfigs,
    CreateTopic,
    DeleteTopic,
    Plan,
    Severity,
    TruncateRecords,
)
from reconciler.render.text import summary_line
from reconciler.render.values import config_value, count, plural, where

# GitHub refuses comments over 65,536 characters; past this the per-action details are left out.
COMMENT_LIMIT = 60_000


def plan_markdown(plan: Plan) -> str:
    text = _plan_markdown(plan, details=True)
    if len(text) <= COMMENT_LIMIT:
        return text
    return _plan_markdown(plan, details=False) + (
        "\n*Per-partition details left out to fit a pull-request comment; "
        "`reconcile plan --format json` has them all.*\n")


def _plan_markdown(plan: Plan, details: bool) -> str:
    out = [f"### Plan for `{plan.cluster}`", "", f"**{summary_line(plan)}**", ""]
    observed = plan.observed_at.isoformat().replace("+00:00", "Z") if plan.observed_at else "unknown time"
    out += [f"Cluster id `{plan.cluster_id or 'unknown'}`, observed {observed}.", ""]
    errors = [d for d in plan.diagnostics if d.severity is Severity.ERROR]
    if errors:
        out += ["> [!IMPORTANT]", "> **Errors: this plan cannot be applied until they are fixed.**"]
        out += [f"> - {_diagnostic(d)}" for d in errors]
        out.append("")
    destructive = [a for a in plan.actions if a.destructive]
    if destructive:
        out += ["> [!CAUTION]", "> **Destructive: these delete data for good when applied.**"]
        out += [f"> - `{ACTION_SYMBOLS[a.kind]}` {_headline(a)}" for a in destructive]
        out.append("")
    ordered = destructive + [a for a in plan.actions if not a.destructive]
    if ordered:
        out += ["| | Action | Topic | Change | Manifest |", "|---|---|---|---|---|"]
        for a in ordered:
            out.append(f"| `{ACTION_SYMBOLS[a.kind]}` | {a.kind.replace('_', ' ')} | `{a.topic}` | "
                       f"{_cell(_change(a))} | {_cell(where(a.source))} |")
        out.append("")
        for a in ordered if details else []:
            rows = _details(a)
            if rows:
                out += [f"<details><summary>{_html(_headline(a, code=False))}</summary>", "", *rows, "", "</details>", ""]
    others = [d for d in plan.diagnostics if d.severity is not Severity.ERROR]
    if others:
        out += ["<details><summary>Warnings and notes (" + str(len(others)) + ")</summary>", ""]
        out += [f"- **{d.severity.value}** {_diagnostic(d)}" for d in others]
        out += ["", "</details>", ""]
    if plan.unmanaged_topics:
        out += [f"<details><summary>Unmanaged topics: in no manifest, never touched ({len(plan.unmanaged_topics)})"
                "</summary>", "", ", ".join(f"`{t}`" for t in plan.unmanaged_topics), "", "</details>", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def _headline(action, code: bool = True) -> str:
    topic = f"`{action.topic}`" if code else action.topic
    if isinstance(action, TruncateRecords):
        return (f"truncate {topic}: {plural(action.records_to_delete, 'record')} in "
                f"{plural(len(action.partitions), 'partition')} ({'; '.join(action.rules)})")
    if isinstance(action, DeleteTopic):
        return f"delete topic {topic} ({plural(action.partitions, 'partition')}, {plural(action.records, 'record')})"
    if isinstance(action, CreateTopic):
        return f"create topic {topic}"
    if isinstance(action, AddPartitions):
        return f"add partitions to {topic}"
    return f"alter configs of {topic}"


def _change(action) -> str:
    if isinstance(action, CreateTopic):
        return f"{action.partitions} partitions, replication factor {action.replication_factor}"
    if isinstance(action, AddPartitions):
        return f"partitions {action.before} → {action.after}"
    if isinstance(action, AlterConfigs):
        return ", ".join(f"{'delete ' if c.op == 'delete' else ''}{c.key}" for c in action.changes)
    if isinstance(action, TruncateRecords):
        return f"delete {plural(action.records_to_delete, 'record')}"
    if isinstance(action, DeleteTopic):
        return f"delete topic, {plural(action.records, 'record')}"
    return ""


def _details(action) -> list[str]:
    if isinstance(action, CreateTopic) and action.configs:
        return ["| Key | Value |", "|---|---|",
                *(f"| `{k}` | {_cell(config_value(k, v))} |" for k, v in action.configs.items())]
    if isinstance(action, AlterConfigs):
        rows = ["| Key | Current | Desired |", "|---|---|---|"]
        for c in action.changes:
            before = config_value(c.key, c.before, c.sensitive) + (f" ({c.before_source})" if c.before_source else "")
            after = "*deleted: reverts to inherited*" if c.op == "delete" else config_value(c.key, c.after, c.sensitive)
            rows.append(f"| `{c.key}` | {_cell(before)} | {_cell(after)} |")
        return [action.reason, "", *rows]
    if isinstance(action, TruncateRecords):
        rows = ["| Partition | Log start | Target | High watermark | Deleted | Leader (epoch) |",
                "|---:|---:|---:|---:|---:|---|"]
        rows += [f"| {p.partition} | {count(p.log_start_offset)} | {count(p.target_offset)} | {count(p.high_watermark)} "
                 f"| {count(p.records_to_delete)} | {p.leader} ({p.leader_epoch}) |" for p in action.partitions]
        return rows
    return []


def _diagnostic(d) -> str:
    mentioned = d.partition is None or f"{d.topic}-{d.partition}" in d.message
    topic = f"`{d.topic}`" + ("" if mentioned else f" partition {d.partition}") + ": " if d.topic else ""
    place = f" ({where(d.source)})" if d.source else ""
    return f"{topic}{d.message} `{d.code}`{place}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
