"""The apply workflow's job summary: per reviewed action, what the plan said and what apply did."""

from __future__ import annotations

from reconciler.models.desired import KeepLast
from reconciler.models.plan import ActionKind, Plan
from reconciler.models.result import ActionOutcome, ApplyResult, Status
from reconciler.plan.planner import plan
from reconciler.render.review import review_markdown
from tests.factories import desired, have, observed, want


def _reviewed() -> Plan:
    return plan(
        desired(
            want("new.topic", configs={"retention.ms": "604800000"}),
            want("old.topic", truncate=[KeepLast(records=10)], configs={"retention.bytes": "1073741824"}),
        ),
        observed(have("old.topic", hw=100, set_on_topic={"retention.bytes": "5"})),
    )


def _rows(markdown: str) -> list[str]:
    return [line for line in markdown.splitlines() if line.startswith("| `")]


def test_each_reviewed_action_is_shown_next_to_its_outcome():
    reviewed = _reviewed()
    kinds = [(a.kind, a.topic) for a in reviewed.actions]
    assert kinds == [
        (ActionKind.CREATE_TOPIC, "new.topic"),
        (ActionKind.ALTER_CONFIGS, "old.topic"),
        (ActionKind.TRUNCATE, "old.topic"),
    ]
    result = ApplyResult(
        cluster=reviewed.cluster,
        outcomes=[  # apply's order, not the plan's
            ActionOutcome(kind=ActionKind.TRUNCATE, topic="old.topic", status=Status.REFUSED, message="topic was recreated"),
            ActionOutcome(kind=ActionKind.CREATE_TOPIC, topic="new.topic", status=Status.APPLIED, message="created"),
        ],
    )
    assert _rows(review_markdown(reviewed, result)) == [
        "| `+` | create topic | `new.topic` | 3 partitions, replication factor 3 | applied: created |",
        "| `~` | alter configs | `old.topic` | retention.bytes | not sent |",
        "| `x` | truncate | `old.topic` | delete 270 records | REFUSED: topic was recreated |",
    ]


def test_nothing_written_says_so_on_every_action():
    markdown = review_markdown(_reviewed(), None)
    assert [row.rsplit("|", 2)[1].strip() for row in _rows(markdown)] == ["not applied: nothing was written"] * 3


def test_an_outcome_the_reviewed_plan_does_not_hold_is_called_out():
    reviewed = _reviewed()
    stray = ActionOutcome(kind=ActionKind.DELETE_TOPIC, topic="other.topic", status=Status.APPLIED, message="deleted")
    markdown = review_markdown(reviewed, ApplyResult(cluster=reviewed.cluster, outcomes=[stray]))
    assert "| | delete topic | `other.topic` | **not in the reviewed plan** | applied: deleted |" in markdown
