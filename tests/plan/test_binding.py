"""The digest a saved plan records is of what the manifests mean for its cluster, not of their
bytes (reconciler.plan.binding): pure tests over manifest directories written here."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.manifests import load_manifests
from reconciler.models.desired import DesiredState
from reconciler.models.plan import Plan
from reconciler.plan.binding import bind, binding_refusal, canonical_desired, differences_between, digest_of

CLUSTERS = """\
kind: Cluster
name: prod
bootstrap_servers: [kafka-1:9092, kafka-2:9092]
defaults: {partitions: 6, replication_factor: 3}
ignore_topics: ['^connect-', '^_schemas$']
---
kind: Cluster
name: staging
bootstrap_servers: kafka-s:9092
defaults: {partitions: 1, replication_factor: 1}
"""
POLICY = """\
kind: Policy
clusters: [prod]
max_delete_fraction: 0.5
allowed_replication_factors: [3, 2]
protected_topic_patterns: ['^payments[.]', '^audit[.]']
"""
TOPICS = """\
kind: TruncationRule
name: erasure
before_time: 2026-10-01T00:00:00Z
---
kind: Topic
name: orders.v1
configs: {retention.ms: 7d, cleanup.policy: delete}
truncate:
  - rule: erasure
  - consumed_by: [billing]
---
kind: Topic
name: clicks.v1
partitions: 12
configs: {retention.bytes: 1GiB}
overrides:
  staging: {partitions: 2}
"""
# The same, reworded: comments, key order, quoting, units, a rule inlined, the same instant in
# another offset, documents moved between files, and staging's own changes.
REWORDED = {
    "a.yaml": """\
# Clusters first
kind: Cluster
defaults: {replication_factor: 3, partitions: 6}
name: "prod"
bootstrap_servers: "kafka-1:9092,kafka-2:9092"
ignore_topics: ['^_schemas$', '^connect-']
---
kind: Policy
protected_topic_patterns: ['^audit[.]', '^payments[.]']
allowed_replication_factors: [2, 3]
max_delete_fraction: 0.50
clusters: [prod]
---
name: clicks.v1
kind: Topic
partitions: 12
configs:
  retention.bytes: 1073741824   # 1 GiB
overrides:
  staging: {partitions: 4}
""",
    "b.yaml": """\
kind: Cluster
name: staging
bootstrap_servers: kafka-s:9092
defaults: {partitions: 1, replication_factor: 1}
---
kind: Topic
name: 'orders.v1'
truncate:
  - before_time: "2026-10-01T02:00:00+02:00"
  - consumed_by: [billing]
configs:
  cleanup.policy: "delete"
  retention.ms: 168h
---
kind: Topic
name: staging.only
clusters: [staging]
""",
}


def _desired(tmp_path: Path, files: dict[str, str], cluster: str = "prod") -> DesiredState:
    tmp_path.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return load_manifests(tmp_path).desired_state(cluster)


def _base(tmp_path: Path, **replace: str) -> DesiredState:
    files = {"clusters.yaml": CLUSTERS, "policy.yaml": POLICY, "topics.yaml": TOPICS}
    for old, new in replace.items():
        files = {name: text.replace(old.replace("__", " "), new) for name, text in files.items()}
    return _desired(tmp_path / "base", files)


def test_rewording_the_manifests_keeps_the_digest(tmp_path):
    before = canonical_desired(_base(tmp_path))
    after = canonical_desired(_desired(tmp_path / "reworded", REWORDED))
    assert after == before
    assert digest_of(after) == digest_of(before)
    assert differences_between(before, after) == []


def test_connection_settings_are_not_part_of_the_meaning(tmp_path):
    before = _base(tmp_path)
    moved = before.model_copy(
        update={"cluster": before.cluster.model_copy(update={"bootstrap_servers": ["elsewhere:9093"], "labels": {"a": "b"}})}
    )
    assert bind(moved).digest == bind(before).digest


@pytest.mark.parametrize(
    ("old", "new", "difference"),
    [
        ("retention.ms: 7d", "retention.ms: 6d", 'topic orders.v1, configs.retention.ms: reviewed "604800000", now "518400000"'),
        ("partitions: 12", "partitions: 16", "topic clicks.v1, partitions: reviewed 12, now 16"),
        ("max_delete_fraction: 0.5", "max_delete_fraction: 0.25", "policy, max_delete_fraction: reviewed 0.5, now 0.25"),
        (
            "kind: Policy\n",
            "kind: Policy\nmax_destructive_actions: 3\n",
            "policy, max_destructive_actions: reviewed null, now 3",
        ),
        (
            "ignore_topics: ['^connect-', '^_schemas$']",
            "ignore_topics: ['^connect-']",
            'cluster, ignore_topics: reviewed ["^_schemas$", "^connect-"], now ["^connect-"]',
        ),
        (
            "defaults: {partitions: 6, replication_factor: 3}\n",
            "defaults: {partitions: 6, replication_factor: 3}\ncluster_id: MkU3OEVBNTcwNTJENDM2Qk\n",
            'cluster, cluster_id: reviewed null, now "MkU3OEVBNTcwNTJENDM2Qk"',
        ),
        (
            "consumed_by: [billing]",
            "consumed_by: [billing, audit]",
            'topic orders.v1, truncate: reviewed [{"kind": "before_time"',
        ),
        ("name: clicks.v1\n", "name: clicks.v1\nprotected: true\n", "topic clicks.v1, protected: reviewed (default), now true"),
        (
            "name: clicks.v1\n",
            "name: clicks.v2\n",
            'topic clicks.v1: reviewed {"configs": {"retention.bytes": "1073741824"}, "partitions": 12, '
            '"replication_factor": 3}, now (not declared)',
        ),
    ],
)
def test_a_change_of_meaning_changes_the_digest_and_is_listed(tmp_path, old, new, difference):
    before, after = _base(tmp_path / "before"), _base(tmp_path / "after", **{old.replace(" ", "__"): new})
    assert bind(after).digest != bind(before).digest
    listed = differences_between(canonical_desired(before), canonical_desired(after))
    assert any(line.startswith(difference) for line in listed), listed


def test_a_saved_plan_is_refused_unless_its_manifests_mean_the_same(tmp_path):
    desired = _base(tmp_path / "now")
    plan = Plan(cluster="prod", manifests=bind(desired, commit="0123abc"))
    assert binding_refusal(plan, "plan.json", desired, "manifests") is None

    changed = _base(tmp_path / "changed", **{"partitions:__12": "partitions: 16"})
    refusal = binding_refusal(plan, "plan.json", changed, "manifests", commit="4567def")
    assert refusal is not None
    head, *lines = refusal.splitlines()
    assert head == (
        "plan.json was reviewed for other manifests: the manifests in manifests (now at commit 4567def) mean "
        "something else for cluster prod than those it was planned from at commit 0123abc (1 difference, below). "
        "Nothing was written. Plan again and have the new plan reviewed."
    )
    assert lines == ["  topic clicks.v1, partitions: reviewed 12, now 16"]

    unbound = plan.model_copy(update={"manifests": None})
    assert "plan.json records no digest of the manifests it was planned from" in (
        binding_refusal(unbound, "plan.json", desired, "manifests") or ""
    )
    assert plan.manifests is not None
    edited = plan.model_copy(update={"manifests": plan.manifests.model_copy(update={"desired": canonical_desired(changed)})})
    refusal = binding_refusal(edited, "plan.json", changed, "manifests")
    assert refusal is not None and "plan.json was edited or damaged" in refusal and "\n" not in refusal


def test_a_refusal_lists_at_most_twenty_differences_and_counts_the_rest(tmp_path):
    topics = "".join(f"---\nkind: Topic\nname: t.{i:02d}\n" for i in range(30))
    before = _desired(tmp_path / "a", {"c.yaml": CLUSTERS, "t.yaml": topics})
    after = _desired(tmp_path / "b", {"c.yaml": CLUSTERS, "t.yaml": topics.replace("name:", "partitions: 2\nname:")})
    refusal = binding_refusal(Plan(cluster="prod", manifests=bind(before)), "p.json", after, "m")
    assert refusal is not None
    lines = refusal.splitlines()
    assert "(30 differences, below)" in lines[0] and len(lines) == 22 and lines[-1] == "  and 10 more"


def test_a_topic_at_its_defaults_is_recorded_in_few_bytes(tmp_path):
    desired = _desired(tmp_path, {"c.yaml": CLUSTERS, "t.yaml": "kind: Topic\nname: plain.topic\n"})
    assert canonical_desired(desired)["topics"] == {"plain.topic": {"partitions": 6, "replication_factor": 3}}
