"""Markdown for the workflows, always rendered from the saved JSON plan by the installed reconciler,
never taken from a Markdown file an earlier job wrote:

    plan_report.py plan PLAN.json                    the plan (pull-request comment, reviewers' summary)
    plan_report.py review PLAN.json [RESULT.json]    per action: what was reviewed, what was applied

A file that is not a plan or a result this version wrote is one line on stderr, exit 1.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from reconciler.errors import ReconcilerError
from reconciler.files.saved_plan import load_plan_file
from reconciler.models.result import ApplyResult
from reconciler.render import render_plan
from reconciler.render.review import review_markdown


def main(argv: list[str]) -> int:
    try:
        match argv:
            case ["plan", plan_file]:
                sys.stdout.write(render_plan(load_plan_file(plan_file), "markdown"))
            case ["review", plan_file, *result_file] if len(result_file) <= 1:
                result = _result(result_file[0]) if result_file else None
                sys.stdout.write(review_markdown(load_plan_file(plan_file), result))
            case _:
                print(__doc__, file=sys.stderr)
                return 1
    except ReconcilerError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


def _result(path: str) -> ApplyResult:
    """The result `apply --format json` wrote, without the figures it derives for readers."""
    try:
        data = json.loads(Path(path).read_bytes())
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        return ApplyResult.model_validate({k: v for k, v in data.items() if k in ApplyResult.model_fields})
    except (OSError, ValueError) as e:
        raise ReconcilerError(
            f"{path} is not an apply result (`reconcile apply --format json -o FILE`): {e}".splitlines()[0]
        ) from e


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
