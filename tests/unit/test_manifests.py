"""The manifest loader on valid input: merging, normalisation, positions, reuse, schema."""
from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from reconciler.errors import ManifestError, ReconcilerError
from reconciler.manifests import load_manifests, manifest_json_schema
from reconciler.models.desired import BeforeTime, ConsumedBy, Everything, KeepLast, TopicState, UndeclaredConfigs

ROOT = Path(__file__).resolve().parents[2]

CLUSTERS = """\
kind: Cluster
name: prod
bootstrap_servers: [k1:9092, "k2:9092"]
security: {protocol: SASL_SSL, sasl_mechanism: PLAIN, username: "${U}", password: "${P}"}
defaults:
  partitions: 6
  replication_factor: 3
  configs: {min.insync.replicas: 2, retention.ms: 1d}
---
kind: Cluster
name: dev
bootstrap_servers: localhost:9092
defaults: {partitions: 1, replication_factor: 1}
"""


def write(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def test_merge_order_defaults_template_topic_override(tmp_path):
    root = write(tmp_path, {"clusters.yaml": CLUSTERS, "topics/t.yaml": """\
kind: TopicTemplate
name: events
partitions: 12
configs: {retention.ms: 7d, cleanup.policy: delete}
---
kind: Topic
name: orders.v1
template: events
configs: {retention.ms: 3d, segment.bytes: 512MiB, preallocate: true}
overrides:
  dev: {partitions: 2, configs: {retention.ms: 1h}}
"""})
    manifests = load_manifests(root)
    prod = manifests.desired_state("prod").topics["orders.v1"]
    dev = manifests.desired_state("dev").topics["orders.v1"]
    assert (prod.partitions, prod.replication_factor) == (12, 3)
    assert prod.configs == {"cleanup.policy": "delete", "min.insync.replicas": "2", "preallocate": "true",
                            "retention.ms": "259200000", "segment.bytes": "536870912"}
    assert (dev.partitions, dev.replication_factor, dev.configs["retention.ms"]) == (2, 1, "3600000")
    assert "min.insync.replicas" not in dev.configs
    assert (prod.source.file, prod.source.line) == ("topics/t.yaml", 7)


def test_clusters_security_keeps_env_references_and_splits_servers(tmp_path):
    manifests = load_manifests(write(tmp_path, {"c.yaml": CLUSTERS}))
    prod = manifests.clusters["prod"]
    assert prod.bootstrap_servers == ["k1:9092", "k2:9092"]
    assert (prod.security.username, prod.security.password) == ("${U}", "${P}")
    assert manifests.clusters["dev"].bootstrap_servers == ["localhost:9092"]
    assert manifests.cluster_names() == ["dev", "prod"]


def test_topic_on_selected_clusters_only_and_unknown_cluster_lookup(tmp_path):
    manifests = load_manifests(write(tmp_path, {"c.yaml": CLUSTERS, "t.yaml": "kind: Topic\nname: a.b\nclusters: [dev]\n"}))
    assert list(manifests.desired_state("dev").topics) == ["a.b"]
    assert manifests.desired_state("prod").topics == {}
    with pytest.raises(ReconcilerError, match="no cluster named 'nope'"):
        manifests.desired_state("nope")


def test_truncation_rules_shared_and_inline(tmp_path):
    manifests = load_manifests(write(tmp_path, {"c.yaml": CLUSTERS, "t.yaml": """\
kind: TruncationRule
name: purge
before_time: 2026-10-01T00:00:00+02:00
---
kind: Topic
name: a.b
truncate:
  - rule: purge
  - consumed_by: [billing]
  - keep_last: 10
---
kind: Topic
name: c.d
truncate: [{everything: true}]
"""}))
    topics = manifests.desired_state("prod").topics
    purge, groups, keep = topics["a.b"].truncate
    assert isinstance(purge, BeforeTime) and purge.name == "purge"
    assert purge.timestamp == datetime(2026, 9, 30, 22, tzinfo=timezone.utc)
    assert (purge.source.file, purge.source.line) == ("t.yaml", 1)
    assert isinstance(groups, ConsumedBy) and groups.groups == ["billing"]
    assert isinstance(keep, KeepLast) and keep.records == 10
    assert isinstance(topics["c.d"].truncate[0], Everything)


def test_yaml_anchors_and_merge_keys(tmp_path):
    manifests = load_manifests(write(tmp_path, {"c.yaml": CLUSTERS, "t.yaml": """\
kind: Topic
name: a.b
configs: &common {retention.ms: 2d, cleanup.policy: "compact,delete"}
overrides:
  dev:
    configs:
      <<: *common
      retention.ms: 5d
"""}))
    prod = manifests.desired_state("prod").topics["a.b"]
    dev = manifests.desired_state("dev").topics["a.b"]
    assert prod.configs["cleanup.policy"] == "compact,delete"
    assert prod.configs["retention.ms"] == str(2 * 86400000)
    assert dev.configs["retention.ms"] == str(5 * 86400000)
    assert dev.configs["cleanup.policy"] == "compact,delete"


def test_state_absent_and_undeclared_configs(tmp_path):
    manifests = load_manifests(write(tmp_path, {"c.yaml": CLUSTERS, "t.yaml": """\
kind: Topic
name: old.one
state: absent
undeclared_configs: remove
"""}))
    topic = manifests.desired_state("dev").topics["old.one"]
    assert topic.state is TopicState.ABSENT and topic.undeclared_configs is UndeclaredConfigs.REMOVE


def test_all_problems_of_several_files_at_once(tmp_path):
    root = write(tmp_path, {"c.yaml": CLUSTERS, "a.yaml": "kind: Topic\nname: x.y\npartitons: 3\n",
                            "b.yaml": "kind: Topic\nname: z.z\nconfigs: {retention.ms: soon}\n"})
    with pytest.raises(ManifestError) as raised:
        load_manifests(root)
    shown = [(p.file, p.line) for p in raised.value.problems]
    assert ("a.yaml", 3) in shown and ("b.yaml", 3) in shown


def test_example_manifests_load_for_both_clusters():
    manifests = load_manifests(ROOT / "manifests")
    assert manifests.cluster_names() == ["prod-eu", "staging-eu"]
    prod = manifests.desired_state("prod-eu")
    assert prod.topics["orders.v1"].partitions == 12
    assert prod.topics["clickstream.raw"].configs["retention.bytes"] == str(50 * 1024 ** 3)
    assert prod.policy.max_delete_fraction == 0.9
    assert manifests.desired_state("staging-eu").topics["orders.v1"].partitions == 3


def test_json_schema_covers_every_kind():
    schema = manifest_json_schema()
    json.dumps(schema)
    kinds = {d["properties"]["kind"]["const"] for d in schema["$defs"].values()
             if "kind" in d.get("properties", {})}
    assert kinds == {"Cluster", "Policy", "TruncationRule", "TopicTemplate", "Topic"}
    assert schema["discriminator"]["propertyName"] == "kind"
