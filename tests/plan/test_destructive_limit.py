"""The policy's max_destructive_actions: a plan with more actions that delete data for good (topic
deletions, truncations, config changes that cut retention) than the limit is a plan error naming
the limit and the count; up to the limit, nothing is said."""

from __future__ import annotations

from reconciler.models.desired import BeforeOffset, Policy, SourceRef, TopicState
from reconciler.models.plan import DiagnosticCode, Severity
from reconciler.plan.planner import plan
from reconciler.plan.policy import destructive_excess
from tests.factories import desired, have, observed, want

DAY_MS = 86_400_000
AT = SourceRef(file="policy.yaml", line=2, column=1)


def _state(limit: int | None):
    """Two topic deletions, one truncation, one retention cut (30d -> 1d) and one create: four destructive."""
    topics = (
        want("gone.a", state=TopicState.ABSENT),
        want("gone.b", state=TopicState.ABSENT),
        want("cut.me", truncate=[BeforeOffset(offset=50)]),
        want("shorter", configs={"retention.ms": str(DAY_MS)}),
        want("fresh"),
    )
    live = observed(
        have("gone.a"), have("gone.b"), have("cut.me"), have("shorter", set_on_topic={"retention.ms": str(30 * DAY_MS)})
    )
    return desired(*topics, policy=Policy(max_destructive_actions=limit, source=AT)), live


def test_more_destructive_actions_than_the_limit_is_a_plan_error_naming_both():
    wanted, live = _state(limit=3)
    result = plan(wanted, live)
    assert sum(a.destructive for a in result.actions) == 4 and len(result.actions) == 5
    [error] = [d for d in result.diagnostics if d.code == DiagnosticCode.POLICY_MAX_DESTRUCTIVE_ACTIONS]
    assert error.severity is Severity.ERROR and result.has_errors
    assert error.topic is None and error.source == AT
    assert error.message == (
        "the plan has 4 destructive actions (alter configs that cut retention 1, delete topic 2, truncate 1), more "
        "than the policy's max_destructive_actions 3; split the change into smaller pull requests, or raise the "
        "limit in its own reviewed change"
    )


def test_up_to_the_limit_or_without_one_nothing_is_said():
    for limit in (4, 100, None):
        wanted, live = _state(limit)
        result = plan(wanted, live)
        assert not [d for d in result.diagnostics if d.code == DiagnosticCode.POLICY_MAX_DESTRUCTIVE_ACTIONS], limit


def test_the_rule_counts_what_the_actions_say_is_destructive():
    wanted, live = _state(limit=None)
    actions = plan(wanted, live).actions
    assert destructive_excess(actions, Policy(max_destructive_actions=4)) is None
    assert "the plan has 4 destructive actions" in (destructive_excess(actions, Policy(max_destructive_actions=1)) or "")
    creates_only = [a for a in actions if not a.destructive]
    assert destructive_excess(creates_only, Policy(max_destructive_actions=1)) is None
