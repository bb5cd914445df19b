"""JSON: the stable, versioned machine format, and the saved-plan format `apply` reads back
(`reconciler.files.saved_plan`, which drops the derived figures written here for readers).
"""
from __future__ import annotations

import json

from reconciler.models.plan import Plan, TruncateRecords
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
