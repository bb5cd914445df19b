"""The shipped workflows, the action and docs/trust.md agree: who gets which secret, what is pinned,
and the artifact names the lookup relies on. (zizmor audits the rest in .ci/run.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tests.github.scripts import load_script

rp = load_script("reviewed_plan")

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github/workflows").glob("*.yml"))
TRUST = (ROOT / "docs/trust.md").read_text(encoding="utf-8")
SECRET = re.compile(r"secrets\.([A-Z0-9_]+)")


def _load(path: Path) -> dict:
    # PyYAML reads a bare `on:` as True (YAML 1.1); GitHub reads it as the key "on".
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if True in data:
        data["on"] = data.pop(True)
    return data


def _uses(node: object) -> list[str]:
    if isinstance(node, dict):
        return [v for k, v in node.items() if k == "uses"] + [u for v in node.values() for u in _uses(v)]
    if isinstance(node, list):
        return [u for v in node for u in _uses(v)]
    return []


@pytest.mark.parametrize("path", [*WORKFLOWS, ROOT / "action.yml"], ids=lambda p: p.name)
def test_every_action_is_pinned_to_a_commit_with_its_version_named(path):
    text = path.read_text(encoding="utf-8")
    uses = _uses(_load(path))
    assert uses
    for use in uses:
        if use == "$/":
            continue  # this repository at the running commit
        assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", use), use
        assert re.search(re.escape(use) + r" # v\d+\.\d+\.\d+", text), f"{use}: name the version in a comment"


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_workflows_start_from_no_permissions_and_each_job_asks(path):
    workflow = _load(path)
    assert workflow["permissions"] == {}
    for name, job in workflow["jobs"].items():
        assert "permissions" in job, name
        assert "write" not in {job["permissions"].get("contents"), job["permissions"].get("actions")}, name
        for step in job["steps"]:
            if str(step.get("uses", "")).startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False, name


def test_every_secret_the_workflows_use_is_named_in_trust_md():
    used = {name for path in WORKFLOWS for name in SECRET.findall(path.read_text(encoding="utf-8"))}
    assert used
    assert sorted(name for name in used if name not in TRUST) == []


def test_write_credentials_live_only_in_the_protected_environment():
    for path in WORKFLOWS:
        workflow = _load(path)
        for name, job in workflow["jobs"].items():
            applier = [s for s in SECRET.findall(yaml.safe_dump(job)) if "APPLIER" in s]
            if applier:
                assert job.get("environment") == "kafka-production", f"{path.name}/{name}"
                assert "pull_request" not in workflow["on"] and "pull_request_target" not in workflow["on"]
    plan = _load(ROOT / ".github/workflows/plan.yml")
    assert set(plan["on"]) == {"pull_request"}
    (step,) = [s for s in plan["jobs"]["plan"]["steps"] if s.get("id") == "plan"]
    assert "--offline" in step["with"]["args"].split()  # validate_only needs write rights
    assert all("READER" in s for s in SECRET.findall(yaml.safe_dump(step)))
    assert "kafka-production" in TRUST and "kafka-production" in yaml.safe_dump(_load(ROOT / ".github/workflows/apply.yml"))


def test_artifact_names_are_the_ones_the_lookup_asks_for():
    plan = (ROOT / ".github/workflows/plan.yml").read_text(encoding="utf-8")
    apply = (ROOT / ".github/workflows/apply.yml").read_text(encoding="utf-8")
    cluster = "${{ matrix.cluster }}"
    assert f"name: {rp.artifact_name(cluster, '${{ github.event.pull_request.head.sha }}')}\n" in plan
    assert f"name: {rp.artifact_name(cluster, '${{ github.sha }}')} " in apply  # a fresh plan, for workflow_dispatch
    assert rp.PLAN_WORKFLOW == ".github/workflows/plan.yml" and rp.APPLY_WORKFLOW == ".github/workflows/apply.yml"
    assert "reconcile-plan-<cluster>-<head sha>" in TRUST


def test_the_dispatch_inputs_are_the_documented_ones():
    dispatch = _load(ROOT / ".github/workflows/apply.yml")["on"]["workflow_dispatch"]["inputs"]
    assert set(dispatch) == {"plan-run-id", "cluster"}
    assert "plan-run-id" in TRUST and "gh workflow run apply.yml -f plan-run-id=" in TRUST
