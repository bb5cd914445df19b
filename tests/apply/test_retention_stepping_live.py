"""Gradual retention stepping against the test cluster, over real sockets and through the CLI: each
plan lowers retention.ms one step allowed by the policy's max_retention_decrease, estimated at that
step (its time lookup read from the cluster), and repeated plan + apply converge in exactly the
number of applies the first plan announced."""

from __future__ import annotations

import time

from reconciler.models.result import ApplyResult
from reconciler.render.apply_result import result_text
from tests.apply.test_apply_live import HOUR, Repo, outcome

DAY = 24 * HOUR
MANIFESTS = """\
kind: Policy
max_delete_fraction: 0.9
max_retention_decrease: 0.5
---
kind: Topic
name: events
retention_stepping: {stepping}
configs: {{retention.ms: 1d}}
"""


def seed(cluster) -> None:
    """2 partitions of 100 records, one an hour, the newest an hour old; retention.ms 8d on the topic."""
    cluster.create_topic("events", partitions=2, replication_factor=3, configs={"retention.ms": str(8 * DAY)})
    now_ms = int(time.time() * 1000)
    cluster.produce_many({("events", p): 100 for p in range(2)}, timestamp_ms=now_ms - 100 * HOUR, step_ms=HOUR)


def test_stepping_converges_in_the_announced_number_of_applies(tmp_path, test_cluster):
    seed(test_cluster)
    repo = Repo(tmp_path, test_cluster, MANIFESTS.format(stepping="gradual"))
    announced, values = None, []
    while True:
        code, plan, output = repo.plan()
        if code == 0:
            break
        assert code == 2 and not plan["diagnostics"], output
        [action] = plan["actions"]
        cut = action["retention"]
        steps = cut.get("steps", [])
        if announced is None:
            assert [s["remaining"] for s in steps] == [2]  # 8d -> 4d now, then 2d and 1d
            announced = steps[0]["remaining"] + 1
        # The estimate is the step's, read from the cluster at now - the step (no unknown partitions).
        assert cut["retention_ms"] == int(action["changes"][0]["after"])
        assert all(p["keep_from_offset"] is not None for p in cut["partitions"])
        code, result = repo.apply()
        assert code == 0, result
        assert outcome(result, "alter_configs", "events")["status"] == "applied"
        values.append(int(test_cluster.topic_configs("events")["retention.ms"]))
        text = result_text(ApplyResult.model_validate({k: v for k, v in result.items() if k not in ("succeeded", "converged")}))
        if values[-1] == DAY:
            assert result["converged"] is True and "Converged" in text
        else:  # named as the plan names it; the last step (2d -> 1d) is within the limit, a plain change
            left = {4 * DAY: "2 more applies", 2 * DAY: "1 more apply"}[values[-1]]
            assert result["converged"] is False, result
            assert f"Not converged: stepping: {left} to reach the declared retention, one allowed step per apply" in text
    assert values == [4 * DAY, 2 * DAY, DAY] and len(values) == announced == 3


def test_a_cut_beyond_the_limit_is_refused_without_stepping(tmp_path, test_cluster):
    seed(test_cluster)
    repo = Repo(tmp_path, test_cluster, MANIFESTS.format(stepping="refuse"))
    code, plan, output = repo.plan()
    assert code == 1, output
    [error] = [d for d in plan["diagnostics"] if d["severity"] == "error"]
    assert error["code"] == "policy-max-retention-decrease"
    assert "events: retention.ms 8d (691200000) -> 1d (86400000) lowers retention by 88%" in error["message"]
    assert "the largest allowed step is to 4d (345600000)" in error["message"]
    assert test_cluster.topic_configs("events") == {"retention.ms": str(8 * DAY)}


def test_a_saved_step_applied_after_the_value_moved_is_refused(tmp_path, test_cluster):
    seed(test_cluster)
    repo = Repo(tmp_path, test_cluster, MANIFESTS.format(stepping="gradual"))
    code, _, output = repo.plan()
    assert code == 2, output
    test_cluster.set_topic_configs("events", {"retention.ms": str(6 * DAY)})  # moved, not to the step's value
    code, result = repo.apply()
    assert code == 1, result
    refused = outcome(result, "alter_configs", "events")
    assert refused["status"] == "refused" and refused["message"].startswith("the cluster moved since the plan")
    assert "the step retention.ms 8d (691200000) -> 4d (345600000) was planned from 691200000" in refused["message"]
    assert test_cluster.topic_configs("events") == {"retention.ms": str(6 * DAY)}
    # At the step's value (this plan applied already, say), there is nothing to write.
    test_cluster.set_topic_configs("events", {"retention.ms": str(4 * DAY)})
    code, result = repo.apply()
    done = outcome(result, "alter_configs", "events")
    assert code == 0 and done["status"] == "already_satisfied", result
    assert done["message"].startswith("every config already has the value the plan sets")
