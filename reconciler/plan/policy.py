"""Client-side topic policy, in the spirit of KIP-170's TopicManagementPolicy.

Checked when manifests are loaded (so `reconcile validate` catches violations offline) and
consulted by the planner for protection. The broker may enforce its own policy on top; its
verdict arrives through validate_only requests.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from reconciler.errors import ManifestProblem, shown, shown_text
from reconciler.kafka_configs import same_config_value
from reconciler.models.desired import DesiredState, DesiredTopic, Policy, SourceRef, TopicState
from reconciler.models.observed import INTERNAL_PREFIX
from reconciler.models.plan import Action


def is_protected(desired: DesiredState, topic_name: str) -> bool:
    """Protected topics are never deleted or truncated, whatever the manifests say elsewhere."""
    topic = desired.topics.get(topic_name)
    if topic is not None and topic.protected:
        return True
    return any(re.search(pattern, topic_name) for pattern in desired.policy.protected_topic_patterns)


def idle_guard(desired: DesiredState, topic_name: str) -> int | None:
    """How long the topic must have been idle to be deleted (docs/idle-topics.md): the longer of
    its own delete_only_if_idle_for and the policy's deletions_require_idle_for; None: unguarded."""
    topic = desired.topics.get(topic_name)
    own = topic.delete_only_if_idle_for_ms if topic is not None else None
    required = desired.policy.deletions_require_idle_for_ms
    return own if required is None else required if own is None else max(own, required)


def never_idle(desired: DesiredState, topic_name: str, internal: bool, exclude: Sequence[str] = ()) -> bool:
    """Whether the topic is never called idle (docs/idle-topics.md): internal (`internal`, Kafka's
    flag, or the `__` prefix), ignored by the Cluster document, matched by the Policy's
    idle_exempt_topics (dead-letter and retry topics: often empty, still needed) or `exclude`, or
    declared absent already (its deletion is a pending change, or kept by its guard)."""
    if internal or topic_name.startswith(INTERNAL_PREFIX):
        return True
    topic = desired.topics.get(topic_name)
    if topic is not None and topic.state is TopicState.ABSENT:
        return True
    patterns = (*desired.cluster.ignore_topics, *desired.policy.idle_exempt_topics, *exclude)
    return any(re.search(pattern, topic_name) for pattern in patterns)


def destructive_excess(actions: Sequence[Action], policy: Policy) -> str | None:
    """Why a plan holds more actions that delete data for good (`Action.destructive`: topic
    deletions, truncations, config changes that cut retention) than the policy's
    max_destructive_actions allows, or None. The planner makes it a plan error; apply refuses it."""
    limit = policy.max_destructive_actions
    # a config change is destructive exactly when it cuts retention (AlterConfigs' own rule)
    destructive = Counter(
        a.kind.facts.label if a.kind.facts.destructive else f"{a.kind.facts.label} that cut retention"
        for a in actions
        if a.destructive
    )
    count = sum(destructive.values())
    if limit is None or count <= limit:
        return None
    kinds = ", ".join(f"{label} {n}" for label, n in sorted(destructive.items()))
    return (
        f"the plan has {count} destructive actions ({kinds}), more than the policy's max_destructive_actions "
        f"{limit}; split the change into smaller pull requests, or raise the limit in its own reviewed change"
    )


def check_desired(desired: DesiredState) -> list[ManifestProblem]:
    """Every policy violation in one cluster's desired state, each pointing at the topic's line."""
    return [
        _problem(desired.topics[name].source or desired.policy.source, name, desired.cluster.name, reason)
        for name, reasons in violations(desired).items()
        for reason in reasons
    ]


def violations(desired: DesiredState) -> dict[str, list[str]]:
    """Each topic that breaks the policy, with what it breaks, worded to follow "topic NAME on
    cluster NAME" ("has 48 partitions, above the policy's max_partitions 12 (policy)")."""
    found: dict[str, list[str]] = {}
    # Worked out once, not per topic: the policy's lists may be long.
    allowed = desired.policy.allowed_replication_factors
    allowed_set = frozenset(allowed) if allowed is not None else None
    allowed_text = shown(sorted(allowed_set)) if allowed_set is not None else ""
    policy = desired.policy
    # Without a rule on a topic's shape, a present topic can only break the policy with truncation
    # rules while protected: most topics need no look.
    shaped = bool(
        policy.topic_name_pattern
        or policy.min_partitions is not None
        or policy.max_partitions is not None
        or allowed_set is not None
        or policy.required_configs
        or policy.require_owner
    )
    patterns = bool(policy.protected_topic_patterns)
    for topic in desired.topics.values():
        if not shaped and topic.state is TopicState.PRESENT and not (topic.truncate and (topic.protected or patterns)):
            continue
        reasons = _violations(desired, topic, allowed_set, allowed_text)
        if reasons:
            found[topic.name] = [f"{reason} (policy)" for reason in reasons]
    return found


def _violations(desired: DesiredState, topic: DesiredTopic, allowed: frozenset | None, allowed_text: str) -> list[str]:
    policy = desired.policy
    found = []
    if topic.state is TopicState.ABSENT:
        if is_protected(desired, topic.name):
            found.append(
                "is protected and cannot be marked state: absent; remove the protection first, in a separate reviewed change"
            )
        return found
    if policy.topic_name_pattern and not re.fullmatch(policy.topic_name_pattern, topic.name):
        found.append(f"name does not match the policy's topic_name_pattern {shown(policy.topic_name_pattern)}")
    if policy.min_partitions is not None and topic.partitions < policy.min_partitions:
        found.append(f"has {topic.partitions} partitions, below the policy's min_partitions {policy.min_partitions}")
    if policy.max_partitions is not None and topic.partitions > policy.max_partitions:
        found.append(f"has {topic.partitions} partitions, above the policy's max_partitions {policy.max_partitions}")
    if allowed is not None and topic.replication_factor not in allowed:
        found.append(
            f"replication_factor {topic.replication_factor} is not one of the policy's allowed_replication_factors {allowed_text}"
        )
    for key, required in sorted(policy.required_configs.items()):
        value = topic.configs.get(key)
        if value is None:
            found.append(
                f"must set config {key}" + (f" (to {required})" if required is not None else "") + ", the policy requires it"
            )
        elif required is not None and not same_config_value(key, value, required):
            found.append(f"sets {key}={shown_text(value)}, the policy requires {key}={shown_text(required)}")
    if topic.truncate and is_protected(desired, topic.name):
        found.append("is protected and must not have truncation rules")
    if policy.require_owner and topic.owner is None:
        found.append(
            "has no owner, and the policy's require_owner says every topic must: set `owner:` on it (or its template), "
            "or add it to a Team's topics (docs/teams.md)"
        )
    return found


def _problem(source: SourceRef | None, topic: str, cluster: str, message: str) -> ManifestProblem:
    file, line, column = (source.file, source.line, source.column) if source else ("(policy)", 0, 0)
    return ManifestProblem(file, line, column, f"topic {shown_text(topic)} on cluster {shown_text(cluster)} {message}")
