"""What an apply did, as text and Markdown (JSON lives with the other JSON)."""

from __future__ import annotations

from reconciler.models.plan import ActionKind, AlterConfigs, ReassignReplicas
from reconciler.models.result import ActionOutcome, ApplyResult, PartitionOutcome, Status
from reconciler.render.style import STATUS_STYLE, paint
from reconciler.render.table import markdown_table
from reconciler.render.text import summary_line
from reconciler.render.values import count, more_applies, replica_list

_WORDS = {
    Status.APPLIED: "applied",
    Status.ALREADY_SATISFIED: "already satisfied",
    Status.IN_PROGRESS: "in progress",
    Status.REFUSED: "REFUSED",
    Status.FAILED: "FAILED",
}


def result_text(result: ApplyResult, color: bool = False) -> str:
    lines = [f"Apply to cluster {result.cluster}", ""]
    width = max(len(w) for w in _WORDS.values())
    for o in result.outcomes:
        lines.append(
            f"  {paint(_WORDS[o.status].ljust(width), STATUS_STYLE[o.status], color)}  {_title(o)}"
            + (f": {o.message}" if o.message else "")
        )
        for p in o.partitions:
            lines.append(
                f"      partition {p.partition}: {_WORDS[p.status]} ({_partition_facts(p)})"
                + (f" - {p.message}" if p.message else "")
            )
    lines += ["", _totals(result), _convergence(result)]
    return "\n".join(lines) + "\n"


def result_markdown(result: ApplyResult) -> str:
    lines = [
        f"### Apply to `{result.cluster}`",
        "",
        f"**{_totals(result)}** {_convergence(result)}",
        "",
        *markdown_table(
            ["Result", "Action", "Topic", "Message"],
            [[_WORDS[o.status], o.kind.facts.label, f"`{o.topic}`", o.message] for o in result.outcomes],
        ),
    ]
    for o in result.outcomes:
        if not o.partitions:
            continue
        right: tuple[int, ...]
        if all(p.target_offset is not None for p in o.partitions):
            header, right = ["Partition", "Result", "Target", "Log start after", "Message"], (0, 2, 3)
            rows = [
                [str(p.partition), _WORDS[p.status], _known(p.target_offset), _known(p.low_watermark), p.message]
                for p in o.partitions
            ]
        else:
            header, right = ["Partition", "Result", "Replicas", "Message"], (0,)
            rows = [
                [str(p.partition), _WORDS[p.status], "" if p.replicas is None else replica_list(p.replicas), p.message]
                for p in o.partitions
            ]
        lines += [
            "",
            f"<details><summary>{_title(o)}: partitions</summary>",
            "",
            *markdown_table(header, rows, right=right),
            "",
            "</details>",
        ]
    return "\n".join(lines) + "\n"


def status_word(status: Status) -> str:
    """How a result names a status (the Result column)."""
    return _WORDS[status]


def _title(o: ActionOutcome) -> str:
    return f"{o.kind.facts.label} {o.topic}"


def _partition_facts(p: PartitionOutcome) -> str:
    if p.target_offset is not None:
        after = f", log start now {count(p.low_watermark)}" if p.low_watermark is not None else ""
        return f"target {count(p.target_offset)}{after}"
    return "replicas unknown" if p.replicas is None else f"replicas {replica_list(p.replicas)}"


def _known(n: int | None) -> str:
    return "" if n is None else count(n)


def _totals(result: ApplyResult) -> str:
    n = {s: sum(o.status is s for o in result.outcomes) for s in Status}
    running = f"{n[Status.IN_PROGRESS]} in progress, " if n[Status.IN_PROGRESS] else ""
    return (
        f"Result: {n[Status.APPLIED]} applied, {n[Status.ALREADY_SATISFIED]} already satisfied, {running}"
        f"{n[Status.REFUSED]} refused, {n[Status.FAILED]} failed."
    )


def _convergence(result: ApplyResult) -> str:
    if result.convergence_unknown:
        return f"Convergence unknown: {result.convergence_unknown}. Plan again to see what the cluster holds now."
    if result.follow_up is None:
        return "Convergence not checked."
    if result.converged:
        return "Converged: planning again shows no changes."
    moving = result.in_progress or _still_moving(result)
    if moving:
        return (
            f"Not converged: {len(moving)} partition(s) still being reassigned ({', '.join(moving[:5])}"
            f"{' ...' if len(moving) > 5 else ''}). `reconcile apply` again waits for them and then removes the "
            "throttles; `reconcile apply --cancel-reassignments` cancels them."
        )
    waiting = result.follow_up.waiting_partitions
    if waiting and not result.follow_up.has_changes:
        return (
            f"Not converged: {len(waiting)} partition(s) offline wait for the next apply "
            f"({', '.join(waiting[:5])}{' ...' if len(waiting) > 5 else ''})."
        )
    if _stepping(result):
        # The next plan's own step, and those it says follow it.
        return (
            f"Not converged: stepping: {more_applies(result.follow_up.stepping_applies + 1)} to reach the declared "
            f"retention, one allowed step per apply (the next plan: {summary_line(result.follow_up)})"
        )
    return f"Not converged: planning again still finds changes ({summary_line(result.follow_up)})"


def _stepping(result: ApplyResult) -> bool:
    """Whether the plan after applying lowers retention a step further: a step of its own, or the
    last one (within the policy's limit, a plain cut) on a topic whose retention this apply lowered."""
    lowered = {o.topic for o in result.outcomes if o.kind is ActionKind.ALTER_CONFIGS and o.status is Status.APPLIED}
    return result.follow_up is not None and any(
        isinstance(a, AlterConfigs) and a.retention is not None and (a.retention.steps or a.topic in lowered)
        for a in result.follow_up.actions
    )


def _still_moving(result: ApplyResult) -> list[str]:
    """The partitions the plan after applying still waits for, when it has nothing else to do
    (a reassignment the apply did not wait for, e.g. one a saved plan found running)."""
    plan = result.follow_up
    if plan is None or any(
        not isinstance(a, ReassignReplicas) or not all(p.in_progress for p in a.partitions) for a in plan.actions
    ):
        return []
    return [f"{a.topic}-{p.partition}" for a in plan.actions if isinstance(a, ReassignReplicas) for p in a.partitions]
