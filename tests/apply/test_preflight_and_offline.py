"""Found on a real Kafka 4.0 cluster, kept fixed here on the test cluster over real sockets:
- every apply path runs the brokers' validate_only preflight and writes nothing when they would
  refuse any action (an irreversible partition increase must not be stranded by a refused config);
- a broker's refusal is shown under the action that caused it, in every format;
- one offline partition does not block the rest of the plan, and is never taken for data loss.
"""

from __future__ import annotations

from tests.apply.test_apply_live import Repo, log_starts, outcome, seed

CREATE_TOPICS, CREATE_PARTITIONS, INCREMENTAL_ALTER_CONFIGS = 19, 37, 44
WRITES = {CREATE_TOPICS, CREATE_PARTITIONS, INCREMENTAL_ALTER_CONFIGS}
DOOMED = """\
kind: Topic
name: good.new
---
kind: Topic
name: bad.rf
replication_factor: 4
---
kind: Topic
name: grow.me
partitions: 4
configs: {remote.storage.enable: true}
"""


def writes_sent(cluster) -> list:
    return [r for r in cluster.request_log if r.api_key in WRITES and not r.request.validate_only]


def untouched(cluster) -> bool:
    return (
        "good.new" not in cluster.topic_names()
        and "bad.rf" not in cluster.topic_names()
        and cluster.partition_count("grow.me") == 2
        and cluster.topic_configs("grow.me") == {}
    )


def test_apply_on_merge_runs_the_brokers_preflight_and_writes_nothing(tmp_path, test_cluster):
    c = test_cluster
    seed(c, "grow.me")
    repo = Repo(tmp_path, c, DOOMED)
    c.clear_request_log()
    result = repo.run("apply", "--manifests", str(tmp_path / "manifests"), "--cluster", "lab", "--auto-approve")
    assert result.exit_code == 1, result.output
    assert not writes_sent(c) and untouched(c)
    assert "INVALID_REPLICATION_FACTOR" in result.output and "Tiered Storage" in result.output
    # Each refusal sits under its own action: the config refusal under the config change of
    # grow.me, not under grow.me's (valid) partition increase printed just before it.
    blocks = result.output.split("\n\n")
    [grow] = [b for b in blocks if "add partitions to grow.me" in b]
    [alter] = [b for b in blocks if "alter configs of grow.me" in b]
    assert "error[" not in grow and "broker-invalid-config" in alter
    assert "0 errors" not in result.output and "3 errors" not in result.output


def test_a_saved_plan_made_offline_is_refused_whole_by_the_preflight_at_apply(tmp_path, test_cluster):
    c = test_cluster
    seed(c, "grow.me")
    repo = Repo(tmp_path, c, DOOMED)
    assert repo.plan("--offline")[0] == 2  # not validated when planning: the plan holds doomed actions
    c.clear_request_log()
    code, result = repo.apply()
    assert code == 1
    assert not writes_sent(c) and untouched(c)
    assert "INVALID_REPLICATION_FACTOR" in outcome(result, "create_topic", "bad.rf")["message"]
    assert "Tiered Storage" in outcome(result, "alter_configs", "grow.me")["message"]
    for kind, topic in (("create_topic", "good.new"), ("add_partitions", "grow.me")):
        found = outcome(result, kind, topic)
        assert found["status"] == "refused" and "nothing was changed" in found["message"], found


def test_the_refusal_names_its_action_and_key_in_every_format(tmp_path, test_cluster):
    c = test_cluster
    seed(c, "grow.me")
    repo = Repo(tmp_path, c, "kind: Topic\nname: grow.me\npartitions: 4\nconfigs: {remote.storage.enable: true}\n")
    code, plan, _ = repo.plan()
    assert code == 1
    [refusal] = [d for d in plan["diagnostics"] if d["code"].startswith("broker-")]
    assert refusal["action"] == "alter_configs" and refusal["topic"] == "grow.me"
    assert "change the configs of grow.me" in refusal["message"]
    markdown = repo.run("plan", str(tmp_path / "manifests"), "--cluster", "lab", "--format", "markdown").output
    [line] = [x for x in markdown.splitlines() if "broker-invalid-config" in x]
    assert "change the configs of grow.me" in line and "add partitions" not in line


def _offline_setup(tmp_path, c):
    """events: 2 partitions with one replica each, on different brokers; other (3 replicas): a config to set."""
    c.create_topic("events", partitions=2, replication_factor=1)
    c.produce_many({("events", p): 100 for p in range(2)})
    c.create_topic("other", partitions=1, replication_factor=3)
    leaders = [c.partition("events", p).leader for p in range(2)]
    assert leaders[0] != leaders[1]
    repo = Repo(
        tmp_path,
        c,
        "kind: Topic\nname: events\npartitions: 2\nreplication_factor: 1\n"
        "truncate: [{before_offset: 60}]\n---\n"
        "kind: Topic\nname: other\npartitions: 1\n"
        "configs: {retention.ms: 1d}\n",
    )
    return repo, leaders[1]


def test_an_offline_partition_waits_and_everything_else_is_planned_and_applied(tmp_path, test_cluster):
    c = test_cluster
    repo, down = _offline_setup(tmp_path, c)
    c.stop_broker(down)
    code, plan, output = repo.plan()
    assert code == 2, output  # changes, not an error
    assert "beyond the high watermark" not in output and "Lower the offset" not in output
    [waiting] = [d for d in plan["diagnostics"] if d["code"] == "partition-offline"]
    assert waiting["severity"] == "warning" and waiting["partition"] == 1 and "events-1" in waiting["message"]
    [truncate] = [a for a in plan["actions"] if a["kind"] == "truncate"]
    assert [p["partition"] for p in truncate["partitions"]] == [0]
    assert any(a["kind"] == "alter_configs" and a["topic"] == "other" for a in plan["actions"])

    code, result = repo.apply()
    assert code == 0, result
    assert log_starts(c, "events", 1) == [60] and c.topic_configs("other") == {"retention.ms": "86400000"}
    assert result["converged"] is False  # events-1 still waits

    c.start_broker(down)
    code, plan, output = repo.plan()
    assert code == 2, output
    [truncate] = [a for a in plan["actions"] if a["kind"] == "truncate"]
    assert [(p["partition"], p["target_offset"]) for p in truncate["partitions"]] == [(1, 60)]
    code, result = repo.apply()
    assert code == 0 and result["converged"] is True, result
    assert log_starts(c, "events") == [60, 60]


def test_a_saved_plan_refuses_an_offline_partition_without_calling_it_truncation(tmp_path, test_cluster):
    c = test_cluster
    repo, down = _offline_setup(tmp_path, c)
    assert repo.plan()[0] == 2
    c.stop_broker(down)
    code, result = repo.apply()
    assert code == 1
    truncation = outcome(result, "truncate", "events")
    by_partition = {p["partition"]: p for p in truncation["partitions"]}
    assert by_partition[0]["status"] == "applied"
    refused = by_partition[1]
    assert refused["status"] == "refused"
    assert "no leader (offline)" in refused["message"] and "nothing was deleted" in refused["message"]
    assert "truncated since the plan" not in refused["message"] and "-1" not in refused["message"]
    assert outcome(result, "alter_configs", "other")["status"] == "applied"
    c.start_broker(down)
    assert c.partition("events", 1).log_start_offset == 0
