"""The live reader's trusted constructors (ObservedPartition/ObservedTopic.from_reader) give the
models validation gives, and still refuse what the planner must not act on."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from reconciler.models.observed import ConfigSource, ObservedConfig, ObservedPartition, ObservedState, ObservedTopic

ONLINE: dict[str, Any] = dict(
    partition=0,
    leader=2,
    leader_epoch=4,
    replicas=[2, 3, 1],
    isr=[2, 3],
    offline_replicas=[1],
    log_start_offset=10,
    high_watermark=250,
    size_bytes=4096,
    epoch_end_offset=250,
    offsets_by_timestamp={1_790_000_000_000: 40, 1_790_000_100_000: -1},
)
OFFLINE = dict(
    ONLINE, leader=-1, log_start_offset=-1, high_watermark=-1, epoch_end_offset=None, offsets_by_timestamp={}, size_bytes=None
)
LEADER_LEFT = dict(ONLINE, leader=-1)


@pytest.mark.parametrize("values", [ONLINE, OFFLINE, LEADER_LEFT], ids=["online", "offline", "leader-left"])
def test_a_trusted_partition_is_the_validated_one(values):
    trusted, validated = ObservedPartition.from_reader(**values), ObservedPartition(**values)
    assert trusted == validated
    assert trusted.model_dump_json() == validated.model_dump_json()
    assert trusted.model_fields_set == validated.model_fields_set
    assert (trusted.unreadable, trusted.record_count) == (validated.unreadable, validated.record_count)


@pytest.mark.parametrize(
    "bad",
    [
        dict(log_start_offset=300),  # above the high watermark
        dict(log_start_offset=-1),  # -1 on one offset only
        dict(leader=9),  # not a replica
        dict(leader=-1, log_start_offset=-1, high_watermark=-1),  # offline, but with an epoch end offset
    ],
    ids=["start-above-end", "one-unknown", "leader-not-replica", "offline-with-epoch-answer"],
)
def test_what_the_planner_must_not_act_on_is_still_refused(bad):
    with pytest.raises(ValidationError):
        ObservedPartition.from_reader(**dict(ONLINE, **bad))


def test_a_topic_s_partitions_from_the_reader_at_once_are_each_one_s_and_a_bad_one_is_refused():
    rows = [dict(ONLINE, partition=0), dict(OFFLINE, partition=1), dict(LEADER_LEFT, partition=2)]
    together = ObservedPartition.all_from_reader([dict(r) for r in rows])
    assert [p.model_dump_json() for p in together] == [ObservedPartition(**r).model_dump_json() for r in rows]
    assert [list(p.__dict__) for p in together] == [list(ObservedPartition.model_fields)] * 3
    with pytest.raises(ValidationError, match="above the high watermark"):
        ObservedPartition.all_from_reader([dict(r) for r in rows] + [dict(ONLINE, partition=3, log_start_offset=300)])


def test_partitions_whose_offsets_a_plan_did_not_read_keep_their_leader_and_exist_only_in_memory():
    not_read = dict(OFFLINE, leader=2, size_bytes=None)
    rows = [dict(not_read, partition=0), dict(OFFLINE, partition=1)]
    built = ObservedPartition.all_from_reader([dict(r) for r in rows], offsets_read=False)
    assert [(p.leader, p.offsets_not_read, p.unreadable) for p in built] == [
        (2, True, "was not read (its offsets are unknown)"),
        (-1, False, "has no leader (offline)"),
    ]
    # No file (nor any validated state) holds it: the offsets would read as known.
    with pytest.raises(ValidationError, match="only for an offline partition"):
        ObservedPartition(**not_read)
    with pytest.raises(ValidationError, match="not one of the replicas"):
        ObservedPartition.all_from_reader([dict(not_read, leader=9)], offsets_read=False)
    # Offsets given all the same are validated as any others, never taken for unread ones.
    assert ObservedPartition.all_from_reader([dict(ONLINE)], offsets_read=False) == [ObservedPartition(**ONLINE)]


def test_a_trusted_topic_is_the_validated_one_and_partitions_out_of_order_are_refused():
    partitions = [ObservedPartition.from_reader(**dict(ONLINE, partition=i)) for i in range(3)]
    configs = {"retention.ms": ObservedConfig(value="1000", source=ConfigSource.DYNAMIC_TOPIC_CONFIG)}
    values: dict[str, Any] = dict(
        name="orders.v1",
        topic_id="id",
        internal=False,
        partitions=partitions,
        configs=configs,
        authorized_operations=["DELETE", "DESCRIBE"],
    )
    assert ObservedTopic.from_reader(**values) == ObservedTopic(**values)
    with pytest.raises(ValidationError, match="in order"):
        ObservedTopic.from_reader(**dict(values, partitions=partitions[::-1]))


def test_copies_of_trusted_models_do_not_share_their_fields_set():
    one, two = ObservedPartition.from_reader(**ONLINE), ObservedPartition.from_reader(**ONLINE)
    assert one.model_fields_set is two.model_fields_set  # shared: one set per model class, not per model
    copied = one.model_copy(update={"leader": 3})
    assert copied.leader == 3 and one.leader == 2 and two.model_fields_set == set(ObservedPartition.model_fields)


def test_trusted_models_hold_every_field_so_a_new_field_cannot_be_forgotten():
    partition = ObservedPartition.from_reader(**ONLINE)
    topic = ObservedTopic.from_reader(
        name="t", topic_id=None, internal=False, partitions=[partition], configs={}, authorized_operations=None
    )
    view = ObservedState.view_of("c", {"t": topic})
    for model, cls in ((partition, ObservedPartition), (topic, ObservedTopic), (view, ObservedState)):
        assert set(vars(model)) == set(cls.model_fields), cls.__name__
    assert view == ObservedState(cluster="c", topics={"t": topic})
