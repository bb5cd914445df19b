"""A saved plan is applied only as far as the manifests *as they are now* still ask for and allow
its destructive actions: protection added since the plan, a policy delete limit, `state: absent`
taken back, or truncation rules changed each refuse the action concerned (nothing deleted there),
and the rest of the plan still runs.
"""

from __future__ import annotations

from tests.apply.test_apply_live import Repo, log_starts, outcome, seed

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


def _saved(tmp_path, c) -> Repo:
    for name in ("cut.me", "drop.me", "conf.me"):
        seed(c, name)
    repo = Repo(tmp_path, c, TOPICS)
    assert repo.plan()[0] == 2
    return repo


def _rewrite(repo: Repo, text: str) -> None:
    (repo.dir / "manifests" / "topics.yaml").write_text(text)


def test_protection_added_after_the_plan_refuses_its_destructive_actions(tmp_path, test_cluster):
    c = test_cluster
    repo = _saved(tmp_path, c)
    # What a valid manifest change to protect them looks like: the loader refuses protection beside
    # truncation rules or `state: absent`, so those go, and the protection comes in.
    _rewrite(
        repo,
        TOPICS.replace("truncate: [{keep_last: 10}]", "partitions: 2").replace("state: absent", "protected: true")
        + "---\nkind: Policy\nprotected_topic_patterns: ['^cut[.]']\n",
    )
    code, result = repo.apply()
    assert code == 1
    for kind, topic in (("truncate", "cut.me"), ("delete_topic", "drop.me")):
        found = outcome(result, kind, topic)
        assert found["status"] == "refused" and f"{topic} is now protected" in found["message"], found
    assert outcome(result, "alter_configs", "conf.me")["status"] == "applied"
    assert log_starts(c, "cut.me") == [0, 0] and "drop.me" in c.topic_names()


def test_a_policy_delete_limit_and_withdrawn_intent_are_honoured(tmp_path, test_cluster):
    c = test_cluster
    repo = _saved(tmp_path, c)
    # The deletion opt-in is taken back, and a policy now allows deleting at most half of a partition.
    _rewrite(repo, TOPICS.replace("state: absent", "partitions: 2") + "---\nkind: Policy\nmax_delete_fraction: 0.5\n")
    code, result = repo.apply()
    assert code == 1
    cut = outcome(result, "truncate", "cut.me")
    assert cut["status"] == "refused"
    assert all(p["status"] == "refused" and "exceeds the policy limit of 50%" in p["message"] for p in cut["partitions"])
    dropped = outcome(result, "delete_topic", "drop.me")
    assert dropped["status"] == "refused" and "no longer declare drop.me `state: absent`" in dropped["message"]
    assert log_starts(c, "cut.me") == [0, 0] and "drop.me" in c.topic_names()


def test_changed_truncation_rules_refuse_the_planned_truncation(tmp_path, test_cluster):
    c = test_cluster
    repo = _saved(tmp_path, c)
    _rewrite(repo, TOPICS.replace("keep_last: 10", "keep_last: 50"))
    code, result = repo.apply()
    assert code == 1
    cut = outcome(result, "truncate", "cut.me")
    assert cut["status"] == "refused" and "rules of cut.me changed since the plan" in cut["message"]
    assert "planned: all but the last 10 records; the manifests now: all but the last 50 records" in cut["message"]
    assert log_starts(c, "cut.me") == [0, 0]
    assert outcome(result, "delete_topic", "drop.me")["status"] == "applied"
