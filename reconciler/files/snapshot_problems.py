"""How a bad snapshot is reported, in the same words whether it was JSON or Parquet.

Deleting records cannot be undone, and the planner turns a snapshot's offsets into DeleteRecords
targets, so a snapshot is refused whole unless every value passes the rules in
`reconciler.models.observed`: the error names the file and the JSON path (or the Parquet row) of
each bad value (the first `MAX_PROBLEMS`, then how many more), and nothing is planned.
"""

from __future__ import annotations

from typing import Any

from reconciler.errors import SnapshotError, noun, problem_report
from reconciler.models.observed import INT32_MAX, INT64_MAX

# The dict-valued fields of a snapshot, with how many levels of keys follow each (for JSON paths).
SNAPSHOT_KEYS = {
    "topics": 1,
    "configs": 1,
    "offsets_by_timestamp": 1,
    "group_offsets": 3,
    "reassignments": 2,
    "log_dirs": 1,
    "capacity_unknown": 1,
    "activity": 1,
    "committed": 1,
}
TAKE_A_NEW_ONE = "Take a new one with `reconcile snapshot`; do not edit snapshots by hand."


def explain(error: Any) -> str | None:
    """Clearer words than pydantic's for the snapshot's own ranges."""
    bound = error.get("ctx") or {}
    if error["type"] == "greater_than_equal" and bound.get("ge") == -1:
        return "must be >= 0 (-1 is the marker for a value not known; see reconciler.models.observed)"
    if error["type"] == "less_than_equal" and bound.get("le") in (INT64_MAX, INT32_MAX):
        width = "int64" if bound["le"] == INT64_MAX else "int32"
        return f"above {width}'s maximum {bound['le']}, so Kafka cannot have reported it"
    return None


def invalid_snapshot(origin: str, count: int, problems: list[str]) -> SnapshotError:
    """One error listing the problems (at most MAX_PROBLEMS of `count`)."""
    head = (
        f"{origin} is not a valid snapshot ({count} {noun(count, 'problem')}), so it is refused "
        f"whole and nothing ran on it. {TAKE_A_NEW_ONE}"
    )
    return SnapshotError(problem_report(head, count, problems))
