"""`reconcile idle`'s report: the idle topics with their evidence, those whose idleness cannot be
shown and why, and the files a proposal wrote (text or JSON)."""

from __future__ import annotations

import json

from reconciler.adopt.idle_proposal import IdleFindings
from reconciler.models.idle import stamp
from reconciler.units import format_duration_ms, human_bytes


def render_idle(outcome: IdleFindings, fmt: str) -> str:
    if fmt == "json":
        return (
            json.dumps(
                {
                    "cluster": outcome.cluster,
                    "idle_for_ms": outcome.idle_for_ms,
                    "idle": [
                        {
                            "declared": t.declared,
                            "proposed": t.proposed,
                            "note": t.note,
                            "evidence": t.evidence.model_dump(mode="json"),
                        }
                        for t in outcome.idle
                    ],
                    "unknown": outcome.unknown,
                    "written": outcome.written,
                },
                indent=2,
            )
            + "\n"
        )
    lines = [f"Topics on {outcome.cluster} idle for {format_duration_ms(outcome.idle_for_ms)} or more: {len(outcome.idle)}"]
    for topic in outcome.idle:
        e = topic.evidence
        newest = e.newest()
        records = "no record on disk" if newest is None else f"newest record {stamp(newest.newest_timestamp or 0)}"
        groups = ", ".join(f"{g.group} ({g.state})" for g in e.groups) or "none"
        size = "size unknown" if e.size_bytes is None else human_bytes(e.size_bytes)
        lines.append(
            f"  {e.topic}  {'declared' if topic.declared else 'not declared'}: {records}, {len(e.partitions)} partition(s), "
            f"{size}, groups with commits: {groups}" + (f" ({topic.note})" if topic.note else "")
        )
    if outcome.unknown:
        lines.append(f"Not shown idle, for want of evidence: {len(outcome.unknown)}")
        lines += [f"  {name}: {'; '.join(why)}" for name, why in sorted(outcome.unknown.items())]
    if outcome.written:
        lines.append("Proposed (each deletion waits until the topic is still idle when applied): " + ", ".join(outcome.written))
    return "\n".join(lines) + "\n"
