"""`reconcile plan` → `reconcile apply` → `reconcile plan` against the test cluster, over real sockets.

Each test writes manifests, seeds the cluster, saves a plan with the real CLI, optionally moves the
cluster under it (out-of-band changes, leader elections, injected broker errors), applies the
saved plan and checks both the reported outcome and what the cluster now holds.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

from click.testing import CliRunner

from reconciler.cli import main

DELETE_RECORDS, CREATE_TOPICS, INCREMENTAL_ALTER_CONFIGS, CREATE_PARTITIONS = 21, 19, 44, 37
REQUEST_TIMED_OUT = 7
NOV_1 = int(datetime(2026, 11, 1, tzinfo=timezone.utc).timestamp() * 1000)
HOUR = 3_600_000


class Repo:
    """A manifest directory for cluster `lab` on the test cluster, driven through the CLI."""

    def __init__(self, tmp_path: Path, cluster, topics_yaml: str, drain: list[int] | None = None, extra: str = ""):
        self.dir, self.cluster = tmp_path, cluster
        (tmp_path / "manifests").mkdir()
        drained = f"drain_brokers: {drain}\n" if drain else ""
        (tmp_path / "manifests" / "cluster.yaml").write_text(
            "kind: Cluster\nname: lab\nbootstrap_servers: [127.0.0.1:9]\n"
            f"defaults: {{partitions: 2, replication_factor: 3}}\n{drained}{extra}"
        )
        (tmp_path / "manifests" / "topics.yaml").write_text(topics_yaml)

    def run(self, *args: str):
        result = CliRunner().invoke(main, [*args, "--bootstrap-servers", self.cluster.bootstrap_servers])
        assert "Traceback" not in result.output, result.output
        return result

    def plan(self, *extra: str) -> tuple[int, dict, str]:
        saved = self.dir / "plan.json"
        result = self.run("plan", str(self.dir / "manifests"), "--cluster", "lab", "--format", "json", "-o", str(saved), *extra)
        return result.exit_code, json.loads(saved.read_text()) if saved.exists() else {}, result.output

    def apply(self) -> tuple[int, dict]:
        out = self.dir / "result.json"
        result = self.run(
            "apply", str(self.dir / "plan.json"), "--manifests", str(self.dir / "manifests"), "--format", "json", "-o", str(out)
        )
        assert out.exists(), result.output
        return result.exit_code, json.loads(out.read_text())


def outcome(result: dict, kind: str, topic: str) -> dict:
    [found] = [o for o in result["outcomes"] if o["kind"] == kind and o["topic"] == topic]
    return found


def seed(cluster, name: str, partitions: int = 2, records: int = 100, configs=None, start_ms: int = NOV_1 - 100 * HOUR):
    cluster.create_topic(name, partitions=partitions, replication_factor=3, configs=configs)
    cluster.produce_many({(name, p): records for p in range(partitions)}, timestamp_ms=start_ms, step_ms=HOUR)


def log_starts(cluster, name: str, partitions: int = 2) -> list[int]:
    return [cluster.partition(name, p).log_start_offset for p in range(partitions)]


def test_plan_apply_plan_converges_for_every_kind_of_change(tmp_path, test_cluster):
    c = test_cluster
    seed(c, "grow.me")
    seed(c, "conf.set", configs={"retention.ms": "604800000"})
    seed(c, "conf.drop", configs={"segment.ms": "3600000", "retention.ms": "86400000"})
    for name in ("t.offset", "t.time", "t.keep", "t.all", "t.group"):
        seed(c, name)
    c.commit_offsets("billing", {("t.group", 0): 40, ("t.group", 1): 60})
    c.commit_offsets("audit", {("t.group", 0): 50, ("t.group", 1): 30})
    repo = Repo(
        tmp_path,
        c,
        """\
kind: Topic
name: fresh.topic
partitions: 3
configs: {retention.ms: 2d, cleanup.policy: delete}
---
kind: Topic
name: grow.me
partitions: 4
---
kind: Topic
name: conf.set
configs: {retention.ms: 1d, max.message.bytes: 2MiB}
---
kind: Topic
name: conf.drop
configs: {retention.ms: 1d}
undeclared_configs: remove
---
kind: Topic
name: t.offset
truncate: [{before_offset: {0: 30, 1: 5}}]
---
kind: Topic
name: t.time
truncate: [{before_time: "2026-10-30T00:00:00Z"}]
---
kind: Topic
name: t.keep
truncate: [{keep_last: 25}]
---
kind: Topic
name: t.all
truncate: [{everything: true}]
---
kind: Topic
name: t.group
truncate: [{consumed_by: [billing, audit]}]
""",
    )
    code, plan, output = repo.plan()
    assert code == 2, output
    # conf.set's retention.ms 7d -> 1d is a retention cut; its estimate depends on today's date.
    expire = plan["summary"].pop("records_to_expire")
    assert plan["summary"] == {
        "create": 1,
        "change": 3,
        "truncate": 5,
        "delete": 0,
        "errors": 0,
        "warnings": 0,
        "records_to_delete": 30 + 5 + 2 * 52 + 2 * 75 + 2 * 100 + 40 + 30,
        "retention_cuts": 1,
    }
    assert 0 <= expire <= 200

    code, result = repo.apply()
    assert code == 0, result
    assert {o["status"] for o in result["outcomes"]} == {"applied"} and result["converged"] is True

    assert c.partition("fresh.topic", 2).replicas and len(c.topic_configs("fresh.topic")) == 2
    assert c.partition("grow.me", 3).high_watermark == 0
    assert c.topic_configs("conf.set") == {"retention.ms": "86400000", "max.message.bytes": "2097152"}
    assert c.topic_configs("conf.drop") == {"retention.ms": "86400000"}
    assert log_starts(c, "t.offset") == [30, 5]
    assert log_starts(c, "t.time") == [52, 52]  # first record at or after 2026-10-30T00:00Z
    assert log_starts(c, "t.keep") == [75, 75]
    assert log_starts(c, "t.all") == [100, 100]
    assert log_starts(c, "t.group") == [40, 30]

    code, _, output = repo.plan()
    assert code == 0 and "No changes: the cluster matches the manifests." in output


def test_validation_on_the_brokers_changes_nothing_and_reports_refusals(tmp_path, test_cluster):
    c = test_cluster
    seed(c, "grow.me")
    repo = Repo(
        tmp_path,
        c,
        """\
kind: Topic
name: new.ok
---
kind: Topic
name: new.too-many-replicas
replication_factor: 5
---
kind: Topic
name: grow.me
partitions: 3
configs: {retention.ms: 1d}
""",
    )
    before = (c.topic_names(), c.topic_configs("grow.me"), c.partition("grow.me", 1))
    c.clear_request_log()
    code, plan, output = repo.plan()
    assert code == 1, output
    [error] = [d for d in plan["diagnostics"] if d["severity"] == "error"]
    assert error["topic"] == "new.too-many-replicas" and error["code"] == "broker-invalid-replication-factor"
    assert "error[broker-invalid-replication-factor]" in output
    sent = {
        r.api_key: r.request for r in c.request_log if r.api_key in (CREATE_TOPICS, CREATE_PARTITIONS, INCREMENTAL_ALTER_CONFIGS)
    }
    assert set(sent) == {CREATE_TOPICS, CREATE_PARTITIONS, INCREMENTAL_ALTER_CONFIGS}
    assert all(request.validate_only for request in sent.values())
    assert (c.topic_names(), c.topic_configs("grow.me"), c.partition("grow.me", 1)) == before
    assert not any(t.startswith("new.") for t in c.topic_names())


def test_stale_actions_are_refused_and_the_rest_applies(tmp_path, test_cluster):
    c = test_cluster
    for name in ("recreated", "grown", "reconfigured", "untouched"):
        seed(c, name, configs={"retention.ms": "604800000"})
    repo = Repo(
        tmp_path,
        c,
        """\
kind: Topic
name: recreated
truncate: [{keep_last: 10}]
---
kind: Topic
name: grown
partitions: 3
---
kind: Topic
name: reconfigured
configs: {retention.ms: 1d}
---
kind: Topic
name: untouched
configs: {retention.ms: 2d}
""",
    )
    assert repo.plan()[0] == 2
    c.delete_topic("recreated")
    seed(c, "recreated", records=100)  # same name, new topic id: its records are not the planned ones
    c.create_topic("unrelated")
    c.add_partitions("grown", 3)
    c.set_topic_configs("reconfigured", {"retention.ms": "3600000"})

    code, result = repo.apply()
    assert code == 1
    assert "topic id" in outcome(result, "truncate", "recreated")["message"]
    assert outcome(result, "truncate", "recreated")["status"] == "refused"
    # The cluster already has the planned partition count: nothing to write, whoever made it so.
    assert outcome(result, "add_partitions", "grown")["status"] == "already_satisfied"
    assert outcome(result, "add_partitions", "grown")["message"].startswith("the topic has 3 partitions already")
    assert outcome(result, "alter_configs", "reconfigured")["status"] == "refused"
    assert "retention.ms" in outcome(result, "alter_configs", "reconfigured")["message"]
    assert outcome(result, "alter_configs", "untouched")["status"] == "applied"
    assert log_starts(c, "recreated") == [0, 0]
    assert c.topic_configs("reconfigured") == {"retention.ms": "3600000"}
    assert c.topic_configs("untouched") == {"retention.ms": str(2 * 86_400_000)}


def test_unclean_election_after_the_plan_refuses_that_partition_only(tmp_path, test_cluster):
    c = test_cluster
    seed(c, "events", records=100)
    repo = Repo(tmp_path, c, "kind: Topic\nname: events\ntruncate: [{keep_last: 20}]\n")
    assert repo.plan()[0] == 2  # targets 80 in both partitions, at the epochs seen now
    c.unclean_election("events", 0, truncate_to=50)
    c.produce_many({("events", 0): 60})  # the high watermark is past the target again: only the epoch tells

    code, result = repo.apply()
    assert code == 1
    truncation = outcome(result, "truncate", "events")
    by_partition = {p["partition"]: p for p in truncation["partitions"]}
    assert by_partition[0]["status"] == "refused" and "diverged" in by_partition[0]["message"]
    assert by_partition[1]["status"] == "applied" and by_partition[1]["low_watermark"] == 80
    assert log_starts(c, "events") == [0, 80]  # every record of partition 0 is still there


def test_clean_leader_change_after_the_plan_still_truncates_through_the_new_leader(tmp_path, test_cluster):
    c = test_cluster
    seed(c, "events", records=100)
    repo = Repo(tmp_path, c, "kind: Topic\nname: events\ntruncate: [{keep_last: 20}]\n")
    assert repo.plan()[0] == 2
    old = c.partition("events", 0)
    new_leader = next(r for r in old.replicas if r != old.leader)
    c.move_leader("events", 0, to=new_leader)
    c.produce_many({("events", 0): 10})  # producers carry on: not a reason to refuse
    c.clear_request_log()

    code, result = repo.apply()
    assert code == 0, result
    assert log_starts(c, "events") == [80, 80]
    deletes = [r for r in c.request_log if r.api_key == DELETE_RECORDS]
    assert any(
        r.broker_id == new_leader
        and any(t.name == "events" and any(p.partition_index == 0 for p in t.partitions) for t in r.request.topics)
        for r in deletes
    )


def test_delete_records_timing_out_once(tmp_path, test_cluster):
    c = test_cluster
    seed(c, "applied.anyway", partitions=1)
    seed(c, "lost.request", partitions=1)
    repo = Repo(
        tmp_path,
        c,
        "kind: Topic\nname: applied.anyway\npartitions: 1\ntruncate: [{keep_last: 10}]\n"
        "---\nkind: Topic\nname: lost.request\npartitions: 1\ntruncate: [{keep_last: 10}]\n",
    )
    assert repo.plan()[0] == 2
    # The broker deleted but the answer said REQUEST_TIMED_OUT; then a request that timed out without effect.
    c.inject_error(DELETE_RECORDS, REQUEST_TIMED_OUT, times=1, apply=True, broker=c.partition("applied.anyway", 0).leader)
    c.inject_error(DELETE_RECORDS, REQUEST_TIMED_OUT, times=1, apply=False, broker=c.partition("lost.request", 0).leader)

    code, result = repo.apply()
    assert code == 0, result
    assert c.partition("applied.anyway", 0).log_start_offset == 90
    assert c.partition("lost.request", 0).log_start_offset == 90
    assert result["converged"] is True


def test_a_time_rule_with_no_record_after_the_time_never_sends_minus_one(tmp_path, test_cluster):
    c = test_cluster
    seed(c, "old.events", records=50, start_ms=NOV_1 - 200 * HOUR)  # every record is before the rule's time
    repo = Repo(tmp_path, c, "kind: Topic\nname: old.events\ntruncate: [{before_time: '2026-11-01T00:00:00Z'}]\n")
    code, plan, _ = repo.plan()
    assert code == 2
    [truncate] = plan["actions"]
    assert [p["target_offset"] for p in truncate["partitions"]] == [50, 50]
    c.clear_request_log()
    assert repo.apply()[0] == 0
    sent = [p.offset for r in c.request_log if r.api_key == DELETE_RECORDS for t in r.request.topics for p in t.partitions]
    assert sorted(sent) == [50, 50]
    assert log_starts(c, "old.events") == [50, 50]


def test_without_a_terminal_apply_needs_auto_approve(tmp_path, test_cluster):
    c = test_cluster
    repo = Repo(tmp_path, c, "kind: Topic\nname: new.one\n")
    manifests = str(tmp_path / "manifests")
    refused = repo.run("apply", "--manifests", manifests, "--cluster", "lab")
    assert refused.exit_code == 1 and "pass --auto-approve" in refused.output
    assert "new.one" not in c.topic_names()
    approved = repo.run("apply", "--manifests", manifests, "--cluster", "lab", "--auto-approve")
    assert approved.exit_code == 0, approved.output
    assert "+ create topic new.one" in approved.output and "Converged: planning again shows no changes." in approved.output
    assert "new.one" in c.topic_names()


def test_retriable_broker_errors_are_retried(tmp_path, test_cluster):
    NOT_CONTROLLER, THROTTLING_QUOTA_EXCEEDED, NOT_LEADER_OR_FOLLOWER = 41, 89, 6
    c = test_cluster
    seed(c, "events", partitions=1)
    repo = Repo(
        tmp_path,
        c,
        "kind: Topic\nname: new.one\n---\nkind: Topic\nname: events\npartitions: 1\n"
        "configs: {retention.ms: 1d}\ntruncate: [{keep_last: 10}]\n",
    )
    assert repo.plan()[0] == 2
    # On the writes themselves: the preflight (validate_only) before them goes through.
    c.inject_error(CREATE_TOPICS, NOT_CONTROLLER, times=1, validate_only=False)
    c.inject_error(INCREMENTAL_ALTER_CONFIGS, THROTTLING_QUOTA_EXCEEDED, times=1, throttle_time_ms=200, validate_only=False)
    c.inject_error(DELETE_RECORDS, NOT_LEADER_OR_FOLLOWER, times=1)
    c.clear_request_log()
    code, result = repo.apply()
    assert code == 0, result
    sent = [r.api_key for r in c.request_log if not getattr(r.request, "validate_only", False)]
    assert [sent.count(k) for k in (CREATE_TOPICS, INCREMENTAL_ALTER_CONFIGS, DELETE_RECORDS)] == [2, 2, 2]
    assert "new.one" in c.topic_names() and c.topic_configs("events") == {"retention.ms": "86400000"}
    assert c.partition("events", 0).log_start_offset == 90


def test_a_saved_plan_with_errors_is_not_applied(tmp_path, test_cluster):
    c = test_cluster
    seed(c, "events", partitions=2)
    repo = Repo(tmp_path, c, "kind: Topic\nname: events\npartitions: 1\n---\nkind: Topic\nname: new.one\n")
    assert repo.plan()[0] == 1
    result = repo.run("apply", str(tmp_path / "plan.json"), "--manifests", str(tmp_path / "manifests"))
    assert result.exit_code == 1 and "cannot be applied" in result.output
    assert "new.one" not in c.topic_names()
