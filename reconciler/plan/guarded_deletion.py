"""Whether a deletion guarded by idleness may be planned (docs/idle-topics.md), pure: the guard's
duration against the evidence read. A topic whose idleness cannot be shown is kept, never deleted."""

from __future__ import annotations

from reconciler.models.idle import TopicActivity, stamp
from reconciler.units import human_duration


def not_shown_idle(topic: str, guard_ms: int, evidence: TopicActivity | None) -> str | None:
    """Why the guarded deletion of `topic` is not planned, or None when the evidence shows it idle."""
    held = f"{topic} is not deleted: it must have been idle for {human_duration(guard_ms)} (delete_only_if_idle_for"
    held += " or the policy's deletions_require_idle_for), and "
    if evidence is None:
        return held + "its activity was not read (a plan from a snapshot cannot show it); plan against the cluster"
    reasons = evidence.not_idle(guard_ms)
    return held + "; ".join(reasons) if reasons else None


def shown_idle(guard_ms: int, evidence: TopicActivity) -> str:
    """The evidence of a planned guarded deletion, in words."""
    newest = evidence.newest()
    records = (
        "no record on disk"
        if newest is None
        else f"newest record stamped {stamp(newest.newest_timestamp or 0)} on partition {newest.partition}"
    )
    names = ", ".join(g.group for g in evidence.groups[:5]) + (" ..." if len(evidence.groups) > 5 else "")
    groups = f"committed on by {names}, none with live members" if evidence.groups else "no group committed on it"
    return f"it has been idle for at least {human_duration(guard_ms)} ({records}; {groups}; read at {stamp(evidence.read_at_ms)})"
