"""`reconcile idle` on the test cluster: it lists the topics shown idle (declared or not) with their
evidence, never internal, protected, excluded or unknown ones; `--propose` edits the manifests so
that the plan deletes them under the guard, and planned and applied the change converges."""

from __future__ import annotations

import json
import time

from tests.apply.test_apply_live import Repo

DAY = 86_400_000
TOPICS = """\
kind: Topic
name: legacy.orders
# kept by the proposal: comments and other settings stay
configs: {retention.ms: 30d}
state: present
---
kind: Topic
name: live.orders
---
kind: Topic
name: ledger
protected: true
"""


def _old(c, name: str, partitions: int = 2) -> None:
    c.create_topic(name, partitions=partitions, replication_factor=3)
    now = int(time.time() * 1000)
    for p in range(partitions):
        c.produce(name, p, [now - 90 * DAY + i for i in range(5)])


def test_idle_lists_and_proposes_and_the_proposal_converges(tmp_path, test_cluster):
    c = test_cluster
    for name in ("legacy.orders", "ledger", "orphan.v0", "orders.dlq"):
        _old(c, name)
    _old(c, "live.orders")
    c.produce("live.orders", 0, [int(time.time() * 1000)])
    repo = Repo(tmp_path, c, TOPICS)
    manifests = str(repo.dir / "manifests")
    result = repo.run("idle", manifests, "--cluster", "lab", "--idle-for", "30d", "--exclude", r"\.dlq$", "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert [(t["evidence"]["topic"], t["declared"]) for t in report["idle"]] == [("legacy.orders", True), ("orphan.v0", False)]
    assert report["unknown"] == {} and report["written"] == []

    result = repo.run("idle", manifests, "--cluster", "lab", "--idle-for", "30d", "--exclude", r"\.dlq$", "--propose")
    assert result.exit_code == 0 and "Proposed" in result.output, result.output
    edited = (repo.dir / "manifests" / "topics.yaml").read_text()
    assert "state: present" not in edited and "# kept by the proposal" in edited
    assert "name: legacy.orders\n# idle: newest record stamped " in edited
    assert "state: absent\ndelete_only_if_idle_for: 30d\n" in edited
    added = (repo.dir / "manifests" / "idle-lab-30d.yaml").read_text()
    assert "name: orphan.v0\nclusters: [lab]\npartitions: 2\nreplication_factor: 3\n# idle:" in added

    code, plan, output = repo.plan()
    assert code == 2, output
    assert sorted(a["topic"] for a in plan["actions"]) == ["legacy.orders", "orphan.v0"]
    assert all(a["kind"] == "delete_topic" and a["preconditions"]["idle"] for a in plan["actions"])
    code, _ = repo.apply()
    assert code == 0
    assert {"legacy.orders", "orphan.v0"}.isdisjoint(c.topic_names())
    assert {"live.orders", "ledger", "orders.dlq"} <= set(c.topic_names())
    code, plan, _ = repo.plan()
    assert code == 0 and plan["actions"] == []


def test_idle_needs_a_duration(tmp_path, test_cluster):
    repo = Repo(tmp_path, test_cluster, TOPICS)
    result = repo.run("idle", str(repo.dir / "manifests"), "--cluster", "lab")
    assert result.exit_code == 1 and "pass --idle-for (e.g. 30d)" in result.output, result.output
    result = repo.run("idle", str(repo.dir / "manifests"), "--cluster", "lab", "--idle-for", "a month")
    assert result.exit_code == 1 and "'a month' is not a duration" in result.output, result.output


def test_the_policy_s_idle_exempt_topics_are_never_listed(tmp_path, test_cluster):
    for name in ("orphan.v0", "orders.dlq"):
        _old(test_cluster, name)
    repo = Repo(tmp_path, test_cluster, "kind: Policy\nidle_exempt_topics: ['\\.dlq$']\n")
    result = repo.run("idle", str(repo.dir / "manifests"), "--cluster", "lab", "--idle-for", "30d", "--format", "json")
    assert result.exit_code == 0, result.output
    assert [t["evidence"]["topic"] for t in json.loads(result.output)["idle"]] == ["orphan.v0"]
