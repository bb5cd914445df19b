"""The snapshot fast path keeps its verdicts on leaders and replica lists by value (where True and
1.0 equal 1): values of other types that equal a verdict's, and lists that cannot be a key at all,
are still left to the models (reconciler.models.observed.topic_from_file)."""

from __future__ import annotations

import copy

import pytest
from pydantic import ValidationError

from reconciler.models.observed import FILE_CONTEXT, ObservedTopic, topic_from_file

PARTITION = {
    "partition": 0,
    "leader": 1,
    "leader_epoch": 4,
    "replicas": [1, 2, 3],
    "isr": [1, 2, 3],
    "offline_replicas": [],
    "log_start_offset": 10,
    "high_watermark": 500,
    "size_bytes": 9000,
    "epoch_end_offset": None,
    "offsets_by_timestamp": {},
}


def _topic(**changed) -> dict:
    return {"name": "orders.v1", "partitions": [dict(PARTITION), {**PARTITION, "partition": 1, **changed}]}


@pytest.mark.parametrize(
    "changed",
    [
        {"replicas": [True, 2, 3], "leader": 2},
        {"replicas": [1.0, 2, 3], "leader": 2},
        {"isr": [1, 2.0, 3]},
        {"offline_replicas": [False]},
        {"leader": True},
        {"leader_epoch": 4.0},
        {"replicas": [[1], 2, 3]},
        {"isr": [{"1": 1}]},
        {"offline_replicas": [[]]},
    ],
    ids=repr,
)
def test_a_value_equal_to_a_known_good_one_but_of_another_type_is_left_to_the_models(changed):
    assert topic_from_file(_topic(), {}) is not None  # the verdict on [1, 2, 3] is known now
    topic = _topic(**changed)
    assert topic_from_file(copy.deepcopy(topic), {}) is None
    with pytest.raises(ValidationError):
        ObservedTopic.model_validate(topic, context=FILE_CONTEXT)


def test_a_refused_look_alike_leaves_no_verdict_on_the_values_it_equals():
    assert topic_from_file(_topic(replicas=[True, 2, 3], leader=2), {}) is None
    assert topic_from_file(_topic(leader=2), {}) is not None
