"""`trusted()` builds a model without validating it: fields left out get their defaults as in
`model_construct`, and a key that is not a field, or a required field left out, is refused."""

from __future__ import annotations

import re

import pytest

from reconciler.models.desired import DesiredTopic, SourceRef
from reconciler.models.observed import ObservedPartition, ObservedState
from reconciler.models.trusted import trusted, trusted_copy, trusted_each, trusted_maker


def test_fields_left_out_get_their_defaults_as_model_construct_gives_them() -> None:
    made = trusted(DesiredTopic, {"name": "t", "partitions": 3, "replication_factor": 2})
    constructed = DesiredTopic.model_construct(name="t", partitions=3, replication_factor=2)
    assert made == constructed and repr(made) == repr(constructed)
    assert made.protected is False and made.model_fields_set == {"name", "partitions", "replication_factor"}
    assert list(made.__dict__) == list(DesiredTopic.model_fields)  # dumped in the fields' order


def test_defaults_made_by_a_factory_are_not_shared() -> None:
    first, second = ObservedState.view_of("c", {}), ObservedState.view_of("c", {})
    assert first == ObservedState.model_construct(cluster="c", topics={})
    assert first.brokers is not second.brokers and first.group_offsets is not second.group_offsets


def test_given_every_field_the_values_are_the_models_own() -> None:
    values = {"file": "a.yaml", "line": 1, "column": 2}
    made = trusted(SourceRef, values)
    assert made.__dict__ is values and made.model_fields_set == set(SourceRef.model_fields)


@pytest.mark.parametrize(
    ("values", "said"),
    [
        ({"file": "a.yaml", "line": 1, "column": 2, "colum": 2}, "not fields ['colum']"),
        ({"file": "a.yaml", "column": 2}, "required fields missing ['line']"),
    ],
)
def test_a_key_not_a_field_or_a_required_field_left_out_is_refused(values: dict[str, object], said: str) -> None:
    with pytest.raises(TypeError, match=f"SourceRef: .*{said}".replace("[", r"\[").replace("]", r"\]")):
        trusted(SourceRef, values)


def test_a_batch_of_rows_not_of_the_model_s_fields_is_refused() -> None:
    row = dict.fromkeys(ObservedPartition.model_fields)
    with pytest.raises(TypeError, match="each row must hold every field"):
        trusted_each(ObservedPartition, [{**row, "leadr": 1}, row])


def test_a_trusted_copy_is_what_model_copy_gives() -> None:
    topic = DesiredTopic(name="t", partitions=3, replication_factor=2, configs={"retention.ms": "1000"})
    copied, expected = trusted_copy(topic, {"name": "u"}), topic.model_copy(update={"name": "u"})
    assert copied == expected and repr(copied) == repr(expected)
    assert copied.model_fields_set == expected.model_fields_set and list(copied.__dict__) == list(DesiredTopic.model_fields)
    assert copied.configs is topic.configs and topic.name == "t"  # the other values shared, the original unchanged


def test_a_trusted_copy_updates_only_fields_the_instance_was_given() -> None:
    topic = DesiredTopic(name="t", partitions=3, replication_factor=2)
    for update, said in (({"nam": "u"}, "['nam']"), ({"protected": True}, "['protected']")):
        with pytest.raises(TypeError, match=re.escape(said)):
            trusted_copy(topic, update)


def test_a_maker_builds_what_trusted_builds_with_its_given_fields() -> None:
    make = trusted_maker(SourceRef, {"file", "line"})
    made, expected = (
        make({"file": "a.yaml", "line": 1, "column": 2}),
        trusted(SourceRef, {"file": "a.yaml", "line": 1, "column": 2}),
    )
    assert made == expected and repr(made) == repr(expected) and made.model_fields_set == {"file", "line"}
    with pytest.raises(TypeError, match=re.escape("not fields ['colum']")):
        trusted_maker(SourceRef, {"file", "colum"})
