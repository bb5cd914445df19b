"""What an apply did, as text and Markdown (JSON lives with the other JSON)."""
from __future__ import annotations

from reconciler.models.result import ActionOutcome, ApplyResult, Status
from reconciler.render.text import summary_line
from reconciler.render.values import count

_WORDS = {Status.APPLIED: "applied", Status.ALREADY_SATISFIED: "already satisfied",
          Status.REFUSED: "REFUSED", Status.FAILED: "FAILED"}
_STYLE = {Status.APPLIED: "32", Status.ALREADY_SATISFIED: "2", Status.REFUSED: "33;1", Status.FAILED: "31;1"}


def result_text(result: ApplyResult, color: bool = False) -> str:
    def paint(text: str, status: Status) -> str:
        return f"\033[{_STYLE[status]}m{text}\033[0m" if color else text

    lines = [f"Apply to cluster {result.cluster}", ""]
    width = max(len(w) for w in _WORDS.values())
    for o in result.outcomes:
        lines.append(f"  {paint(_WORDS[o.status].ljust(width), o.status)}  {_title(o)}"
                     + (f": {o.message}" if o.message else ""))
        for p in o.partitions:
            after = f", log start now {count(p.low_watermark)}" if p.low_watermark is not None else ""
            lines.append(f"      partition {p.partition}: {_WORDS[p.status]} (target {count(p.target_offset)}{after})"
                         + (f" - {p.message}" if p.message else ""))
    lines += ["", _totals(result), _convergence(result)]
    return "\n".join(lines) + "\n"


def result_markdown(result: ApplyResult) -> str:
    lines = [f"### Apply to `{result.cluster}`", "", f"**{_totals(result)}** {_convergence(result)}", "",
             "| Result | Action | Topic | Message |", "|---|---|---|---|"]
    for o in result.outcomes:
        lines.append(f"| {_WORDS[o.status]} | {o.kind.replace('_', ' ')} | `{o.topic}` | {o.message.replace('|', '/')} |")
    for o in result.outcomes:
        if o.partitions:
            lines += ["", f"<details><summary>{o.kind.replace('_', ' ')} {o.topic}: partitions</summary>", "",
                      "| Partition | Result | Target | Log start after | Message |", "|---:|---|---:|---:|---|"]
            lines += [f"| {p.partition} | {_WORDS[p.status]} | {count(p.target_offset)} | "
                      f"{'' if p.low_watermark is None else count(p.low_watermark)} | {p.message.replace('|', '/')} |"
                      for p in o.partitions]
            lines += ["", "</details>"]
    return "\n".join(lines) + "\n"


def _title(o: ActionOutcome) -> str:
    return f"{o.kind.replace('_', ' ')} {o.topic}"


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
    return f"Not converged: planning again still finds changes ({summary_line(result.follow_up)})"
