"""A plan grouped by the Team owning each topic (docs/teams.md): the order the renderers show
actions in, and each owner's summary line. Without owners there is one group without a heading,
so the output of manifests without teams does not change."""

from __future__ import annotations

from reconciler.models.plan import Action, OwnerSummary, Plan
from reconciler.render.values import count, plural

NO_OWNER = "no owner"


def action_groups(plan: Plan) -> list[tuple[OwnerSummary | None, list[int]]]:
    """(owner, indices of its actions in plan.actions), owners by name, the unowned last; one
    group with no owner when the plan has no owners."""
    if not plan.owners:
        return [(None, list(range(len(plan.actions))))]
    summaries = {o.owner: o for o in plan.owners}
    indices: dict[str | None, list[int]] = {}
    for i, action in enumerate(plan.actions):  # an owner without a summary (none is made so) is shown as none
        indices.setdefault(action.owner if action.owner in summaries else None, []).append(i)
    groups: list[tuple[OwnerSummary | None, list[int]]] = [(o, indices[o.owner]) for o in plan.owners if o.owner in indices]
    if None in indices:
        groups.append((None, indices[None]))
    return groups


def owner_line(owner: OwnerSummary) -> str:
    """`payments (@acme/payments): 1 to create, 2 to change, 0 to truncate, 1 to delete (1 destructive); 1 error, 0 warnings`"""
    destructive = f" ({count(owner.destructive)} destructive)" if owner.destructive else ""
    return (
        f"{owner.owner} ({owner.review}): {count(owner.create)} to create, {count(owner.change)} to change, "
        f"{count(owner.truncate)} to truncate, {count(owner.delete)} to delete{destructive}; "
        f"{plural(owner.errors, 'error')}, {plural(owner.warnings, 'warning')}"
    )


def owners_touched(plan: Plan, actions: list[Action]) -> list[OwnerSummary]:
    """The owners of the topics `actions` concern, by name."""
    names = {a.owner for a in actions}
    return [o for o in plan.owners if o.owner in names]
