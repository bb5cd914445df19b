"""Renderers: the saved-plan round trip, what a reviewer must always see, and what must never show."""

from __future__ import annotations

import json

import pytest

from reconciler.errors import SnapshotError
from reconciler.files.saved_plan import load_plan_json
from reconciler.models.desired import KeepLast
from reconciler.models.observed import ConfigSource, ObservedConfig
from reconciler.models.plan import AlterConfigs, ConfigChange, Plan, TopicPreconditions
from reconciler.models.result import ActionOutcome, ApplyResult, PartitionOutcome, Status
from reconciler.plan.planner import plan
from reconciler.render import render_apply_result, render_plan
from reconciler.render.markdown import COMMENT_LIMIT
from tests.factories import desired, have, observed, want


def _busy_plan(partitions: int = 3) -> Plan:
    return plan(
        desired(
            want("new.topic", configs={"retention.ms": "604800000"}),
            want("old.topic", partitions=partitions, truncate=[KeepLast(records=10)], configs={"retention.bytes": "1073741824"}),
        ),
        observed(have("old.topic", partitions=partitions, hw=100, set_on_topic={"retention.bytes": "5"}), have("stray.topic")),
    )


def test_json_round_trip_is_exact_and_carries_derived_figures():
    original = _busy_plan()
    text = render_plan(original, "json")
    data = json.loads(text)
    assert data["format_version"] == 1 and data["summary"]["records_to_delete"] == 270
    truncate = next(a for a in data["actions"] if a["kind"] == "truncate")
    assert truncate["records_to_delete"] == 270 and truncate["partitions"][0]["records_to_delete"] == 90
    assert load_plan_json(text) == original


@pytest.mark.parametrize(
    "text, message",
    [
        ("{not json", "plan.json:1:2: not JSON"),
        ('{"hello": 1}', "is not a saved plan"),
        ('{"format_version": 99, "actions": []}', "format version 99"),
        ('{"format_version": 1, "cluster": "c", "actions": [{"kind": "truncate", "topic": "t"}]}', "not a valid saved plan"),
    ],
)
def test_bad_saved_plans_are_refused_with_a_reason(text, message):
    with pytest.raises(SnapshotError, match=message) as raised:
        load_plan_json(text, origin="plan.json")
    assert "plan.json" in str(raised.value)


def test_text_shows_symbols_human_values_destructive_marker_and_summary():
    text = render_plan(_busy_plan(), "text")
    assert "+ create topic new.topic" in text and "604800000 (7d)" in text
    assert "~ alter configs of old.topic" in text and "1073741824 (1.0 GiB)" in text
    assert "x truncate old.topic: delete 270 records in 3 partitions" in text and "DESTRUCTIVE" in text
    assert "Unmanaged topics (in no manifest, never touched): stray.topic" in text
    assert text.rstrip().endswith(
        "Plan: 1 to create, 1 to change, 1 to truncate (270 records), 0 to delete. 0 errors, 0 warnings."
    )


def test_colour_only_when_asked():
    assert "\033[" not in render_plan(_busy_plan(), "text")
    assert "\033[31;1mx\033[0m" in render_plan(_busy_plan(), "text", color=True)


def test_sensitive_values_never_rendered():
    secret = "hunter2-do-not-print"
    action = AlterConfigs(
        topic="t",
        preconditions=TopicPreconditions(exists=True),
        changes=[ConfigChange(key="some.password", op="set", before=secret, after=secret, sensitive=True)],
    )
    result = Plan(cluster="c", actions=[action])
    for fmt in ("text", "markdown"):
        rendered = render_plan(result, fmt)
        assert secret not in rendered and "(sensitive)" in rendered


def test_sensitive_topic_config_from_the_cluster_is_redacted_end_to_end():
    state = observed(have("t", set_on_topic={"retention.ms": "1"}))
    topic = state.topics["t"]
    configs = dict(
        topic.configs,
        **{"message.format.version": ObservedConfig(value=None, source=ConfigSource.DYNAMIC_TOPIC_CONFIG, sensitive=True)},
    )
    state = state.model_copy(update={"topics": {"t": topic.model_copy(update={"configs": configs})}})
    rendered = render_plan(plan(desired(want("t", configs={"retention.ms": "2"})), state), "text")
    assert "message.format.version=(sensitive) is set on the topic" in rendered and "None" not in rendered


def test_markdown_puts_summary_first_and_destructive_changes_before_the_rest():
    md = render_plan(_busy_plan(), "markdown")
    lines = md.splitlines()
    assert lines[0] == "### Plan for `test`" and lines[2].startswith("**Plan: 1 to create")
    assert md.index("[!CAUTION]") < md.index("| `+` | create topic")
    assert md.index("| `x` | truncate") < md.index("| `+` | create topic")
    assert "<details><summary>truncate old.topic" in md


def test_markdown_fits_a_pull_request_comment():
    md = render_plan(_busy_plan(partitions=4000), "markdown")
    assert len(md) <= COMMENT_LIMIT + 200 and "Per-partition details left out" in md
    assert "delete 360,000 records" in md


def test_apply_result_in_every_format():
    follow_up = Plan(cluster="c")
    result = ApplyResult(
        cluster="c",
        follow_up=follow_up,
        outcomes=[
            ActionOutcome(kind="create_topic", topic="a", status=Status.APPLIED),
            ActionOutcome(
                kind="truncate",
                topic="b",
                status=Status.REFUSED,
                message="log diverged on 1 partition",
                partitions=[
                    PartitionOutcome(partition=0, status=Status.APPLIED, target_offset=50, low_watermark=50),
                    PartitionOutcome(
                        partition=1, status=Status.REFUSED, target_offset=70, message="epoch 4 ends at 60, below the target 70"
                    ),
                ],
            ),
        ],
    )
    text = render_apply_result(result, "text")
    assert "REFUSED" in text and "partition 1: REFUSED (target 70) - epoch 4 ends at 60" in text
    assert "Result: 1 applied, 0 already satisfied, 1 refused, 0 failed." in text
    assert "Converged: planning again shows no changes." in text
    data = json.loads(render_apply_result(result, "json"))
    assert data["succeeded"] is False and data["converged"] is True
    assert data["outcomes"][1]["partitions"][1]["status"] == "refused"
    md = render_apply_result(result, "markdown")
    assert "| REFUSED | truncate | `b` |" in md and "| 1 | REFUSED | 70 |" in md


def test_every_markdown_table_escapes_a_pipe_the_same_way():
    from reconciler.drift.per_cluster import drift_for_cluster, report_of
    from reconciler.drift.render import render_report

    failed = ApplyResult(
        cluster="c", outcomes=[ActionOutcome(kind="alter_configs", topic="a", status=Status.FAILED, message="x | y\nz")]
    )
    assert "| FAILED | alter configs | `a` | x \\| y z |" in render_apply_result(failed, "markdown")
    state = observed(have("t", set_on_topic={"retention.ms": "1|2"}))
    wanted = desired(want("t", configs={"retention.ms": "3"}))
    assert "| `retention.ms` | 1\\|2 (DYNAMIC_TOPIC_CONFIG) | 3 |" in render_plan(plan(wanted, state), "markdown")
    drift = render_report(report_of([drift_for_cluster(wanted, state)], "local"), "markdown")
    assert "| t | retention.ms | differs | 1\\|2 | set on topic | 3 |" in drift
