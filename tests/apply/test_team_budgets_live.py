"""Team budgets on the test cluster, over real sockets through the CLI (docs/teams.md): a team
over its partition or disk budget is a plan error, its saved plan is refused, and so is one whose
error was edited out or whose cluster grew past the budget since the plan (apply checks again);
from 90% of a budget it is a warning and the plan applies."""

from __future__ import annotations

import json
import time

from reconciler.testing import TestCluster
from tests.apply.test_apply_live import Repo, seed
from tests.apply.test_capacity_helpers import GIB, used

TEAM = """\
kind: Team
name: payments
review: '@acme/payments'
topics: {{prefixes: [pay.]}}
budget: {{{budget}}}
---
"""
PARTITION_TOPICS = "kind: Topic\nname: pay.a\n---\nkind: Topic\nname: pay.b\n---\nkind: Topic\nname: other.c\n"


def _apply_saved(repo: Repo):
    return repo.run("apply", str(repo.dir / "plan.json"), "--manifests", str(repo.dir / "manifests"))


def _edited_out(repo: Repo, plan: dict, code: str) -> None:
    """The saved plan with the budget error taken out (its manifests, so its digest, unchanged)."""
    plan["diagnostics"] = [d for d in plan["diagnostics"] if d["code"] != code]
    (repo.dir / "plan.json").write_text(json.dumps(plan))


def test_a_team_over_its_partition_budget_is_refused_in_plan_and_apply(tmp_path, test_cluster):
    c = test_cluster
    seed(c, "pay.a")  # 2 partitions x 3 replicas
    repo = Repo(tmp_path, c, TEAM.format(budget="max_partitions: 10") + PARTITION_TOPICS)
    code, plan, output = repo.plan()
    assert code == 1, output
    [error] = [d for d in plan["diagnostics"] if d["code"] == "team-max-partitions"]
    assert error["severity"] == "error"
    assert error["source"] == {"file": "topics.yaml", "line": 5, "column": 26}  # at the budget's max_partitions
    assert error["message"] == (
        "team payments would have 12 partition replicas (partitions x replication factor) on cluster lab after this "
        "plan, above its budget max_partitions 10 (120%); most from pay.a 6, pay.b 6; remove or shrink some of its "
        "topics, or raise the budget in a reviewed change of the Team document"
    )  # other.c has no owner: not counted
    assert "error[team-max-partitions] team payments would have 12 partition replicas" in output

    result = _apply_saved(repo)
    assert result.exit_code == 1 and "has 1 error(s) and cannot be applied" in result.output
    _edited_out(repo, plan, "team-max-partitions")
    result = _apply_saved(repo)
    assert result.exit_code == 1
    assert (
        "Error: the plan for lab cannot be applied under the teams' budgets now: team payments would have 12 partition "
        "replicas" in result.output
    ), result.output
    assert result.output.rstrip().endswith("Nothing was changed.")
    assert "pay.b" not in c.topic_names() and "other.c" not in c.topic_names()

    # From 90% of the budget: a warning, and the plan applies.
    (repo.dir / "manifests" / "topics.yaml").write_text(TEAM.format(budget="max_partitions: 13") + PARTITION_TOPICS)
    code, plan, output = repo.plan()
    assert code == 2, output
    [warning] = [d for d in plan["diagnostics"] if d["code"] == "team-max-partitions"]
    assert warning["severity"] == "warning" and "close to its budget max_partitions 13 (92%)" in warning["message"]
    assert repo.apply()[0] == 0
    assert {"pay.b", "other.c"} <= set(c.topic_names())


def test_a_team_over_its_disk_budget_is_refused_in_plan_and_when_its_topics_grew_since(tmp_path):
    with TestCluster(brokers=3, log_dir_bytes=GIB) as c:
        c.create_topic("pay.a", partitions=2, replication_factor=3)
        now = int(time.time() * 1000)
        c.produce_many({("pay.a", p): 50 for p in range(2)}, timestamp_ms=now - 3_600_000, step_ms=1000, value_size=1000)
        held = sum(used(c).values())  # pay.a on every replica: the only topic
        assert held == 2 * 50 * 1000 * 3
        # pay.b: 30,000 bytes a day kept one day, on 3 replicas
        new = "kind: Topic\nname: pay.a\n---\nkind: Topic\nname: pay.b\npartitions: 1\n"
        new += "expected_bytes_per_day: 30000\nconfigs: {retention.ms: 1d}\n"
        repo = Repo(tmp_path, c, TEAM.format(budget=f"max_disk: {held + 90_000 - 1}") + new)
        code, plan, output = repo.plan()
        assert code == 1, output
        [error] = [d for d in plan["diagnostics"] if d["code"] == "team-max-disk"]
        assert error["severity"] == "error"
        assert error["message"].startswith(
            "team payments would have 380.9 KiB (390,000 bytes) on disk (all replicas) on cluster lab after this plan, "
            "above its budget max_disk 380.9 KiB (389,999 bytes) (100%); most from pay.a 293.0 KiB, pay.b 87.9 KiB;"
        ), error["message"]
        _edited_out(repo, plan, "team-max-disk")
        result = _apply_saved(repo)
        assert result.exit_code == 1 and "under the teams' budgets now: team payments" in result.output, result.output

        # Within the budget (a warning from 90%): planned; then pay.a grows past it before apply.
        (repo.dir / "manifests" / "topics.yaml").write_text(TEAM.format(budget=f"max_disk: {held + 100_000}") + new)
        code, plan, output = repo.plan()
        assert code == 2, output
        [warning] = [d for d in plan["diagnostics"] if d["code"] == "team-max-disk"]
        assert warning["severity"] == "warning"
        c.produce_many({("pay.a", 0): 10}, timestamp_ms=now, step_ms=1000, value_size=1000)  # 30,000 bytes more
        result = _apply_saved(repo)
        assert result.exit_code == 1 and "under the teams' budgets now: team payments" in result.output, result.output
        assert "pay.b" not in c.topic_names()
        # Nothing else holds it back: with room again, the same manifests apply.
        (repo.dir / "manifests" / "topics.yaml").write_text(TEAM.format(budget=f"max_disk: {held + 200_000}") + new)
        assert repo.plan()[0] == 2
        assert repo.apply()[0] == 0 and "pay.b" in c.topic_names()
