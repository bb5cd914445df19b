"""JSON: the stable, versioned machine format, and the saved-plan format `apply` reads back.

Derived figures (summary, records per partition) are written for readers and dropped on load, so
a saved plan is applied exactly as it was planned, never as it was edited to look.
"""
from __future__ import annotations

import json

from pydantic import ValidationError

from reconciler.errors import SnapshotError, summarize_validation_error
from reconciler.models.plan import PLAN_FORMAT_VERSION, Plan, TruncateRecords
from reconciler.models.result import ApplyResult

def plan_json(plan: Plan) -> str:
    data = plan.model_dump(mode="json")
    data["summary"] = plan.summary().model_dump(mode="json")
    for action, dumped in zip(plan.actions, data["actions"]):
        if isinstance(action, TruncateRecords):
            dumped["records_to_delete"] = action.records_to_delete
            for partition, row in zip(action.partitions, dumped["partitions"]):
                row["records_to_delete"] = partition.records_to_delete
    return json.dumps(data, indent=2, sort_keys=False) + "\n"


def result_json(result: ApplyResult) -> str:
    data = result.model_dump(mode="json")
    data["succeeded"] = result.succeeded
    data["converged"] = result.converged
    return json.dumps(data, indent=2) + "\n"


def load_plan_json(text: str, origin: str = "plan") -> Plan:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise SnapshotError(f"{origin} is not JSON (line {e.lineno}, column {e.colno}: {e.msg}); save a plan "
                            "with `reconcile plan --format json -o FILE`.") from e
    if not isinstance(data, dict) or "actions" not in data:
        raise SnapshotError(f"{origin} is not a saved plan; save one with `reconcile plan --format json -o FILE`.")
    version = data.get("format_version")
    if version != PLAN_FORMAT_VERSION:
        raise SnapshotError(f"{origin} has plan format version {version!r}; this reconcile reads version "
                            f"{PLAN_FORMAT_VERSION}. Plan again with this version.")
    _drop_derived(data)
    try:
        return Plan.model_validate(data)
    except ValidationError as e:
        raise SnapshotError(f"{origin} is not a valid saved plan ({summarize_validation_error(e)}); "
                            "plan again rather than editing a saved plan.") from e


def _drop_derived(data: dict) -> None:
    data.pop("summary", None)
    for action in data.get("actions") or []:
        if isinstance(action, dict):
            action.pop("records_to_delete", None)
            for row in action.get("partitions") if isinstance(action.get("partitions"), list) else []:
                if isinstance(row, dict):
                    row.pop("records_to_delete", None)
