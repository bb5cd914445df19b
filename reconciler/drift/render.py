"""Drift reports as text, JSON, Markdown and a self-contained HTML page (inline CSS and SVG charts,
no script, nothing fetched). Pure: report in, string out.

Text, Markdown and HTML list at most `max_rows` rows per section and cluster and say how many
more there are; JSON (and the Parquet tables) hold everything. The change log against an earlier
observation is one more section, after the findings, and one more sentence of the summary. The
page is a Jinja2 template (templates/report.html.j2) with autoescaping on, so no topic name,
config value or message can become markup; Jinja2 is imported only when a page is rendered.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from reconciler.drift.disk import disk_detail
from reconciler.drift.idle_topics import idle_for_text, newest_text
from reconciler.drift.model import ITEM_KINDS, ChangeLogEntry, ClusterDrift, DriftReport, ItemKind, RetentionLowered
from reconciler.drift.replica_health import SHOWN, reassigning_text
from reconciler.errors import noun, plural
from reconciler.models.formats import DRIFT_FORMATS
from reconciler.models.observed import ConfigSource
from reconciler.models.plan import DiagnosticCode
from reconciler.plan.rights import sizes_refused_line
from reconciler.render.table import markdown_cell, markdown_table, text_columns
from reconciler.render.values import size
from reconciler.units import format_duration_ms

FORMATS = DRIFT_FORMATS
MAX_ROWS = 50

# Colour per finding kind (charts and HTML badges), readable on white and for common colour blindness.
KIND_COLOURS: dict[ItemKind, str] = {
    "data-loss": "#b2182b",
    "retention-lowered": "#67001f",
    "offline-partition": "#d6604d",
    "under-replicated": "#f4a582",
    "replicas-on-drained-broker": "#8c510a",
    "not-visible": "#40004b",
    "plan-error": "#762a83",
    "pending-change": "#2166ac",
    "pending-truncation": "#e08214",
    "config-drift": "#4393c3",
    "unmanaged-topic": "#878787",
    "reassignment-in-progress": "#35978f",
    "leader-not-preferred": "#80cdc1",
    "disk-above-limit": "#543005",
    "unbounded-growth": "#bf812d",
    "idle-topic": "#bababa",
}


def render_report(report: DriftReport, fmt: str, max_rows: int = MAX_ROWS) -> str:
    if fmt == "json":
        return json.dumps(report.model_dump(mode="json"), indent=2) + "\n"
    if fmt == "text":
        return _text(report, max_rows)
    if fmt == "markdown":
        return _markdown(report, max_rows)
    if fmt == "html":
        return _html(report, max_rows)
    raise ValueError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")


def _unverified_note(cluster: ClusterDrift) -> str:
    n = cluster.counts.unverified
    if not n:
        return ""
    return f" Data loss not ruled out on {plural(n, 'partition')} whose leader gave no OffsetForLeaderEpoch answer."


def _changes_note(cluster: ClusterDrift) -> str:
    n, topics = cluster.counts.change_log, cluster.counts.changed_topics
    if not n:
        return ""
    return f" Since the earlier observation: {plural(n, 'change')} to {plural(topics, 'topic')}."


def _partitions(n: int, what: str) -> str:
    return f"{plural(n, 'partition')} {what}"


def _health_note(cluster: ClusterDrift) -> str:
    """Replica health that is not drift: reassignments in progress, leaders not preferred."""
    c = cluster.counts
    found = [
        _partitions(n, what)
        for n, what in ((c.reassigning, "being reassigned"), (c.leader_not_preferred, "not led by their preferred replica"))
        if n
    ]
    growing = f" Disk: {plural(c.unbounded_growth, 'topic')} without a limit growing." if c.unbounded_growth else ""
    idle = ""
    if c.idle_topics is not None and cluster.idle_after_ms is not None:
        idle = f" Idle for {format_duration_ms(cluster.idle_after_ms)} or more: {plural(c.idle_topics, 'topic')}."
    return (f" Replica health: {', '.join(found)}." if found else "") + growing + idle


def summary_line(cluster: ClusterDrift) -> str:
    c = cluster.counts
    if not cluster.has_drift:
        return "No drift." + _health_note(cluster) + _unverified_note(cluster) + _changes_note(cluster)
    parts = [
        (c.pending_changes, "planned action"),
        (c.unmanaged_topics, "unmanaged topic"),
        (c.config_drift, "config drift"),
        (c.pending_truncations, "pending truncation"),
        (c.under_replicated, "under-replicated partition"),
        (c.offline, "offline partition"),
        (c.data_loss, "data-loss signal"),
        (c.retention_lowered, "retention lowered out of band"),
        (c.not_visible, "declared topic not visible"),
        (c.plan_errors, "plan error"),
        (c.disk_above_limit, "broker above max_disk_usage"),
    ]
    text = ", ".join(plural(n, label, label if label.endswith(("drift", "band")) else None) for n, label in parts if n)
    if c.on_drained_brokers:
        text += (", " if text else "") + _partitions(c.on_drained_brokers, "on drained brokers")
    if c.truncation_records:
        unknown = sum(r.estimated_bytes is None for r in cluster.truncation_rows)
        if not unknown:
            freed = f"~{size(c.truncation_bytes)}"
        elif unknown == len(cluster.truncation_rows):
            freed = "size unknown"
        else:
            freed = f"~{size(c.truncation_bytes)} for the partitions whose size is known"
        text += f"; truncations would free {c.truncation_records:,} records ({freed})"
    if c.retention_lowered:
        text += "; " + _retention_total(cluster)
    return "Drift: " + text + "." + _health_note(cluster) + _unverified_note(cluster) + _changes_note(cluster)


def _retention_total(cluster: ClusterDrift) -> str:
    """What the out-of-band retention cuts delete, DESTRUCTIVE: the known part, and what is unknown."""
    cuts = [r.cut for r in cluster.retention if r.cut.counted]
    if not cuts:
        return "DESTRUCTIVE: retention lowered (not counted)"
    unknown = sum(len(cut.unknown_partitions) for cut in cuts)
    records = cluster.counts.retention_records
    text = f"DESTRUCTIVE: retention lowered deletes up to {records:,} records"
    if unknown:
        return text + f" in the partitions whose estimate is known ({unknown:,} unknown)"
    if any(p.bytes_to_delete is None for cut in cuts for p in cut.partitions):
        return text + " (size unknown)"
    return text + f" (~{size(cluster.counts.retention_bytes)})"


def _header(report: DriftReport) -> str:
    drifted = sum(c.has_drift for c in report.clusters)
    items = sum(c.counts.items for c in report.clusters)
    when = report.generated_at.isoformat().replace("+00:00", "Z") if report.generated_at else "-"
    return (
        f"{len(report.clusters)} {noun(len(report.clusters), 'cluster')}, {drifted} with drift, "
        f"{items:,} findings (generated {when}{', engine ' + report.engine if report.engine else ''})"
    )


def _when(value: datetime | None) -> str:
    return value.isoformat().replace("+00:00", "Z") if value else "unknown"


# Columns holding one number each: right-aligned in text, Markdown and HTML.
_NUMERIC = frozenset(
    {"partition", "partitions", "leader", "records", "would free", "records lost", "deletes up to", "bytes up to", "gone since"}
)
# Short identifiers that read badly when wrapped (HTML).
_NOWRAP = frozenset({"severity", "code", "state", "evidence", "drift", "replicas", "in sync", "change"})


@dataclass(frozen=True)
class _Section:
    title: str
    columns: list[str]
    rows: list[list[str]]

    @property
    def numeric(self) -> list[int]:
        return [i for i, name in enumerate(self.columns) if name in _NUMERIC]


def _sections(cluster: ClusterDrift) -> list[_Section]:
    """Each non-empty section of a cluster."""
    out: list[_Section] = []
    if cluster.disk:
        out.append(
            _Section(
                "Disk (brokers above the policy's max_disk_usage; topics without a limit that grow)",
                ["finding", "broker", "topic", "detail"],
                [[d.kind, str(d.broker), d.topic or "-", disk_detail(d)] for d in cluster.disk],
            )
        )
    if cluster.data_loss:
        out.append(
            _Section(
                "Data-loss signals",
                ["topic", "partition", "evidence", "seen before", "now", "records lost"],
                [
                    [
                        s.topic,
                        str(s.partition),
                        s.evidence,
                        f"HW {s.earlier_high_watermark:,} @ epoch {s.earlier_epoch}",
                        (f"epoch end {s.epoch_end_offset:,}, " if s.epoch_end_offset is not None else "")
                        + f"HW {s.current_high_watermark:,} @ epoch {s.current_epoch}",
                        f"{s.records_lost:,}",
                    ]
                    for s in cluster.data_loss
                ],
            )
        )
    if cluster.retention:
        out.append(
            _Section(
                "Retention lowered out of band (DESTRUCTIVE: the brokers delete these records)",
                ["topic", "lower than", "what is deleted", "deletes up to", "bytes up to", "gone since", "unknown"],
                [_retention_row(r) for r in cluster.retention],
            )
        )
    if cluster.unverified:
        out.append(
            _Section(
                "Leader changed, no leader-epoch evidence (data loss not ruled out)",
                ["topic", "partition", "seen before", "now", "why"],
                [
                    [
                        u.topic,
                        str(u.partition),
                        f"HW {u.earlier_high_watermark:,} @ epoch {u.earlier_epoch}",
                        f"HW {u.current_high_watermark:,} @ epoch {u.current_epoch}",
                        u.reason,
                    ]
                    for u in cluster.unverified
                ],
            )
        )
    if cluster.not_visible_topics:
        unseen = {i.topic: i.detail for i in cluster.items if i.kind == "not-visible"}
        out.append(
            _Section(
                "Not authorised to see these declared topics (grant DESCRIBE; whether they exist is unknown)",
                ["topic", "why"],
                [[t, unseen.get(t, "")] for t in cluster.not_visible_topics],
            )
        )
    if cluster.replicas:
        out.append(
            _Section(
                "Under-replicated and offline partitions",
                ["topic", "partition", "state", "leader", "replicas", "in sync"],
                [
                    [r.topic, str(r.partition), r.state, str(r.leader), ",".join(map(str, r.replicas)), ",".join(map(str, r.isr))]
                    for r in cluster.replicas
                ],
            )
        )
    if cluster.health:
        out.append(
            _Section(
                "Replica health",
                ["topic", "partitions", "on drained brokers", "being reassigned", "leader not preferred"],
                [
                    [
                        h.topic,
                        str(h.partitions),
                        f"{_listed(h.drained)} (broker {','.join(map(str, h.drained_brokers))})" if h.drained else "-",
                        "; ".join(reassigning_text(r) for r in h.reassigning[:SHOWN])
                        + (f" and {len(h.reassigning) - SHOWN:,} more" if len(h.reassigning) > SHOWN else "")
                        or "-",
                        _listed(h.not_preferred) or "-",
                    ]
                    for h in cluster.health
                ],
            )
        )
    if cluster.changes:
        out.append(
            _Section(
                "Managed topics with pending changes",
                ["", "topic", "change"],
                [[c.symbol, c.topic, c.summary] for c in cluster.changes],
            )
        )
    if cluster.truncations:
        out.append(
            _Section(
                "Truncation points not yet applied",
                ["topic", "partitions", "records", "would free", "rules"],
                [
                    [t.topic, str(t.partitions), f"{t.records:,}", size(t.estimated_bytes), "; ".join(t.rules)]
                    for t in cluster.truncations
                ],
            )
        )
    if cluster.config:
        out.append(
            _Section(
                "Config drift",
                ["topic", "key", "drift", "current", "where from", "manifest"],
                [
                    [
                        c.topic,
                        c.key,
                        c.drift + (" (will be removed)" if c.will_remove else ""),
                        "(sensitive)" if c.sensitive else "-" if c.current is None else c.current,
                        _where_from(c.source),
                        "-" if c.desired is None else c.desired,
                    ]
                    for c in cluster.config
                ],
            )
        )
    if cluster.unmanaged_topics:
        out.append(_Section("Unmanaged topics", ["topic"], [[t] for t in cluster.unmanaged_topics]))
    if cluster.idle and cluster.idle_after_ms is not None:
        out.append(
            _Section(
                f"Idle topics (idle for {format_duration_ms(cluster.idle_after_ms)} or more; not drift by itself)",
                ["topic", "managed", "idle for", "newest record", "partitions", "records", "bytes", "groups with commits"],
                [
                    [
                        t.topic,
                        "yes" if t.managed else "no",
                        idle_for_text(t),
                        newest_text(t),
                        f"{t.partitions:,}",
                        f"{t.records:,}",
                        "unknown" if t.size_bytes is None else size(t.size_bytes),
                        ", ".join(t.groups) or "-",
                    ]
                    for t in cluster.idle
                ],
            )
        )
    # A hidden topic's diagnostic is its not-visible finding, listed above.
    problems = [d for d in cluster.diagnostics if d.severity in ("error", "warning") and d.code != DiagnosticCode.NOT_AUTHORISED]
    if problems:
        out.append(
            _Section("Plan diagnostics", ["severity", "code", "message"], [[d.severity, d.code, d.message] for d in problems])
        )
    if cluster.change_log:
        out.append(
            _Section(
                f"Changed since {_when(cluster.since)} (not drift by itself)",
                ["topic", "change", "what", "before", "now", "where from"],
                [_change_row(e) for e in cluster.change_log],
            )
        )
    return out


def _change_row(e: ChangeLogEntry) -> list[str]:
    """One change-log entry; a sensitive key's values are never shown, whatever the entry holds."""
    if e.kind == "leaders" and e.count is not None:
        what = plural(e.count, "partition")
    elif e.partition is not None:
        what = f"partition {e.partition}"
    else:
        what = e.key or "-"
    before, now = (
        ("(sensitive)", "(sensitive)") if e.sensitive else ("-" if e.old is None else e.old, "-" if e.new is None else e.new)
    )
    return [e.topic, e.kind, what, before, now, _where_from(e.source)]


def _where_from(source: str | None) -> str:
    """Where a config value comes from, by its ConfigSource name (None: the key is not reported)."""
    if source is None:
        return "-"
    return {ConfigSource.DYNAMIC_TOPIC_CONFIG.name: "set on topic", ConfigSource.DEFAULT_CONFIG.name: "Kafka default"}.get(
        source, f"broker ({source})"
    )


def _listed(partitions: list[int]) -> str:
    if not partitions:
        return ""
    shown = f"{noun(len(partitions), 'partition')} " + ",".join(map(str, partitions[:SHOWN]))
    return shown + (f" and {len(partitions) - SHOWN:,} more" if len(partitions) > SHOWN else "")


def _retention_row(r: RetentionLowered) -> list[str]:
    """Records and bytes up to what the next retention check deletes; a partition whose estimate
    is unknown makes the total unknown (its known part is shown with "+ unknown"), never 0."""
    cut = r.cut
    if not cut.counted:
        records = bytes_ = "not counted"
    else:
        unknown = " + unknown" if cut.unknown_partitions else ""
        records = f"{cut.known_records:,}{unknown}"
        known_bytes = [p.bytes_to_delete for p in cut.partitions if p.bytes_to_delete is not None]
        bytes_ = (
            "unknown"
            if not known_bytes
            else size(sum(known_bytes)) + (" + unknown" if len(known_bytes) < len(cut.partitions) else "")
        )
    against = " and ".join({"manifests": "manifests", "earlier": "earlier observation"}[a] for a in r.against)
    return [
        r.topic,
        against,
        "; ".join(cut.effects),
        records,
        bytes_,
        "-" if r.records_since is None else f"{r.records_since:,}",
        "; ".join(f"{p}: {why}" for p, why in sorted(r.unknown.items())) or "-",
    ]


def _by_owner(c: ClusterDrift) -> list[str]:
    """Each team's part of the findings (docs/teams.md); nothing without owners."""
    if not c.owners:
        return []
    return [
        "By owner: "
        + "; ".join(f"{o.owner} {o.findings:,} ({', '.join(f'{kind} {n:,}' for kind, n in o.kinds.items())})" for o in c.owners)
    ]


def _cluster_title(c: ClusterDrift) -> str:
    return (
        f"{c.cluster}"
        + (f" ({c.cluster_id})" if c.cluster_id else "")
        + f", observed {_when(c.observed_at)}"
        + (f", compared with {_when(c.since)}" if c.since else "")
    )


def _cluster_stats(c: ClusterDrift) -> str:
    return f"{c.topics_observed:,} topics observed, {c.topics_managed:,} in manifests, {c.partitions_observed:,} partitions"


def _notes(c: ClusterDrift) -> list[str]:
    """What the read could not see for the whole cluster, said once (hidden topics have their section)."""
    return [sizes_refused_line(c.sizes_refused)] if c.sizes_refused else []


# --- text -----------------------------------------------------------------------------------------


def _text(report: DriftReport, max_rows: int) -> str:
    lines = ["Drift report: " + _header(report), ""]
    for c in report.clusters:
        lines += [f"== {_cluster_title(c)}", _cluster_stats(c), *_notes(c), *_by_owner(c)]
        for section in _sections(c):
            lines.append(f"{section.title} ({len(section.rows):,}):")
            lines += ["  " + line for line in text_columns(section.columns, section.rows[:max_rows], section.numeric)]
            if len(section.rows) > max_rows:
                lines.append(f"  ... and {len(section.rows) - max_rows:,} more (see the JSON report)")
        lines += [summary_line(c), ""]
    total = sum(c.counts.items for c in report.clusters)
    lines.append(
        f"Total: {total:,} findings in {sum(c.has_drift for c in report.clusters)} of {len(report.clusters)} clusters."
        if total
        else "No drift in any cluster."
    )
    return "\n".join(lines) + "\n"


# --- markdown -------------------------------------------------------------------------------------


def _markdown(report: DriftReport, max_rows: int) -> str:
    lines = ["# Drift report", "", _header(report) + ".", ""]
    if len(report.clusters) > 1:
        lines += markdown_table(
            ["cluster", "findings", "summary"],
            [[c.cluster, f"{c.counts.items:,}", summary_line(c)] for c in report.clusters],
            right=(1,),
        )
        lines.append("")
    for c in report.clusters:
        lines += [f"## {markdown_cell(_cluster_title(c))}", "", _cluster_stats(c) + ". **" + summary_line(c) + "**", ""]
        lines += [line for note in [*_notes(c), *_by_owner(c)] for line in (markdown_cell(note), "")]
        for section in _sections(c):
            lines += [
                f"### {section.title} ({len(section.rows):,})",
                "",
                *markdown_table(section.columns, section.rows[:max_rows], section.numeric),
            ]
            if len(section.rows) > max_rows:
                lines.append(f"\n... and {len(section.rows) - max_rows:,} more (see the JSON report).")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


# --- html + svg -----------------------------------------------------------------------------------

CHART_WIDTH, WIDE_CHART_WIDTH = 500, 1040
MAX_CHART_CLUSTERS = 30
_LABEL_CHARS = 40  # longer bar labels are cut at the front (the full label is in the tooltip)
_BAR_HEIGHT, _BAR_GAP, _VALUE_SPACE, _TOP = 18, 6, 80, 4

# A bar chart's rows: (label, [(finding kind, value)]), one segment per kind, stacked.
ChartRows = list[tuple[str, list[tuple[ItemKind, float]]]]


@dataclass(frozen=True)
class _Segment:
    x: float
    width: float
    colour: str
    tooltip: str


@dataclass(frozen=True)
class _Bar:
    y: int
    label: str  # in full, as the tooltip
    short: str  # as shown
    segments: list[_Segment]
    end: float  # where the bar ends and its total is written
    total: str


@dataclass(frozen=True)
class _Chart:
    """A horizontal (stacked) bar chart, laid out; the template draws it as inline SVG."""

    title: str
    width: int
    height: int
    label_width: int
    bar_height: int
    bars: list[_Bar]
    legend: list[tuple[str, str]]  # (colour, text)
    wide: bool


@dataclass(frozen=True)
class _ClusterPage:
    name: str
    anchor: str
    title: str
    stats: str
    notes: list[str]
    summary: str
    drifted: bool
    findings: str
    sections: list[_Section]


def _bar_chart(
    title: str,
    rows: ChartRows,
    value_label: Callable[[float], str],
    legend: list[tuple[ItemKind, str]] | None = None,
    width: int = CHART_WIDTH,
    wide: bool = False,
) -> _Chart | None:
    """Lay out a chart; each segment is coloured by its finding kind; `legend` is [(kind, text)]."""
    if not rows:
        return None
    shorts = [label if len(label) <= _LABEL_CHARS else "…" + label[-(_LABEL_CHARS - 1) :] for label, _ in rows]
    # About 7 px per character at 12 px: the label column is as wide as the longest label needs.
    label_w = min(max(7 * max(len(x) for x in shorts) + 14, 60), 300)
    plot_w = width - label_w - _VALUE_SPACE
    biggest = max(sum(v for _, v in segs) for _, segs in rows) or 1
    bars = []
    for i, ((label, segs), short) in enumerate(zip(rows, shorts)):
        x = float(label_w)
        segments = []
        for kind, value in segs:
            if value <= 0:
                continue
            w = max(plot_w * value / biggest, 1.5)
            segments.append(_Segment(x, w, KIND_COLOURS[kind], f"{label}: {kind} {value_label(value)}"))
            x += w
        bars.append(_Bar(_TOP + i * (_BAR_HEIGHT + _BAR_GAP), label, short, segments, x, value_label(sum(v for _, v in segs))))
    return _Chart(
        title=title,
        width=width,
        height=_TOP + len(rows) * (_BAR_HEIGHT + _BAR_GAP) + 2,
        label_width=label_w,
        bar_height=_BAR_HEIGHT,
        bars=bars,
        legend=[(KIND_COLOURS[k], text) for k, text in legend or []],
        wide=wide,
    )


def _label(report: DriftReport, cluster: str, what: str) -> str:
    return f"{cluster}/{what}" if len(report.clusters) > 1 else what


def _count(value: float) -> str:
    return f"{int(value):,}"


def _charts(report: DriftReport, top: int = 15) -> list[_Chart]:
    charts: list[_Chart | None] = []
    totals = {k: sum(1 for c in report.clusters for i in c.items if i.kind == k) for k in ITEM_KINDS}
    kinds = [k for k in ITEM_KINDS if totals[k]]
    if kinds and len(report.clusters) == 1:
        charts.append(_bar_chart("Drift findings by kind", [(k, [(k, float(totals[k]))]) for k in kinds], _count))
    elif kinds:
        per_cluster: ChartRows = []
        for c in report.clusters:
            counts = dict.fromkeys(kinds, 0)
            for item in c.items:
                counts[item.kind] += 1
            per_cluster.append((c.cluster, [(k, float(counts[k])) for k in kinds]))
        title = "Drift findings per cluster"
        if len(per_cluster) > MAX_CHART_CLUSTERS:
            per_cluster = sorted(per_cluster, key=lambda r: (-sum(v for _, v in r[1]), r[0]))[:MAX_CHART_CLUSTERS]
            title += f", the {MAX_CHART_CLUSTERS} of {len(report.clusters)} clusters with the most"
        charts.append(
            _bar_chart(
                title, per_cluster, _count, legend=[(k, f"{k} {totals[k]:,}") for k in kinds], width=WIDE_CHART_WIDTH, wide=True
            )
        )
    freed = sorted(
        (
            (
                _label(report, c.cluster, t.topic),
                float(sum(r.estimated_bytes or 0 for r in c.truncation_rows if r.topic == t.topic)),
            )
            for c in report.clusters
            for t in c.truncations
        ),
        key=lambda x: (-x[1], x[0]),
    )
    freed_rows: ChartRows = [(label, [("pending-truncation", v)]) for label, v in freed[:top] if v > 0]
    if freed_rows:
        charts.append(
            _bar_chart(f"Bytes pending truncations would free, top {len(freed_rows)} topics", freed_rows, lambda v: size(int(v)))
        )
    records = sorted(
        ((_label(report, c.cluster, t.topic), float(t.records)) for c in report.clusters for t in c.truncations),
        key=lambda x: (-x[1], x[0]),
    )
    if records and not freed_rows:
        charts.append(
            _bar_chart(
                f"Records pending truncations would delete, top {min(top, len(records))} topics",
                [(label, [("pending-truncation", v)]) for label, v in records[:top]],
                _count,
            )
        )
    lost = sorted(
        (
            (_label(report, c.cluster, f"{s.topic}-{s.partition}"), float(s.records_lost))
            for c in report.clusters
            for s in c.data_loss
        ),
        key=lambda x: (-x[1], x[0]),
    )
    if lost:
        charts.append(
            _bar_chart(
                f"Records lost or rewritten (data-loss signals), top {min(top, len(lost))} partitions",
                [(label, [("data-loss", v)]) for label, v in lost[:top]],
                _count,
            )
        )
    return [c for c in charts if c is not None]


def _html(report: DriftReport, max_rows: int) -> str:
    import jinja2  # only here: the other formats, and `reconcile --help`, never pay for it

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("reconciler.drift", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    clusters = [
        _ClusterPage(
            name=c.cluster,
            anchor=f"c-{c.cluster}",
            title=_cluster_title(c),
            stats=_cluster_stats(c),
            notes=[*_notes(c), *_by_owner(c)],
            summary=summary_line(c),
            drifted=c.has_drift,
            findings=f"{c.counts.items:,}",
            sections=_sections(c),
        )
        for c in report.clusters
    ]
    return env.get_template("report.html.j2").render(
        header=_header(report), charts=_charts(report), clusters=clusters, max_rows=max_rows, numeric=_NUMERIC, nowrap=_NOWRAP
    )
