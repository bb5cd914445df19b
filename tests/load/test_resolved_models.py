"""The models the loader builds without validating again (`DesiredTopic.resolved`,
`SourceRef.at`) equal the validated ones, and hold every field: one added later cannot be
forgotten there."""

from __future__ import annotations

from typing import Any

from reconciler.manifests import load_manifests
from reconciler.models.desired import DesiredTopic, KeepLast, RetentionStepping, SourceRef, TopicState, UndeclaredConfigs


def test_a_source_ref_at_a_place_is_the_validated_one():
    made = SourceRef.at("topics/a.yaml", 3, 7)
    assert made == SourceRef(file="topics/a.yaml", line=3, column=7)
    assert made.model_dump() == SourceRef(file="topics/a.yaml", line=3, column=7).model_dump()
    assert set(made.__dict__) == set(SourceRef.model_fields) == made.model_fields_set


def test_a_resolved_topic_is_the_validated_one():
    values: dict[str, Any] = dict(
        name="orders.v1",
        state=TopicState.PRESENT,
        partitions=12,
        replication_factor=3,
        configs={"retention.ms": "86400000"},
        undeclared_configs=UndeclaredConfigs.REMOVE,
        protected=True,
        retention_stepping=RetentionStepping.GRADUAL,
        replica_assignment={0: [1, 2, 3]},
        truncate=[KeepLast(records=5)],
        source=SourceRef.at("t.yaml", 1, 1),
    )
    made = DesiredTopic.resolved(**values)
    validated = DesiredTopic(**values)
    assert made == validated and repr(made) == repr(validated)
    assert made.model_dump_json() == validated.model_dump_json()
    assert set(made.__dict__) == set(DesiredTopic.model_fields) == made.model_fields_set


def test_loaded_topics_are_the_validated_ones(tmp_path):
    (tmp_path / "m.yaml").write_text("""\
kind: Cluster
name: prod
bootstrap_servers: [k1:9092]
defaults: {partitions: 3, replication_factor: 3}
---
kind: Topic
name: a.b
replica_assignment: {0: [1, 2, 3]}
configs: {retention.ms: 7d}
truncate: [{keep_last: 10}]
""")
    topic = load_manifests(tmp_path).desired_state("prod").topics["a.b"]
    again = DesiredTopic.model_validate(topic.model_dump())
    assert topic == again and topic.model_dump_json() == again.model_dump_json()
