"""Golden plans: each case directory holds desired manifests and an observed snapshot, and the
expected plan in every format. One parametrized test runs them all.

A case is `<case>/manifests/` + `<case>/observed.json`, or a `case.json` naming other paths
(relative to the repository root) for both. Regenerate the expected files after an intended
change with `UPDATE_GOLDEN=1 python -m pytest tests/golden` and review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from reconciler.manifests import load_manifests
from reconciler.models.formats import PLAN_FORMATS
from reconciler.plan.planner import plan
from reconciler.render import render_plan
from reconciler.files.snapshot import load_snapshot

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
# Named, so a case lost (deleted, renamed, its folder moved) fails instead of silently not running.
CASE_NAMES = [
    "capacity",
    "config-drift",
    "example-prod-eu",
    "example-staging-eu",
    "in-sync",
    "new-cluster",
    "refused-changes",
    "replica-reassignment",
    "retention-cuts",
    "retention-policy",
    "retention-stepping",
    "teams",
    "truncation-kinds",
]
CASES = [HERE / name for name in CASE_NAMES]
# Each registered format has its expected file: a new format needs its suffix here and its files.
SUFFIXES = {"text": "txt", "json": "json", "markdown": "md"}
OUTPUTS = {fmt: f"plan.{SUFFIXES[fmt]}" for fmt in PLAN_FORMATS}


def _inputs(case: Path) -> tuple[Path, Path]:
    spec = case / "case.json"
    if spec.exists():
        paths = json.loads(spec.read_text())
        return ROOT / paths["manifests"], ROOT / paths["snapshot"]
    return case / "manifests", case / "observed.json"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden_plan(case: Path) -> None:
    manifests_dir, snapshot = _inputs(case)
    observed = load_snapshot(snapshot)
    result = plan(load_manifests(manifests_dir).desired_state(observed.cluster), observed)
    for fmt, filename in OUTPUTS.items():
        rendered = render_plan(result, fmt)
        expected_file = case / filename
        if os.environ.get("UPDATE_GOLDEN"):
            expected_file.write_text(rendered, encoding="utf-8")
        assert expected_file.exists(), f"{expected_file} missing: run with UPDATE_GOLDEN=1 and review it"
        assert rendered == expected_file.read_text(encoding="utf-8"), f"{case.name}: {fmt} output changed"


def test_every_case_folder_is_named_and_every_named_case_is_there() -> None:
    found = sorted(p.name for p in HERE.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))
    assert found == CASE_NAMES
