"""Saved plans: the JSON plan (`reconcile plan --format json -o FILE`) written and read back for
`reconcile apply FILE`.

Derived figures (summary, records per partition) are written for readers and dropped on load, so
a saved plan is applied exactly as it was planned, never as it was edited to look.
"""

from __future__ import annotations

from pydantic import ValidationError

from reconciler.errors import MAX_PROBLEMS, SnapshotError, noun, problem_report, shown, validation_problems
from reconciler.files.json_document import json_text, read_json_document
from reconciler.models.plan import PLAN_FORMAT_VERSION, Plan, TruncateRecords


def plan_json(plan: Plan) -> str:
    """The plan as JSON, with the derived figures `load_plan_json` drops again."""
    data = plan.model_dump(mode="json", exclude={"manifests"})
    data["summary"] = plan.summary().model_dump(mode="json")
    if plan.manifests is not None:  # last: the desired state it records is the bulk of the file, and no reading matter
        # that state is JSON data already: dumping it again would copy the bulk of the file once more
        data["manifests"] = plan.manifests.model_dump(mode="json", exclude={"desired"}) | {"desired": plan.manifests.desired}
    for action, dumped in zip(plan.actions, data["actions"]):
        if isinstance(action, TruncateRecords):
            dumped["records_to_delete"] = action.records_to_delete
            for partition, row in zip(action.partitions, dumped["partitions"]):
                row["records_to_delete"] = partition.records_to_delete
    return json_text(data) + "\n"


def load_plan_file(path: str) -> Plan:
    """`load_plan_json` of a file: unreadable or not UTF-8 is a SnapshotError naming it, too."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise SnapshotError(f"cannot read saved plan {path}: {e.strerror}. Check the path.") from e
    return load_plan_json(raw, origin=path)


def load_plan_json(text: str | bytes, origin: str = "plan") -> Plan:
    """A saved plan from its JSON (text, or the file's bytes: UTF-8). Anything that is not a plan
    this version wrote is a SnapshotError naming `origin`: not UTF-8, empty, not JSON, nested too
    deep, numbers of thousands of digits; values quoted in messages are cut to a readable length."""
    data = read_json_document(text, origin, "saved plan")
    if not isinstance(data, dict) or "actions" not in data:
        raise SnapshotError(f"{origin} is not a saved plan; save one with `reconcile plan --format json -o FILE`.")
    version = data.get("format_version")
    if version != PLAN_FORMAT_VERSION:
        raise SnapshotError(
            f"{origin} has plan format version {shown(version, 40)}; this reconcile reads version "
            f"{PLAN_FORMAT_VERSION}. Plan again with this version."
        )
    _drop_derived(data)
    try:
        return Plan.model_validate(data)
    except ValidationError as e:
        count = e.error_count()
        head = (
            f"{origin} is not a valid saved plan ({count} {noun(count, 'problem')}); plan again rather than editing a saved plan:"
        )
        raise SnapshotError(problem_report(head, count, validation_problems(e, MAX_PROBLEMS))) from e


def _drop_derived(data: dict) -> None:
    data.pop("summary", None)
    for action in data.get("actions") or []:
        if isinstance(action, dict):
            action.pop("records_to_delete", None)
            partitions = action.get("partitions")
            for row in partitions if isinstance(partitions, list) else []:
                if isinstance(row, dict):
                    row.pop("records_to_delete", None)
