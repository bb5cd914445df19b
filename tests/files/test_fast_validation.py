"""The fast path for snapshot files (`reconciler.models.observed.topic_from_file`) against the
models' own validation: whatever it accepts, the models accept and build equal; whatever the
models refuse, it leaves to them (so the messages are theirs: tests/files/bad)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from reconciler.models.observed import FILE_CONTEXT, ObservedState, ObservedTopic, topic_from_file

GOOD = json.loads((Path(__file__).parent / "good.json").read_text())
TOPIC: dict[str, Any] = {
    "name": "orders.v1",
    "topic_id": "abc",
    "internal": False,
    "authorized_operations": ["DESCRIBE", "DELETE"],
    "configs": {
        "retention.ms": {"value": "1000", "source": 1, "sensitive": False, "read_only": False},
        "password": {"value": None, "source": 1, "sensitive": True, "read_only": False},
    },
    "partitions": [
        {
            "partition": i,
            "leader": 1 + i % 3,
            "leader_epoch": 4,
            "replicas": [1, 2, 3],
            "isr": [1, 2, 3],
            "offline_replicas": [],
            "log_start_offset": 10,
            "high_watermark": 500,
            "size_bytes": 9000,
            "epoch_end_offset": None,
            "offsets_by_timestamp": {"1790000000000": 42, "-5": -1, "0": 7},
        }
        for i in range(3)
    ],
}
ODD = [
    None,
    True,
    False,
    0,
    1,
    1.0,
    -1,
    -2,
    2**31,
    2**31 - 1,
    2**63,
    2**63 - 1,
    "1",
    "",
    "x",
    "..",
    [],
    [1],
    [1, 1],
    [True],
    [1.0],
    [4],
    {},
    {"1": 1},
    {"01": 1},
    {"-0": 1},
    {" 1": 1},
    {"1": True},
    {"1": -2},
    {1: 1},
    {"value": "1"},
    {"source": 9},
    {"source": True},
    {"other": 1},
    "DELETE",
    ["READ"],
    ["NOPE"],
    "a" * 250,
]
MISSING = object()


def _mutations():
    yield "as written", lambda t: None
    for field in TOPIC:
        for value in [*ODD, MISSING]:
            yield f"topic {field}={value!r}", _setter(lambda t: t, field, value)
    for field in TOPIC["partitions"][0]:
        for value in [*ODD, MISSING, "extra"]:
            yield f"partition {field}={value!r}", _setter(lambda t: t["partitions"][1], field, value)
    for field in TOPIC["configs"]["retention.ms"]:
        for value in [*ODD, MISSING]:
            yield f"config {field}={value!r}", _setter(lambda t: t["configs"]["retention.ms"], field, value)
    yield "config key empty", lambda t: t["configs"].update({"": {"value": "1"}})
    yield "partitions reordered", lambda t: t["partitions"].reverse()
    yield "partition keys reordered", lambda t: t["partitions"].__setitem__(0, dict(reversed(t["partitions"][0].items())))
    yield (
        "offline partition",
        lambda t: t["partitions"][2].update(leader=-1, log_start_offset=-1, high_watermark=-1, offsets_by_timestamp={}),
    )
    yield "start above end", lambda t: t["partitions"][2].update(log_start_offset=501)
    yield "leader outside", lambda t: t["partitions"][2].update(leader=7)
    yield "no replicas, a leader", lambda t: t["partitions"][2].update(replicas=[], isr=[], leader=7)


def _setter(where, field, value):
    def mutate(topic):
        target = where(topic)
        if value is MISSING:
            target.pop(field, None)
        elif value == "extra":
            target["extra"] = 1
        else:
            target[field] = copy.deepcopy(value)

    return mutate


@pytest.mark.parametrize(("what", "mutate"), list(_mutations()), ids=lambda x: x if isinstance(x, str) else "")
def test_the_fast_path_accepts_only_what_the_models_accept_and_builds_it_equal(what, mutate):
    topic = copy.deepcopy(TOPIC)
    mutate(topic)
    try:
        full = ObservedTopic.model_validate(copy.deepcopy(topic), context=FILE_CONTEXT)
    except ValidationError:
        full = None
    fast = topic_from_file(copy.deepcopy(topic), {})
    if what == "as written":
        assert fast is not None
    if fast is not None:
        assert full is not None, f"{what}: the fast path accepted what the models refuse"
        assert fast == full and repr(fast) == repr(full)
        assert fast.model_dump_json() == full.model_dump_json()
        assert fast.model_fields_set <= set(ObservedTopic.model_fields)


def test_a_refused_topic_is_handed_to_the_models_as_it_came():
    topic = copy.deepcopy(TOPIC)
    topic["partitions"][2]["leader"] = 7  # refused after two partitions passed
    before = copy.deepcopy(topic)
    assert topic_from_file(topic, {}) is None
    assert topic == before and json.dumps(topic) == json.dumps(before)


def test_a_whole_file_reads_as_the_models_read_it():
    data = copy.deepcopy(GOOD)
    data["topics"]["orders.v1"] = {**copy.deepcopy(TOPIC), "name": "orders.v1"}
    full = ObservedState.model_validate(copy.deepcopy(data), context=FILE_CONTEXT)
    fast = ObservedState.from_file(copy.deepcopy(data))
    assert all(topic_from_file(copy.deepcopy(t), {}) is not None for t in data["topics"].values())
    assert fast == full and fast.to_json() == full.to_json()


def _cross_broken(breaks: str) -> dict:
    data = copy.deepcopy(GOOD)
    name = next(iter(data["topics"]))
    if breaks == "a name other than its key":
        data["topics"][name]["name"] = name + ".other"
    elif breaks == "a read topic hidden":
        data["hidden_topics"] = [name]
    elif breaks == "a read topic absent":
        data["absent_topic_operations"] = {name: ["READ"]}
    else:
        data["reassignments"] = {name: {"999": {"adding_replicas": [], "removing_replicas": []}}}
    return data


@pytest.mark.parametrize(
    "breaks", ["a name other than its key", "a read topic hidden", "a read topic absent", "a reassignment of no partition"]
)
def test_the_rules_between_built_topics_and_the_rest_refuse_as_the_models_do(breaks: str):
    """Every topic built at once, the rest is validated without them and the rules across checked
    after (ObservedState.from_file): a break is refused with the models' own errors."""
    data = _cross_broken(breaks)
    assert all(topic_from_file(copy.deepcopy(t), {}) is not None for t in data["topics"].values())
    with pytest.raises(ValidationError) as whole:
        ObservedState.model_validate(copy.deepcopy(data), context=FILE_CONTEXT)
    with pytest.raises(ValidationError) as fast:
        ObservedState.from_file(copy.deepcopy(data))
    assert fast.value.errors() == whole.value.errors()
    assert str(fast.value) == str(whole.value)


def test_every_field_of_the_models_is_mutated_above():
    """A field added to a model gets the ODD values above without a line here, once TOPIC holds it."""
    from reconciler.models.observed import ObservedConfig, ObservedPartition

    assert set(TOPIC) == set(ObservedTopic.model_fields)
    assert set(TOPIC["partitions"][0]) == set(ObservedPartition.model_fields)
    assert set(TOPIC["configs"]["retention.ms"]) == set(ObservedConfig.model_fields)
