"""Each action and diagnostic of a plan marked with the Team owning its topic, and what the plan
does to each team's topics (docs/teams.md): the renderers group by owner from these. A plan of
manifests without teams is left as it is, so its output does not change."""

from __future__ import annotations

from collections.abc import Sequence

from reconciler.models.desired import DesiredState
from reconciler.models.plan import Action, Diagnostic, OwnerSummary, Severity


def by_owner(
    desired: DesiredState, actions: Sequence[Action], diagnostics: Sequence[Diagnostic]
) -> tuple[list[Action], list[Diagnostic], list[OwnerSummary]]:
    """`actions` and `diagnostics` with their owners set, and one summary per team they concern."""
    if not desired.teams:
        return list(actions), list(diagnostics), []
    topics = desired.topics

    def owner_of(topic: str | None) -> str | None:
        found = topics.get(topic) if topic is not None else None
        return found.owner if found is not None else None

    marked = [a if (o := owner_of(a.topic)) is None else a.model_copy(update={"owner": o}) for a in actions]
    said = [
        d if d.owner is not None or (o := owner_of(d.topic)) is None else d.model_copy(update={"owner": o}) for d in diagnostics
    ]
    counts: dict[str, dict[str, int]] = {}
    for a in marked:
        if a.owner is not None:
            count = counts.setdefault(a.owner, {})
            count[a.kind.facts.summary] = count.get(a.kind.facts.summary, 0) + 1
            count["destructive"] = count.get("destructive", 0) + a.destructive
    for d in said:
        if d.owner is not None and d.severity is not Severity.INFO:
            count = counts.setdefault(d.owner, {})
            key = "errors" if d.severity is Severity.ERROR else "warnings"
            count[key] = count.get(key, 0) + 1
    summaries = [
        OwnerSummary(owner=name, review=desired.teams[name].review, **count)
        for name, count in sorted(counts.items())
        if name in desired.teams
    ]
    return marked, said, summaries
