"""JSON: the stable, versioned machine format. A plan's JSON is also the saved-plan file, so it is
written where it is read back (`reconciler.files.saved_plan`).
"""

from __future__ import annotations

from reconciler.files.json_document import json_text
from reconciler.files.saved_plan import plan_json
from reconciler.models.result import ApplyResult

__all__ = ["plan_json", "result_json"]


def result_json(result: ApplyResult) -> str:
    data = result.model_dump(mode="json")
    data["succeeded"] = result.succeeded
    data["converged"] = result.converged
    return json_text(data) + "\n"
