"""Reviewed against applied: for each action of a reviewed plan, what the plan said and what apply
did with it, for the job summary of the apply workflow (Markdown)."""

from __future__ import annotations

from reconciler.models.plan import ActionKind, Plan
from reconciler.models.result import ActionOutcome, ApplyResult
from reconciler.render.apply_result import status_word
from reconciler.render.markdown import change_summary
from reconciler.render.table import markdown_table


def review_markdown(plan: Plan, result: ApplyResult | None) -> str:
    """One row per reviewed action. `result` is None when apply wrote nothing (it refused the whole
    plan); an outcome for an action the plan does not hold is listed too, and said to be so."""
    waiting: dict[tuple[ActionKind, str], list[ActionOutcome]] = {}
    for done in result.outcomes if result else []:
        waiting.setdefault((done.kind, done.topic), []).append(done)
    unsent = "not sent" if result else "not applied: nothing was written"
    rows = []
    for action in plan.actions:
        matching = waiting.get((action.kind, action.topic))
        outcome = matching.pop(0) if matching else None
        rows.append(
            [
                f"`{action.kind.facts.symbol}`",
                action.kind.facts.label,
                f"`{action.topic}`",
                change_summary(action),
                _applied(outcome) if outcome else unsent,
            ]
        )
    for extra in (o for left in waiting.values() for o in left):
        rows.append(["", extra.kind.facts.label, f"`{extra.topic}`", "**not in the reviewed plan**", _applied(extra)])
    lines = [f"### Reviewed and applied: `{plan.cluster}`", ""]
    if rows:
        lines += markdown_table(["", "Action", "Topic", "Reviewed", "Applied"], rows)
    else:
        lines.append("The reviewed plan has no changes.")
    return "\n".join(lines) + "\n"


def _applied(outcome: ActionOutcome) -> str:
    return status_word(outcome.status) + (f": {outcome.message}" if outcome.message else "")
