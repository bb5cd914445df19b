"""The evidence of idleness, pure (reconciler.models.idle): unknown is never idle, and what apply
names when the topic moved since the plan."""

from __future__ import annotations

from reconciler.models.idle import GroupActivity, PartitionActivity, TopicActivity, changes_since

DAY = 86_400_000
NOW = 1_790_000_000_000


def activity(*partitions: tuple[int | None, int], groups=(), unknown=()) -> TopicActivity:
    return TopicActivity(
        topic="t",
        read_at_ms=NOW,
        partitions=[
            PartitionActivity(partition=i, newest_timestamp=ts, newest_offset=None if ts is None else 0, high_watermark=hw)
            for i, (ts, hw) in enumerate(partitions)
        ],
        groups=list(groups),
        unknown=list(unknown),
    )


def test_idle_only_when_every_figure_is_known_and_old_enough():
    assert activity((NOW - 40 * DAY, 5), (-1, 0)).not_idle(30 * DAY) == []  # an empty partition beside old records
    assert activity((NOW - 20 * DAY, 5)).not_idle(30 * DAY)[0].startswith("partition 0 holds a record stamped")
    unknown = activity((NOW - 40 * DAY, 5), unknown=["broker 1 speaks ListOffsets up to v6"])
    assert unknown.not_idle(30 * DAY) == ["not known: broker 1 speaks ListOffsets up to v6"]
    live = activity((NOW - 40 * DAY, 5), groups=[GroupActivity(group="g", state="Stable", committed={0: 5})])
    assert live.not_idle(30 * DAY) == ["group g has live members (state Stable) and committed offsets on it"]
    # -1 is an empty partition's answer; beside records it says nothing of their age.
    assert activity((-1, 4)).not_idle(DAY) == [
        "not known: partition 0 holds records (offsets 0 to 4) but MAX_TIMESTAMP gave no timestamp for them"
    ]
    # A topic holding no record shows nothing of since when; an observation that old showing it so does.
    empty = activity((-1, 0), (-1, 0))
    assert empty.not_idle(30 * DAY)[0].startswith("not known: no partition holds a record, and Kafka does not say since when")
    month_ago = empty.model_copy(update={"read_at_ms": NOW - 31 * DAY})
    assert empty.not_idle(30 * DAY, month_ago) == []
    assert empty.not_idle(30 * DAY, month_ago.model_copy(update={"read_at_ms": NOW - 29 * DAY}))
    # A group whose state could not be read counts as live.
    assert activity((-1, 0), groups=[GroupActivity(group="g", committed={0: 1})]).not_idle(DAY)


def test_changes_since_the_plan_name_the_record_the_offsets_and_the_group():
    planned = activity((NOW - 40 * DAY, 5), (-1, 0), groups=[GroupActivity(group="g", state="Empty", committed={0: 5})])
    assert changes_since(planned, planned) == []
    now = activity(
        (NOW - DAY, 6),
        (-1, 3),
        groups=[
            GroupActivity(group="g", state="Empty", committed={0: 6}),
            GroupActivity(group="h", state="Empty", committed={1: 1}),
        ],
    )
    moved = changes_since(planned, now)
    assert moved[0].startswith("a record was produced on partition 0 stamped ")
    assert moved[1] == (
        "records were produced on partition 1 since the plan (high watermark 0 -> 3), with timestamps no newer than what it saw"
    )
    assert moved[2:] == [
        "group g committed offsets on partition(s) 0 at offset 6 since the plan",
        "group h committed offsets on partition(s) 1 at offset 1 since the plan",
    ]
    assert changes_since(planned, activity((NOW - 40 * DAY, 5), (-1, 0), unknown=["x"])) == [
        "its activity cannot be read again: x"
    ]
