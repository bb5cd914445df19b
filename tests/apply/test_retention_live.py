"""Retention-aware plans against the test cluster, over real sockets and through the CLI: a retention
cut is planned as destructive with an estimate read from the cluster (ListOffsets by time,
DescribeLogDirs sizes), applied, and refused by the policy's max_delete_fraction when too large,
at plan time and again at apply time."""

from __future__ import annotations

import time

from tests.apply.test_apply_live import HOUR, Repo, outcome

DAY = 24 * HOUR
TOPIC = """\
kind: Topic
name: events
configs: {retention.ms: 1d}
"""
POLICY = "kind: Policy\nmax_delete_fraction: {limit}\n---\n"


def seed_hourly(cluster, name: str = "events") -> None:
    """2 partitions of 100 records, one an hour, the newest an hour old; retention.ms 30d on the topic."""
    cluster.create_topic(name, partitions=2, replication_factor=3, configs={"retention.ms": str(30 * DAY)})
    now_ms = int(time.time() * 1000)
    cluster.produce_many({(name, p): 100 for p in range(2)}, timestamp_ms=now_ms - 100 * HOUR, step_ms=HOUR)


def test_a_retention_cut_is_planned_destructive_with_its_estimate_and_applied(tmp_path, test_cluster):
    seed_hourly(test_cluster)
    repo = Repo(tmp_path, test_cluster, TOPIC)
    code, plan, output = repo.plan()
    assert code == 2, output
    [action] = plan["actions"]
    assert action["kind"] == "alter_configs" and action["destructive"] is True
    cut = action["retention"]
    assert cut["retention_ms"] == DAY and cut["effects"] == ["records older than 1d are deleted: retention.ms 30d -> 1d"]
    for p in cut["partitions"]:
        # Records 0..75 are older than a day (the 77th is a day old, give or take the time the plan took).
        assert p["log_start_offset"] == 0 and p["high_watermark"] == 100 and p["keep_from_offset"] in (76, 77)
        assert p["bytes_to_delete"] > 0  # sizes read from DescribeLogDirs although --sizes was not asked
    assert plan["summary"]["retention_cuts"] == 1 and plan["summary"]["records_to_expire"] in range(152, 155)

    text = repo.run("plan", str(repo.dir / "manifests"), "--cluster", "lab").output
    assert "alter configs of events: deletes up to" in text and "DESTRUCTIVE" in text
    assert "records are an upper bound, as the brokers delete whole segments only" in text

    code, result = repo.apply()
    assert code == 0, result
    assert outcome(result, "alter_configs", "events")["status"] == "applied"
    assert test_cluster.topic_configs("events") == {"retention.ms": str(DAY)}


def test_the_policy_refuses_an_over_large_cut_when_planning(tmp_path, test_cluster):
    seed_hourly(test_cluster)
    repo = Repo(tmp_path, test_cluster, POLICY.format(limit=0.5) + TOPIC)
    code, plan, output = repo.plan()
    assert code == 1, output
    errors = [d for d in plan["diagnostics"] if d["severity"] == "error"]
    assert [(d["code"], d["partition"], d["action"]) for d in errors] == [
        ("policy-max-delete-fraction", 0, "alter_configs"),
        ("policy-max-delete-fraction", 1, "alter_configs"),
    ]
    assert "events-0: deleting up to 7" in errors[0]["message"] and "exceeds the policy limit of 50%" in errors[0]["message"]
    assert test_cluster.topic_configs("events") == {"retention.ms": str(30 * DAY)}


def test_apply_estimates_again_and_refuses_a_cut_the_cluster_grew_past_the_policy(tmp_path, test_cluster):
    seed_hourly(test_cluster)
    size = test_cluster.partition("events", 0).size_bytes
    # A size limit keeping a fifth of each partition: about 80% of its records go, within the policy's 90%.
    topic = TOPIC.replace("retention.ms: 1d", f"retention.bytes: {size // 5}")
    repo = Repo(tmp_path, test_cluster, POLICY.format(limit=0.9) + topic)
    code, plan, output = repo.plan()
    assert code == 2 and plan["actions"][0]["destructive"], output
    # Producers write on after the plan (the manifests are unchanged, so the saved plan is still the
    # reviewed one): the same limit now deletes a larger share, which the estimate made again at apply finds.
    test_cluster.produce_many({("events", p): 200 for p in range(2)}, timestamp_ms=int(time.time() * 1000), step_ms=1)
    code, result = repo.apply()
    assert code == 1, result
    refused = outcome(result, "alter_configs", "events")
    assert refused["status"] == "refused"
    assert refused["message"].startswith(
        "the retention change would now delete more than the policy allows: events-0: deleting up to "
    )
    assert (
        "exceeds the policy limit of 90% per apply (estimated again from the cluster now; the plan estimated up to "
        in refused["message"]
    )
    assert test_cluster.topic_configs("events") == {"retention.ms": str(30 * DAY)}
