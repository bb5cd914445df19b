"""What an apply did, as text and Markdown (JSON lives with the other JSON)."""
from __future__ import annotations

from reconciler.models.result import ActionOutcome, ApplyResult, Status
from reconciler.render.style import STATUS_STYLE, paint
from reconciler.render.table import markdown_table
from reconciler.render.text import summary_line
from reconciler.render.values import count, more_applies

_WORDS = {Status.APPLIED: "applied", Status.ALREADY_SATISFIED: "already satisfied",
          Status.REFUSED: "REFUSED", Status.FAILED: "FAILED"}


def result_text(result: ApplyResult, color: bool = False) -> str:
    lines = [f"Apply to cluster {result.cluster}", ""]
    width = max(len(w) for w in _WORDS.values())
    for o in result.outcomes:
        lines.append(f"  {paint(_WORDS[o.status].ljust(width), STATUS_STYLE[o.status], color)}  {_title(o)}"
                     + (f": {o.message}" if o.message else ""))
        for p in o.partitions:
            after = f", log start now {count(p.low_watermark)}" if p.low_watermark is not None else ""
            lines.append(f"      partition {p.partition}: {_WORDS[p.status]} (target {count(p.target_offset)}{after})"
                         + (f" - {p.message}" if p.message else ""))
    lines += ["", _totals(result), _convergence(result)]
    return "\n".join(lines) + "\n"


def result_markdown(result: ApplyResult) -> str:
    lines = [f"### Apply to `{result.cluster}`", "", f"**{_totals(result)}** {_convergence(result)}", "",
             *markdown_table(["Result", "Action", "Topic", "Message"],
                             [[_WORDS[o.status], o.kind.facts.label, f"`{o.topic}`", o.message] for o in result.outcomes])]
    for o in result.outcomes:
        if o.partitions:
            rows = [[str(p.partition), _WORDS[p.status], count(p.target_offset),
                     "" if p.low_watermark is None else count(p.low_watermark), p.message] for p in o.partitions]
            lines += ["", f"<details><summary>{_title(o)}: partitions</summary>", "",
                      *markdown_table(["Partition", "Result", "Target", "Log start after", "Message"], rows,
                                      right=(0, 2, 3)),
                      "", "</details>"]
    return "\n".join(lines) + "\n"


def _title(o: ActionOutcome) -> str:
    return f"{o.kind.facts.label} {o.topic}"


def _totals(result: ApplyResult) -> str:
    n = {s: sum(o.status is s for o in result.outcomes) for s in Status}
    return (f"Result: {n[Status.APPLIED]} applied, {n[Status.ALREADY_SATISFIED]} already satisfied, "
            f"{n[Status.REFUSED]} refused, {n[Status.FAILED]} failed.")


def _convergence(result: ApplyResult) -> str:
    if result.follow_up is None:
        return "Convergence not checked."
    if result.converged:
        return "Converged: planning again shows no changes."
    waiting = result.follow_up.waiting_partitions
    if waiting and not result.follow_up.has_changes:
        return (f"Not converged: {len(waiting)} partition(s) offline wait for the next apply "
                f"({', '.join(waiting[:5])}{' ...' if len(waiting) > 5 else ''}).")
    if result.follow_up.stepping_applies:
        # The next plan's own step, and those it says follow it.
        return (f"Not converged: stepping: {more_applies(result.follow_up.stepping_applies + 1)} to reach the declared "
                f"retention, one allowed step each (the next plan: {summary_line(result.follow_up)})")
    return f"Not converged: planning again still finds changes ({summary_line(result.follow_up)})"
