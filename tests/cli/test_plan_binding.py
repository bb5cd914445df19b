"""A saved plan records what its manifests meant and the Git commit they were at, and `apply`
refuses it before connecting once they mean something else: through the CLI, offline (the
example manifests in a Git repository of their own, planned against the example snapshot; the
refusal comes before any connection, so no cluster is needed)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from click.testing import CliRunner

from reconciler.cli import main

ROOT = Path(__file__).resolve().parents[2]


def _git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, env=env)
    return done.stdout.strip()


def _run(*args: str):
    result = CliRunner().invoke(main, list(args))
    assert "Traceback" not in result.output, result.output
    return result


def test_the_plan_records_the_commit_and_apply_names_both_when_refusing(tmp_path):
    repo = tmp_path / "gitops"
    shutil.copytree(ROOT / "manifests", repo / "manifests")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "reviewed")
    reviewed = _git(repo, "rev-parse", "HEAD")
    manifests, snapshot, saved = repo / "manifests", repo / "manifests" / "snapshots" / "prod-eu.json", tmp_path / "plan.json"

    result = _run("plan", str(manifests), "--snapshot", str(snapshot), "--format", "json", "-o", str(saved), "--no-color")
    assert result.exit_code == 2, result.output
    bound = json.loads(saved.read_text())["manifests"]
    assert bound["commit"] == reviewed and bound["digest"].startswith("sha256:")
    assert bound["desired"]["cluster"]["cluster_id"] == "q7Yc0eZ2T9ii5dXk3Lw0Aw"
    assert f"Manifests {bound['digest'][:19]} at commit {reviewed[:12]}: apply refuses this plan" in result.output

    # A commit that only rewords (a comment) leaves the meaning, and so the digest, as it was.
    with (manifests / "policy.yaml").open("a") as f:
        f.write("# reviewed by the platform team\n")
    _git(repo, "commit", "-q", "-am", "comment")
    again = _run("plan", str(manifests), "--snapshot", str(snapshot), "--format", "json")
    assert json.loads(again.stdout)["manifests"]["digest"] == bound["digest"]

    # main moves on: another change lands before this plan is applied.
    policy = manifests / "policy.yaml"
    policy.write_text(policy.read_text().replace("max_delete_fraction: 0.9", "max_delete_fraction: 0.8"))
    _git(repo, "commit", "-q", "-am", "tighter")
    now = _git(repo, "rev-parse", "HEAD")
    result = _run("apply", str(saved), "--manifests", str(manifests))
    assert result.exit_code == 1
    head, *listed = result.output.splitlines()
    assert head == (
        f"Error: {saved} was reviewed for other manifests: the manifests in {manifests} (now at commit {now}) mean "
        f"something else for cluster prod-eu than those it was planned from at commit {reviewed} (1 difference, "
        "below). Nothing was written. Plan again and have the new plan reviewed."
    )
    assert listed == ["  policy, max_delete_fraction: reviewed 0.9, now 0.8"]


def test_a_plan_made_for_another_cluster_id_than_the_pin_is_refused_before_connecting(tmp_path, monkeypatch):
    """A plan against a snapshot of another cluster (the snapshot's id is not the Cluster document's
    pin) is refused on what the plan and the manifests say: an unreachable cluster does not hide it."""
    snapshot = json.loads((ROOT / "manifests" / "snapshots" / "prod-eu.json").read_text())
    assert snapshot["cluster_id"] == "q7Yc0eZ2T9ii5dXk3Lw0Aw"  # the pin of prod-eu in the example manifests
    snapshot["cluster_id"] = "Zr1m3b0aQ1Gm3bRk2mSx9g"
    other, saved = tmp_path / "other.json", tmp_path / "plan.json"
    other.write_text(json.dumps(snapshot))
    manifests = str(ROOT / "manifests")
    assert _run("plan", manifests, "--snapshot", str(other), "--format", "json", "-o", str(saved)).exit_code == 2
    for name in ("KAFKA_PROD_EU_USER", "KAFKA_PROD_EU_PASSWORD"):  # prod-eu's ${...} credentials
        monkeypatch.setenv(name, "x")
    result = _run("apply", str(saved), "--manifests", manifests, "--bootstrap-servers", "127.0.0.1:1")
    assert result.exit_code == 1
    assert result.output.startswith(
        "Error: the plan was made for cluster id Zr1m3b0aQ1Gm3bRk2mSx9g, but the Cluster document (clusters.yaml:"
    ), result.output
    assert "pins cluster_id q7Yc0eZ2T9ii5dXk3Lw0Aw" in result.output and "nothing was changed" in result.output
