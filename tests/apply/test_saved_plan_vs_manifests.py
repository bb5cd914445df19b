"""A saved plan is applied only with manifests that mean what they meant when it was made: the
plan records a digest of the cluster's resolved desired state (`reconciler.plan.binding`), and
`apply PLAN --manifests DIR` refuses the whole plan, before it connects, when the manifests now
mean something else, listing each difference. Rewording the manifests (comments, key order,
quoting, units, splitting files, another cluster's documents) changes nothing.

The per-action checks against the current manifests (protection, the policy's delete limit,
`state: absent`, truncation rules) still guard a plan whose actions were edited by hand; they are
tested on their own in tests/apply/test_preconditions.py.
"""

from __future__ import annotations

import json

import pytest

from tests.apply.test_apply_live import Repo, log_starts, seed

TOPICS = """\
kind: Topic
name: cut.me
truncate: [{keep_last: 10}]
---
kind: Topic
name: drop.me
state: absent
---
kind: Topic
name: conf.me
configs: {retention.ms: 1d}
"""

CLUSTER = "kind: Cluster\nname: lab\nbootstrap_servers: [127.0.0.1:9]\ndefaults: {partitions: 2, replication_factor: 3}\n"

# The same meaning, written differently: comments, key order, quoting, units, flow and block
# style, and the documents split over two files; plus another cluster and a topic only it has.
REWORDED = {
    "topics.yaml": """\
# the topics this team owns
kind: "Topic"
truncate:
  - keep_last: 10   # keep a little
name: 'cut.me'
---
name: conf.me
kind: Topic
configs:
  retention.ms: 24h
""",
    "more.yaml": """\
state: "absent"
kind: Topic
name: drop.me
---
kind: Cluster
name: elsewhere
bootstrap_servers: [127.0.0.1:9]
defaults: {partitions: 1, replication_factor: 1}
---
kind: Topic
name: only.elsewhere
clusters: [elsewhere]
""",
}


def _saved(tmp_path, c) -> Repo:
    """Three seeded topics and a saved plan to truncate one, delete one and set retention on one."""
    for name in ("cut.me", "drop.me", "conf.me"):
        seed(c, name)
    repo = Repo(tmp_path, c, TOPICS)
    assert repo.plan()[0] == 2
    return repo


def _rewrite(repo: Repo, files: dict[str, str]) -> None:
    for path in (repo.dir / "manifests").glob("*.yaml"):
        if path.name != "cluster.yaml":
            path.unlink()
    for name, text in files.items():
        (repo.dir / "manifests" / name).write_text(text)


def _apply(repo: Repo, *extra: str):
    return repo.run("apply", str(repo.dir / "plan.json"), "--manifests", str(repo.dir / "manifests"), *extra)


def test_manifests_that_only_read_differently_apply_the_reviewed_plan(tmp_path, test_cluster):
    c = test_cluster
    repo = _saved(tmp_path, c)
    _rewrite(repo, REWORDED)
    c.clear_request_log()
    code, result = repo.apply()
    assert code == 0, result
    assert list(c.request_log)  # the log the refusals below are checked against sees an apply
    assert log_starts(c, "cut.me") == [90, 90] and "drop.me" not in c.topic_names()
    assert c.topic_configs("conf.me")["retention.ms"] == "86400000"


# (what changes in the manifests, the difference the refusal lists)
CHANGES = {
    "retention": (
        {"topics.yaml": TOPICS.replace("retention.ms: 1d", "retention.ms: 2d")},
        'topic conf.me, configs.retention.ms: reviewed "86400000", now "172800000"',
    ),
    "partitions": (
        {"topics.yaml": TOPICS.replace("name: conf.me\n", "name: conf.me\npartitions: 3\n")},
        "topic conf.me, partitions: reviewed 2, now 3",
    ),
    "policy": (
        {"topics.yaml": TOPICS + "---\nkind: Policy\nmax_delete_fraction: 0.5\n"},
        "policy, max_delete_fraction: reviewed null, now 0.5",
    ),
    "cluster setting": (
        {"topics.yaml": TOPICS, "cluster.yaml": CLUSTER + "ignore_topics: ['^scratch[.]']\n"},
        'cluster, ignore_topics: reviewed [], now ["^scratch[.]"]',
    ),
    "protection": (
        {"topics.yaml": TOPICS.replace("state: absent", "protected: true")},
        "topic drop.me, protected: reviewed (default), now true",
    ),
    "truncation rules": (
        {"topics.yaml": TOPICS.replace("keep_last: 10", "keep_last: 50")},
        'topic cut.me, truncate: reviewed [{"kind": "keep_last", "records": 10}], now [{"kind": "keep_last", "records": 50}]',
    ),
    "a topic no longer declared": (
        {"topics.yaml": TOPICS.split("---\n", 1)[1]},
        'topic cut.me: reviewed {"partitions": 2',
    ),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_manifests_that_mean_something_else_refuse_the_whole_plan_before_connecting(tmp_path, test_cluster, change):
    c = test_cluster
    repo = _saved(tmp_path, c)
    files, difference = CHANGES[change]
    _rewrite(repo, files)
    c.clear_request_log()
    result = _apply(repo, "--format", "json", "-o", str(repo.dir / "result.json"))
    assert result.exit_code == 1
    message = result.output
    assert message.startswith(f"Error: {repo.dir / 'plan.json'} was reviewed for other manifests"), message
    assert "Plan again and have the new plan reviewed." in message
    assert difference in message, message
    # Refused whole, before a request reached the cluster: nothing read, nothing written.
    assert list(c.request_log) == []
    assert not (repo.dir / "result.json").exists()
    assert log_starts(c, "cut.me") == [0, 0] and "drop.me" in c.topic_names()
    assert "retention.ms" not in c.topic_configs("conf.me")


def test_a_plan_without_a_digest_or_with_a_tampered_one_is_refused(tmp_path, test_cluster):
    c = test_cluster
    repo = _saved(tmp_path, c)
    saved = repo.dir / "plan.json"
    data = json.loads(saved.read_text())

    del data["manifests"]  # as an earlier version saved it
    saved.write_text(json.dumps(data))
    result = _apply(repo)
    assert result.exit_code == 1
    assert f"{saved} records no digest of the manifests it was planned from" in result.output
    assert "Plan again and have the new plan reviewed." in result.output

    data = repo.plan()[1]
    data["manifests"]["desired"]["topics"]["cut.me"]["truncate"][0]["records"] = 5  # what was reviewed, rewritten
    saved.write_text(json.dumps(data))
    result = _apply(repo)
    assert result.exit_code == 1
    assert f"{saved} was edited or damaged: its manifests digest sha256:" in result.output
    assert "does not match the desired state it records" in result.output

    saved.write_text(saved.read_text()[:-200])  # truncated
    result = _apply(repo)
    assert result.exit_code == 1 and result.output.startswith(f"Error: {saved} is not a saved plan")
    assert f"{saved}:1:" in result.output and "not JSON" in result.output
    assert log_starts(c, "cut.me") == [0, 0] and "drop.me" in c.topic_names()


def test_a_plan_for_another_cluster_is_refused_naming_both(tmp_path, test_cluster):
    c = test_cluster
    repo = _saved(tmp_path, c)
    (repo.dir / "manifests" / "other.yaml").write_text(
        "kind: Cluster\nname: other\nbootstrap_servers: [127.0.0.1:9]\ndefaults: {partitions: 1, replication_factor: 1}\n"
    )
    assert repo.plan()[0] == 2  # the other cluster's Cluster document does not change lab's plan
    result = _apply(repo, "--cluster", "other")
    assert result.exit_code == 1
    assert f"{repo.dir / 'plan.json'} is a plan for cluster 'lab', not 'other'" in result.output
    assert log_starts(c, "cut.me") == [0, 0]
