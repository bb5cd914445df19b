"""Deletions guarded by idleness (docs/idle-topics.md) on the test cluster, through the CLI: a
topic idle for the guard's duration is deleted and the plan converges; one written to, or whose
group committed, between the plan and the apply is kept and apply names what saved it; a topic
whose idleness cannot be shown (recent records, live members, an old broker) is never planned."""

from __future__ import annotations

import time

from reconciler.testing import TestCluster
from tests.apply.test_apply_live import Repo, outcome

DAY = 86_400_000
GUARDED = """\
kind: Topic
name: old.stuff
state: absent
delete_only_if_idle_for: 30d
"""


def _now() -> int:
    return int(time.time() * 1000)


def _seed_idle(c, name: str = "old.stuff", replication_factor: int = 3) -> None:
    c.create_topic(name, partitions=2, replication_factor=replication_factor)
    for p in range(2):
        c.produce(name, p, [_now() - 90 * DAY + i for i in range(10)])


def _held(plan: dict) -> list[str]:
    return [d["message"] for d in plan["diagnostics"] if d["code"] == "not-shown-idle"]


def test_a_truly_idle_topic_is_deleted_and_the_plan_converges(tmp_path, test_cluster):
    c = test_cluster
    _seed_idle(c)
    c.commit_offsets("old-readers", {("old.stuff", 0): 10})  # an Empty group: it read long ago
    repo = Repo(tmp_path, c, GUARDED)
    code, plan, output = repo.plan()
    assert code == 2, output  # changes to apply
    [action] = plan["actions"]
    assert action["kind"] == "delete_topic"
    idle = action["preconditions"]["idle"]
    assert idle["idle_for_ms"] == 30 * DAY
    assert [g["group"] for g in idle["evidence"]["groups"]] == ["old-readers"]
    assert idle["evidence"]["groups"][0]["state"] == "Empty" and idle["evidence"]["unknown"] == []
    assert [p["high_watermark"] for p in idle["evidence"]["partitions"]] == [10, 10]
    assert "has been idle for at least 30d" in action["reason"], action["reason"]
    markdown = repo.run("plan", str(repo.dir / "manifests"), "--cluster", "lab", "--format", "markdown").output
    assert "delete topic, 20 records; only if still idle: it has been idle for at least 30d (newest record stamped" in markdown
    assert "committed on by old-readers, none with live members" in markdown
    code, result = repo.apply()
    assert code == 0 and outcome(result, "delete_topic", "old.stuff")["status"] == "applied"
    assert "old.stuff" not in c.topic_names()
    code, plan, _ = repo.plan()
    assert code == 0 and plan["actions"] == [] and _held(plan) == []


def test_a_record_produced_after_the_plan_saves_the_topic_and_apply_names_it(tmp_path, test_cluster):
    c = test_cluster
    _seed_idle(c)
    repo = Repo(tmp_path, c, GUARDED)
    code, plan, _ = repo.plan()
    assert code == 2 and [a["kind"] for a in plan["actions"]] == ["delete_topic"]
    stamp = _now() - 2 * DAY
    c.produce("old.stuff", 1, [stamp])  # a producer came back after the review
    code, result = repo.apply()
    assert code != 0
    refused = outcome(result, "delete_topic", "old.stuff")
    assert refused["status"] != "applied"
    shown = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(stamp // 1000))
    assert f"a record was produced on partition 1 stamped {shown} (offset 10)" in refused["message"], refused["message"]
    assert "old.stuff" in c.topic_names()


def test_a_record_with_an_old_timestamp_still_moves_the_high_watermark(tmp_path, test_cluster):
    c = test_cluster
    _seed_idle(c)
    repo = Repo(tmp_path, c, GUARDED)
    assert repo.plan()[0] == 2
    c.produce("old.stuff", 0, [_now() - 200 * DAY])  # a replay stamped long ago
    code, result = repo.apply()
    message = outcome(result, "delete_topic", "old.stuff")["message"]
    assert code != 0 and "high watermark 10 -> 11" in message, message
    assert "old.stuff" in c.topic_names()


def test_a_group_commit_after_the_plan_saves_the_topic(tmp_path, test_cluster):
    c = test_cluster
    _seed_idle(c)
    repo = Repo(tmp_path, c, GUARDED)
    assert repo.plan()[0] == 2
    c.commit_offsets("late-reader", {("old.stuff", 0): 7})
    code, result = repo.apply()
    message = outcome(result, "delete_topic", "old.stuff")["message"]
    assert code != 0 and "group late-reader committed offsets on partition(s) 0 at offset 7 since the plan" in message, message
    assert "old.stuff" in c.topic_names()


def test_a_topic_not_shown_idle_is_never_planned(tmp_path, test_cluster):
    c = test_cluster
    _seed_idle(c)
    _seed_idle(c, "recent.stuff")
    c.produce("recent.stuff", 0, [_now() - 3 * DAY])
    _seed_idle(c, "read.stuff")
    c.commit_offsets("live-readers", {("read.stuff", 1): 10})
    c.join_group("live-readers", "m-1", {"read.stuff": [0, 1]})
    topics = GUARDED.replace("old.stuff", "recent.stuff") + "---\n" + GUARDED.replace("old.stuff", "read.stuff")
    repo = Repo(tmp_path, c, topics)
    code, plan, output = repo.plan()
    assert code == 0 and plan["actions"] == [], output
    read, recent = sorted(_held(plan))
    assert recent.startswith("recent.stuff is not deleted: it must have been idle for 30d")
    assert "partition 0 holds a record stamped" in recent and "(offset 10)" in recent
    assert "group live-readers has live members (state Stable)" in read


def test_the_policy_guards_every_deletion(tmp_path, test_cluster):
    c = test_cluster
    _seed_idle(c)
    c.produce("old.stuff", 0, [_now() - 10 * DAY])
    policy = "kind: Policy\ndeletions_require_idle_for: 7d\n---\n"
    unguarded = "kind: Topic\nname: old.stuff\nstate: absent\n"
    repo = Repo(tmp_path, c, policy + unguarded)
    code, plan, _ = repo.plan()
    assert code == 2 and plan["actions"][0]["preconditions"]["idle"]["idle_for_ms"] == 7 * DAY
    # The longer of the topic's guard and the policy's requirement holds.
    (tmp_path / "manifests" / "topics.yaml").write_text(policy + GUARDED)
    code, plan, _ = repo.plan()
    assert code == 0 and plan["actions"] == [] and "idle for 30d" in _held(plan)[0]


def test_a_broker_without_max_timestamp_leaves_idleness_unknown(tmp_path):
    with TestCluster(brokers=3, max_versions={2: 6}) as c:
        _seed_idle(c)
        repo = Repo(tmp_path, c, GUARDED)
        code, plan, _ = repo.plan()
        assert code == 0 and plan["actions"] == []
        [held] = _held(plan)
        assert "speaks ListOffsets up to v6; the largest record timestamp (MAX_TIMESTAMP) needs v7, Kafka 3.0" in held


def test_a_group_the_principal_may_not_describe_leaves_idleness_unknown(tmp_path):
    from reconciler.testing import Acl

    acls = [
        Acl("reconciler", "topic", "*", "ALL"),
        Acl("reconciler", "cluster", "kafka-cluster", "DESCRIBE"),
        Acl("reconciler", "group", "visible", "DESCRIBE"),
    ]
    with TestCluster(brokers=1, sasl_users={"reconciler": "pw", "admin": "pw"}, super_users={"admin"}, acls=acls) as c:
        _seed_idle(c, replication_factor=1)
        c.commit_offsets("secret-readers", {("old.stuff", 0): 3})
        manifests = tmp_path / "manifests"
        manifests.mkdir()
        (manifests / "cluster.yaml").write_text(
            "kind: Cluster\nname: lab\nbootstrap_servers: [127.0.0.1:9]\ndefaults: {partitions: 2, replication_factor: 1}\n"
            'security: {protocol: SASL_PLAINTEXT, sasl_mechanism: PLAIN, username: reconciler, password: "${PW}"}\n'
        )
        (manifests / "topics.yaml").write_text(GUARDED)
        from click.testing import CliRunner

        from reconciler.cli import main

        result = CliRunner(env={"PW": "pw"}).invoke(
            main, ["plan", str(manifests), "--cluster", "lab", "--bootstrap-servers", c.bootstrap_servers, "--format", "json"]
        )
        assert "Traceback" not in result.output, result.output
        assert "the committed offsets of group secret-readers may not be read" in result.output, result.output
        assert "kafka-acls --add --allow-principal User:reconciler --operation Describe --group secret-readers" in result.output
        assert '"actions": []' in result.output


def test_a_broker_without_batched_offset_fetch_leaves_idleness_unknown(tmp_path):
    with TestCluster(brokers=3, max_versions={9: 7}) as c:
        _seed_idle(c)
        repo = Repo(tmp_path, c, GUARDED)
        code, plan, _ = repo.plan()
        assert code == 0 and plan["actions"] == []
        [held] = _held(plan)
        assert "answer OffsetFetch only one group at a time (before v8, Kafka 3.0)" in held, held
