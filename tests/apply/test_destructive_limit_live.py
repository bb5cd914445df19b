"""The policy's max_destructive_actions on the test cluster, through the CLI: a plan holding more
deletions, truncations and retention cuts than the limit is a plan error (exit 1), its saved plan
is refused, and so is one whose error was edited out (apply counts again); within the limit the
same plan applies."""

from __future__ import annotations

import json

from click.testing import CliRunner

from reconciler.cli import main
from tests.apply.test_apply_live import Repo, log_starts, seed

TOPICS = """\
kind: Topic
name: cut.a
truncate: [{keep_last: 10}]
---
kind: Topic
name: cut.b
truncate: [{keep_last: 10}]
---
kind: Topic
name: drop.me
state: absent
"""
POLICY = "kind: Policy\nmax_destructive_actions: {limit}\n---\n"


def _repo(tmp_path, c, limit: int) -> Repo:
    for name in ("cut.a", "cut.b", "drop.me"):
        seed(c, name)
    return Repo(tmp_path, c, POLICY.format(limit=limit) + TOPICS)


def _untouched(c) -> bool:
    return log_starts(c, "cut.a") == [0, 0] and log_starts(c, "cut.b") == [0, 0] and "drop.me" in c.topic_names()


def test_a_plan_over_the_limit_is_an_error_and_is_never_applied(tmp_path, test_cluster):
    c = test_cluster
    repo = _repo(tmp_path, c, limit=2)
    code, plan, output = repo.plan()
    assert code == 1, output
    [error] = [d for d in plan["diagnostics"] if d["code"] == "policy-max-destructive-actions"]
    assert error["severity"] == "error" and error["source"]["file"] == "topics.yaml"
    assert error["source"]["line"] == 2  # at the Policy's max_destructive_actions, not its `kind` line
    assert error["message"].startswith(
        "the plan has 3 destructive actions (delete topic 1, truncate 2), more than the policy's max_destructive_actions 2;"
    )
    assert "error[policy-max-destructive-actions] the plan has 3 destructive actions" in output

    saved = repo.dir / "plan.json"
    apply_saved = ("apply", str(saved), "--manifests", str(repo.dir / "manifests"))
    result = repo.run(*apply_saved)
    assert result.exit_code == 1 and "has 1 error(s) and cannot be applied" in result.output
    # Said before connecting: the manifests' own bootstrap server (127.0.0.1:9) answers nothing.
    unreachable = CliRunner().invoke(main, list(apply_saved))
    assert unreachable.exit_code == 1 and "has 1 error(s) and cannot be applied" in unreachable.output, unreachable.output
    # The error edited out of the saved plan (the manifests, and so its digest, unchanged): apply counts again.
    plan["diagnostics"] = [d for d in plan["diagnostics"] if d["code"] != "policy-max-destructive-actions"]
    saved.write_text(json.dumps(plan))
    for result in (repo.run(*apply_saved), CliRunner().invoke(main, list(apply_saved))):  # reachable or not
        assert result.exit_code == 1
        assert result.output.startswith(
            "Error: the plan for lab cannot be applied under the policy now in the manifests: the plan has 3 destructive "
            "actions (delete topic 1, truncate 2), more than the policy's max_destructive_actions 2;"
        ), result.output
        assert result.output.rstrip().endswith("Nothing was changed.")
    # Nor without a plan file: the fresh plan has the error, is shown, and nothing is asked or applied.
    result = repo.run("apply", "--manifests", str(repo.dir / "manifests"), "--cluster", "lab", "--auto-approve")
    assert result.exit_code == 1 and "max_destructive_actions 2" in result.output
    assert _untouched(c)


def test_within_the_limit_the_plan_applies(tmp_path, test_cluster):
    c = test_cluster
    repo = _repo(tmp_path, c, limit=3)
    code, _, output = repo.plan()
    assert code == 2, output
    code, result = repo.apply()
    assert code == 0, result
    assert log_starts(c, "cut.a") == [90, 90] and log_starts(c, "cut.b") == [90, 90] and "drop.me" not in c.topic_names()
