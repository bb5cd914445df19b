"""Where a merged setting was written (reconciler.manifests.merge) is worked out only when a message
needs it: from the layers, highest first. Each message below names the layer that set the value in
effect, whichever of defaults, template, topic and override that is; a layer that writes null
leaves the one below it in effect."""

from __future__ import annotations

import pytest

from reconciler.errors import ManifestError
from reconciler.manifests import load_manifests

CLUSTER = """\
kind: Cluster
name: east
bootstrap_servers: [k1:9092]
defaults:
  partitions: 3
  replication_factor: 3
  configs:
    min.insync.replicas: 2
---
kind: TopicTemplate
name: compacted
replication_factor: 2
configs:
  cleanup.policy: compact
"""

TOPICS = """\
kind: Topic
name: isr.defaults
clusters: [east]
replication_factor: 3
overrides:
  east:
    replication_factor: 1
---
kind: Topic
name: isr.override
template: compacted
truncate: []
overrides:
  east:
    configs:
      min.insync.replicas: 3
---
kind: Topic
name: rf.null
clusters: [east]
replication_factor: 1
overrides:
  east:
    replication_factor: null
---
kind: Topic
name: compact.rules
template: compacted
configs:
  min.insync.replicas: 1
truncate:
- keep_last: 10
"""


def test_each_clash_names_the_layer_that_set_each_value(tmp_path):
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    (tmp_path / "topics.yaml").write_text(TOPICS)
    with pytest.raises(ManifestError) as raised:
        load_manifests(tmp_path)
    isr = "so every write with acks=all would fail; set min.insync.replicas to at most {rf} or raise replication_factor"
    assert [(p.file, p.line, p.column, p.message) for p in raised.value.problems] == [
        # the override's replication_factor against the cluster defaults' min.insync.replicas
        (
            "topics.yaml",
            7,
            25,
            "topic isr.defaults on cluster east: min.insync.replicas 2 is above its "
            "replication_factor 1 (min.insync.replicas set at cluster.yaml:8:26), " + isr.format(rf=1),
        ),
        # the override's min.insync.replicas against the template's replication_factor
        (
            "topics.yaml",
            16,
            28,
            "topic isr.override on cluster east: min.insync.replicas 3 is above its "
            "replication_factor 2 (replication_factor set at cluster.yaml:12:21), " + isr.format(rf=2),
        ),
        # the override's null leaves the topic's replication_factor in effect, and the message there
        (
            "topics.yaml",
            21,
            21,
            "topic rf.null on cluster east: min.insync.replicas 2 is above its "
            "replication_factor 1 (min.insync.replicas set at cluster.yaml:8:26), " + isr.format(rf=1),
        ),
        # the topic's rules against the template's cleanup.policy
        (
            "topics.yaml",
            32,
            1,
            "topic compact.rules on cluster east has truncation rules, but its cleanup.policy "
            "is compact (set at cluster.yaml:14:19), and Kafka deletes records only from topics "
            "whose cleanup.policy includes delete; write cleanup.policy: compact,delete or "
            "remove the rules",
        ),
    ]
