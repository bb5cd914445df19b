"""Drift reports as text, JSON, Markdown and a self-contained HTML page (inline CSS and SVG charts,
no script, nothing fetched). Pure: report in, string out.

Text, Markdown and HTML list at most `max_rows` rows per section and cluster and say how many
more there are; JSON (and the Parquet tables) hold everything.
"""
from __future__ import annotations

import html
import json
from collections.abc import Callable

from reconciler.drift.model import ITEM_KINDS, ClusterDrift, DriftReport

FORMATS = ("text", "json", "markdown", "html")
MAX_ROWS = 50

# Colour per finding kind (charts and HTML badges), readable on white and for common colour blindness.
KIND_COLOURS = {
    "data-loss": "#b2182b", "offline-partition": "#d6604d", "under-replicated": "#f4a582",
    "plan-error": "#762a83", "pending-change": "#2166ac", "pending-truncation": "#e08214",
    "config-drift": "#4393c3", "unmanaged-topic": "#878787"}


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


def human_bytes(n: int | None) -> str:
    if n is None:
        return "unknown"
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"  # pragma: no cover


def _unverified_note(cluster: ClusterDrift) -> str:
    n = cluster.counts.unverified
    if not n:
        return ""
    return (f" Data loss not ruled out on {n:,} partition{'s' if n != 1 else ''} whose leader gave no "
            "OffsetForLeaderEpoch answer.")


def summary_line(cluster: ClusterDrift) -> str:
    c = cluster.counts
    if not cluster.has_drift:
        return "No drift." + _unverified_note(cluster)
    parts = [(c.pending_changes, "planned action"), (c.unmanaged_topics, "unmanaged topic"),
             (c.config_drift, "config drift"), (c.pending_truncations, "pending truncation"),
             (c.under_replicated, "under-replicated partition"), (c.offline, "offline partition"),
             (c.data_loss, "data-loss signal"), (c.plan_errors, "plan error")]
    text = ", ".join(f"{n:,} {label}{'s' if n != 1 and not label.endswith('drift') else ''}"
                     for n, label in parts if n)
    if c.truncation_records:
        unknown = sum(r.estimated_bytes is None for r in cluster.truncation_rows)
        if not unknown:
            size = f"~{human_bytes(c.truncation_bytes)}"
        elif unknown == len(cluster.truncation_rows):
            size = "size unknown"
        else:
            size = f"~{human_bytes(c.truncation_bytes)} for the partitions whose size is known"
        text += f"; truncations would free {c.truncation_records:,} records ({size})"
    return "Drift: " + text + "." + _unverified_note(cluster)


def _header(report: DriftReport) -> str:
    drifted = sum(c.has_drift for c in report.clusters)
    items = sum(c.counts.items for c in report.clusters)
    when = report.generated_at.isoformat().replace("+00:00", "Z") if report.generated_at else "-"
    return (f"{len(report.clusters)} cluster{'s' if len(report.clusters) != 1 else ''}, {drifted} with drift, "
            f"{items:,} findings (generated {when}{', engine ' + report.engine if report.engine else ''})")


def _when(value) -> str:
    return value.isoformat().replace("+00:00", "Z") if value else "unknown"


# Columns holding one number each: right-aligned in text, Markdown and HTML.
_NUMERIC = frozenset({"partition", "partitions", "leader", "records", "would free", "records lost"})
# Short identifiers that read badly when wrapped (HTML).
_NOWRAP = frozenset({"severity", "code", "state", "evidence", "drift", "replicas", "in sync"})


def _sections(cluster: ClusterDrift) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, column names, rows) for each non-empty section of a cluster."""
    out = []
    if cluster.data_loss:
        out.append(("Data-loss signals", ["topic", "partition", "evidence", "seen before", "now", "records lost"],
                    [[s.topic, str(s.partition), s.evidence,
                      f"HW {s.earlier_high_watermark:,} @ epoch {s.earlier_epoch}",
                      (f"epoch end {s.epoch_end_offset:,}, " if s.epoch_end_offset is not None else "")
                      + f"HW {s.current_high_watermark:,} @ epoch {s.current_epoch}",
                      f"{s.records_lost:,}"] for s in cluster.data_loss]))
    if cluster.unverified:
        out.append(("Leader changed, no leader-epoch evidence (data loss not ruled out)",
                    ["topic", "partition", "seen before", "now", "why"],
                    [[u.topic, str(u.partition), f"HW {u.earlier_high_watermark:,} @ epoch {u.earlier_epoch}",
                      f"HW {u.current_high_watermark:,} @ epoch {u.current_epoch}", u.reason]
                     for u in cluster.unverified]))
    if cluster.replicas:
        out.append(("Under-replicated and offline partitions", ["topic", "partition", "state", "leader", "replicas", "in sync"],
                    [[r.topic, str(r.partition), r.state, str(r.leader), ",".join(map(str, r.replicas)),
                      ",".join(map(str, r.isr))] for r in cluster.replicas]))
    if cluster.changes:
        out.append(("Managed topics with pending changes", ["", "topic", "change"],
                    [[c.symbol, c.topic, c.summary] for c in cluster.changes]))
    if cluster.truncations:
        out.append(("Truncation points not yet applied", ["topic", "partitions", "records", "would free", "rules"],
                    [[t.topic, str(t.partitions), f"{t.records:,}", human_bytes(t.estimated_bytes), "; ".join(t.rules)]
                     for t in cluster.truncations]))
    if cluster.config:
        out.append(("Config drift", ["topic", "key", "drift", "current", "where from", "manifest"],
                    [[c.topic, c.key, c.drift + (" (will be removed)" if c.will_remove else ""),
                      "(sensitive)" if c.sensitive else "-" if c.current is None else c.current,
                      {"topic": "set on topic", "broker": f"broker ({c.source})", "default": "Kafka default",
                       "absent": "-"}[c.origin], "-" if c.desired is None else c.desired] for c in cluster.config]))
    if cluster.unmanaged_topics:
        out.append(("Unmanaged topics", ["topic"], [[t] for t in cluster.unmanaged_topics]))
    problems = [d for d in cluster.diagnostics if d.severity in ("error", "warning")]
    if problems:
        out.append(("Plan diagnostics", ["severity", "code", "message"],
                    [[d.severity, d.code, d.message] for d in problems]))
    return out


def _cluster_title(c: ClusterDrift) -> str:
    return (f"{c.cluster}" + (f" ({c.cluster_id})" if c.cluster_id else "")
            + f", observed {_when(c.observed_at)}" + (f", compared with {_when(c.since)}" if c.since else ""))


def _cluster_stats(c: ClusterDrift) -> str:
    return (f"{c.topics_observed:,} topics observed, {c.topics_managed:,} in manifests, "
            f"{c.partitions_observed:,} partitions")


# --- text -----------------------------------------------------------------------------------------

def _text(report: DriftReport, max_rows: int) -> str:
    lines = ["Drift report: " + _header(report), ""]
    for c in report.clusters:
        lines += [f"== {_cluster_title(c)}", _cluster_stats(c)]
        for title, columns, rows in _sections(c):
            lines.append(f"{title} ({len(rows):,}):")
            shown = rows[:max_rows]
            widths = [max(len(r[i]) for r in [columns, *shown]) for i in range(len(columns))]
            for row in [columns, *shown]:
                cells = [v.rjust(w) if name in _NUMERIC else v.ljust(w) for v, w, name in zip(row, widths, columns)]
                lines.append("  " + "  ".join(cells).rstrip())
            if len(rows) > max_rows:
                lines.append(f"  ... and {len(rows) - max_rows:,} more (see the JSON report)")
        lines += [summary_line(c), ""]
    total = sum(c.counts.items for c in report.clusters)
    lines.append(f"Total: {total:,} findings in {sum(c.has_drift for c in report.clusters)} of "
                 f"{len(report.clusters)} clusters." if total else "No drift in any cluster.")
    return "\n".join(lines) + "\n"


# --- markdown -------------------------------------------------------------------------------------

def _md_cell(value: str) -> str:
    return value.replace("|", "\\|").replace("\n", " ") or " "


def _markdown(report: DriftReport, max_rows: int) -> str:
    lines = ["# Drift report", "", _header(report) + ".", ""]
    if len(report.clusters) > 1:
        lines += ["| cluster | findings | summary |", "|---|---:|---|"]
        lines += [f"| {_md_cell(c.cluster)} | {c.counts.items:,} | {_md_cell(summary_line(c))} |" for c in report.clusters]
        lines.append("")
    for c in report.clusters:
        lines += [f"## {_md_cell(_cluster_title(c))}", "", _cluster_stats(c) + ". **" + summary_line(c) + "**", ""]
        for title, columns, rows in _sections(c):
            lines += [f"### {title} ({len(rows):,})", "",
                      "| " + " | ".join(_md_cell(x) for x in columns) + " |",
                      "|" + "".join("---:|" if x in _NUMERIC else "---|" for x in columns)]
            lines += ["| " + " | ".join(_md_cell(x) for x in row) + " |" for row in rows[:max_rows]]
            if len(rows) > max_rows:
                lines.append(f"\n... and {len(rows) - max_rows:,} more (see the JSON report).")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


# --- html + svg -----------------------------------------------------------------------------------

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px auto;max-width:1100px;
color:#222;padding:0 16px}
h1{font-size:24px;margin:0 0 4px}h2{font-size:19px;margin:32px 0 4px;border-bottom:2px solid #ddd;padding-bottom:4px}
h3{font-size:15px;margin:18px 0 6px}.muted{color:#666}.ok{color:#1a7f37;font-weight:600}
.drift{color:#b2182b;font-weight:600}table{border-collapse:collapse;width:100%;margin:4px 0 8px;font-size:13px}
th,td{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}th{background:#f4f4f4;white-space:nowrap}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}td.nw{white-space:nowrap}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(480px,1fr));gap:16px;align-items:start;margin:16px 0}
.charts figure.wide{grid-column:1/-1}
figure{margin:0;border:1px solid #e4e4e4;border-radius:6px;padding:10px;background:#fcfcfc;min-width:0}
figure svg{display:block;max-width:100%;height:auto}
figcaption{font-weight:600;margin-bottom:6px}.badge{display:inline-block;width:10px;height:10px;border-radius:2px;
margin-right:4px;vertical-align:-1px}.legend{margin-top:6px}.legend span{margin-right:14px;font-size:12px;white-space:nowrap}
"""

CHART_WIDTH, WIDE_CHART_WIDTH = 500, 1040
MAX_CHART_CLUSTERS = 30
_LABEL_CHARS = 40  # longer bar labels are cut at the front (the full label is in the tooltip)


def _esc(value) -> str:
    return html.escape(str(value), quote=True)


def _bar_chart(title: str, rows: list[tuple[str, list[tuple[str, float]]]], value_label: Callable[[float], str],
               legend: list[tuple[str, str]] | None = None, width: int = CHART_WIDTH, wide: bool = False) -> str:
    """A horizontal (stacked) bar chart as inline SVG: rows of (label, [(series, value)]), each
    series coloured by its finding kind; `legend` is [(kind, text)]."""
    if not rows:
        return ""
    shorts = [label if len(label) <= _LABEL_CHARS else "…" + label[-(_LABEL_CHARS - 1):] for label, _ in rows]
    # About 7 px per character at 12 px: the label column is as wide as the longest label needs.
    label_w = min(max(7 * max(len(x) for x in shorts) + 14, 60), 300)
    bar_h, gap, right, top = 18, 6, 80, 4
    plot_w = width - label_w - right
    height = top + len(rows) * (bar_h + gap) + 2
    biggest = max(sum(v for _, v in segs) for _, segs in rows) or 1
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="{_esc(title)}" '
             'font-family="system-ui,-apple-system,Segoe UI,Roboto,sans-serif">',
             f'<line x1="{label_w}" y1="0" x2="{label_w}" y2="{height}" stroke="#bbb"/>']
    for i, ((label, segs), short) in enumerate(zip(rows, shorts)):
        y = top + i * (bar_h + gap)
        parts.append(f'<text x="{label_w - 6}" y="{y + bar_h - 5}" text-anchor="end" font-size="12" '
                     f'fill="#333"><title>{_esc(label)}</title>{_esc(short)}</text>')
        x = float(label_w)
        for series, value in segs:
            if value <= 0:
                continue
            w = max(plot_w * value / biggest, 1.5)
            colour = KIND_COLOURS.get(series, "#e08214")
            parts.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{bar_h}" fill="{colour}">'
                         f'<title>{_esc(label)}: {_esc(series)} {_esc(value_label(value))}</title></rect>')
            x += w
        parts.append(f'<text x="{x + 5:.1f}" y="{y + bar_h - 5}" font-size="12" fill="#333">'
                     f'{_esc(value_label(sum(v for _, v in segs)))}</text>')
    parts.append("</svg>")
    legend_html = ""
    if legend:
        legend_html = '<div class="legend">' + "".join(
            f'<span><i class="badge" style="background:{KIND_COLOURS[k]}"></i>{_esc(text)}</span>'
            for k, text in legend) + "</div>"
    return (f'<figure{" class=wide" if wide else ""}><figcaption>{_esc(title)}</figcaption>{"".join(parts)}'
            f"{legend_html}</figure>")


def _label(report: DriftReport, cluster: str, what: str) -> str:
    return f"{cluster}/{what}" if len(report.clusters) > 1 else what


def _charts(report: DriftReport, top: int = 15) -> str:
    charts = []
    totals = {k: sum(1 for c in report.clusters for i in c.items if i.kind == k) for k in ITEM_KINDS}
    kinds = [k for k in ITEM_KINDS if totals[k]]
    if kinds and len(report.clusters) == 1:
        charts.append(_bar_chart("Drift findings by kind", [(k, [(k, float(totals[k]))]) for k in kinds],
                                 lambda v: f"{int(v):,}"))
    elif kinds:
        per_cluster = []
        for c in report.clusters:
            counts = dict.fromkeys(kinds, 0)
            for item in c.items:
                counts[item.kind] += 1
            per_cluster.append((c.cluster, [(k, float(counts[k])) for k in kinds]))
        title = "Drift findings per cluster"
        if len(per_cluster) > MAX_CHART_CLUSTERS:
            per_cluster = sorted(per_cluster, key=lambda r: (-sum(v for _, v in r[1]), r[0]))[:MAX_CHART_CLUSTERS]
            title += f", the {MAX_CHART_CLUSTERS} of {len(report.clusters)} clusters with the most"
        charts.append(_bar_chart(title, per_cluster, lambda v: f"{int(v):,}",
                                 legend=[(k, f"{k} {totals[k]:,}") for k in kinds], width=WIDE_CHART_WIDTH, wide=True))
    freed = sorted(((_label(report, c.cluster, t.topic),
                     float(sum(r.estimated_bytes or 0 for r in c.truncation_rows if r.topic == t.topic)))
                    for c in report.clusters for t in c.truncations), key=lambda x: (-x[1], x[0]))
    freed = [(label, [("pending-truncation", v)]) for label, v in freed[:top] if v > 0]
    if freed:
        charts.append(_bar_chart(f"Bytes pending truncations would free, top {len(freed)} topics", freed,
                                 lambda v: human_bytes(int(v))))
    records = sorted(((_label(report, c.cluster, t.topic), float(t.records))
                      for c in report.clusters for t in c.truncations), key=lambda x: (-x[1], x[0]))
    if records and not freed:
        charts.append(_bar_chart(f"Records pending truncations would delete, top {min(top, len(records))} topics",
                                 [(label, [("pending-truncation", v)]) for label, v in records[:top]],
                                 lambda v: f"{int(v):,}"))
    lost = sorted(((_label(report, c.cluster, f"{s.topic}-{s.partition}"), float(s.records_lost))
                   for c in report.clusters for s in c.data_loss), key=lambda x: (-x[1], x[0]))
    if lost:
        charts.append(_bar_chart(f"Records lost or rewritten (data-loss signals), top {min(top, len(lost))} partitions",
                                 [(label, [("data-loss", v)]) for label, v in lost[:top]], lambda v: f"{int(v):,}"))
    return '<div class="charts">' + "".join(charts) + "</div>" if charts else ""


def _td(value: str, column: str) -> str:
    cls = ' class="num"' if column in _NUMERIC else ' class="nw"' if column in _NOWRAP else ""
    return f"<td{cls}>{_esc(value)}</td>"


def _html(report: DriftReport, max_rows: int) -> str:
    body = [f"<h1>Drift report</h1><p class=\"muted\">{_esc(_header(report))}</p>", _charts(report)]
    if len(report.clusters) > 1:
        body.append("<table><tr><th>cluster</th><th>findings</th><th>summary</th></tr>" + "".join(
            f'<tr><td class="nw"><a href="#c-{_esc(c.cluster)}">{_esc(c.cluster)}</a></td>'
            f'<td class="num">{c.counts.items:,}</td><td>{_esc(summary_line(c))}</td></tr>'
            for c in report.clusters) + "</table>")
    for c in report.clusters:
        verdict = f'<p class="{"drift" if c.has_drift else "ok"}">{_esc(summary_line(c))}</p>'
        body.append(f'<h2 id="c-{_esc(c.cluster)}">{_esc(_cluster_title(c))}</h2>'
                    f'<p class="muted">{_esc(_cluster_stats(c))}</p>{verdict}')
        for title, columns, rows in _sections(c):
            head = "".join(f"<th{' class=num' if x in _NUMERIC else ''}>{_esc(x)}</th>" for x in columns)
            cells = "".join("<tr>" + "".join(_td(v, name) for v, name in zip(row, columns)) + "</tr>"
                            for row in rows[:max_rows])
            more = (f'<p class="muted">… and {len(rows) - max_rows:,} more (see the JSON report)</p>'
                    if len(rows) > max_rows else "")
            body.append(f"<h3>{_esc(title)} ({len(rows):,})</h3><table><tr>{head}</tr>{cells}</table>{more}")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>Drift report</title><style>{_CSS}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")
