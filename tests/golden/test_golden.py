"""Golden plans: each case directory holds desired manifests and an observed snapshot, and the
expected plan in every format. One parametrized test runs them all. A case in DRIFT_CASES also
holds its drift report (`reconcile drift <manifests> --snapshot observed.json`) as text and JSON,
with the report's generation time fixed.

A case is `<case>/manifests/` + `<case>/observed.json`, or a `case.json` naming other paths
(relative to the repository root) for both. Regenerate the expected files after an intended
change with `UPDATE_GOLDEN=1 python -m pytest tests/golden` and review the diff.
"""

from __future__ import annotations

import json
import os
from contextlib import AbstractContextManager
from datetime import datetime, timezone
from pathlib import Path

import pytest

from reconciler.app.cluster_access import LiveCluster
from reconciler.app.inputs import snapshot_to_plan_on
from reconciler.app.report_drift import drift_report
from reconciler.drift.render import render_report
from reconciler.manifests import load_manifests
from reconciler.models.desired import ClusterSpec
from reconciler.models.formats import PLAN_FORMATS
from reconciler.plan.planner import plan
from reconciler.render import render_plan

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
# Named, so a case lost (deleted, renamed, its folder moved) fails instead of silently not running.
CASE_NAMES = [
    "capacity",
    "config-drift",
    "example-prod-eu",
    "example-staging-eu",
    "idle-topics",
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
DRIFT_CASES = [HERE / "idle-topics"]
DRIFT_OUTPUTS = {"text": "drift.txt", "json": "drift.json"}
# A report says when it was made; the golden one says this instead.
GENERATED_AT = datetime(2026, 11, 29, 9, 10, tzinfo=timezone.utc)


def _inputs(case: Path) -> tuple[Path, Path]:
    spec = case / "case.json"
    if spec.exists():
        paths = json.loads(spec.read_text())
        return ROOT / paths["manifests"], ROOT / paths["snapshot"]
    return case / "manifests", case / "observed.json"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden_plan(case: Path) -> None:
    manifests_dir, snapshot = _inputs(case)
    manifests = load_manifests(manifests_dir)
    observed = snapshot_to_plan_on(manifests, snapshot)  # as `reconcile plan --snapshot` reads it
    result = plan(manifests.desired_state(observed.cluster), observed)
    for fmt, filename in OUTPUTS.items():
        _check(case, filename, render_plan(result, fmt))


def _check(case: Path, filename: str, rendered: str) -> None:
    expected_file = case / filename
    if os.environ.get("UPDATE_GOLDEN"):
        expected_file.write_text(rendered, encoding="utf-8")
    assert expected_file.exists(), f"{expected_file} missing: run with UPDATE_GOLDEN=1 and review it"
    assert rendered == expected_file.read_text(encoding="utf-8"), f"{case.name}: {filename} changed"


def _no_cluster(spec: ClusterSpec) -> AbstractContextManager[LiveCluster]:
    raise AssertionError("a drift report of a snapshot must not connect to a cluster")


@pytest.mark.parametrize("case", DRIFT_CASES, ids=[c.name for c in DRIFT_CASES])
def test_golden_drift(case: Path) -> None:
    manifests_dir, snapshot = _inputs(case)
    report = drift_report(str(manifests_dir), None, str(snapshot), None, None, _no_cluster).report
    report = report.model_copy(update={"generated_at": GENERATED_AT})
    for fmt, filename in DRIFT_OUTPUTS.items():
        _check(case, filename, render_report(report, fmt))


def test_every_case_folder_is_named_and_every_named_case_is_there() -> None:
    found = sorted(p.name for p in HERE.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))
    assert found == CASE_NAMES
