"""A saved plan bound to the meaning of the manifests it was made from. Pure: no I/O.

The digest is taken over the cluster's *resolved* desired state in a canonical form, so that
only what the planner and apply act on counts: comments, key order, quoting, units (`1d` and
86400000), splitting documents over files and other clusters' documents do not. Left out on
purpose: manifest positions, and the connection settings (bootstrap_servers, security, labels),
which say how to reach the cluster, not what it should hold; which cluster answers is the
`cluster_id` pin's job, and that is part of the meaning. Lists whose order means nothing are sorted.

A topic's fields are kept only where they differ from the default, which keeps the state a plan
records to about 100 bytes per topic; the cluster's and the policy's are kept whole, so that a
difference there reads "reviewed null, now 0.5".
"""

from __future__ import annotations

import hashlib
import json
from datetime import timezone
from typing import Any

from pydantic import TypeAdapter

from reconciler.errors import problem_report, shown_text
from reconciler.models.desired import BeforeTime, DesiredState, DesiredTopic, TruncationRule
from reconciler.models.plan import ManifestBinding, Plan

DIGEST_PREFIX = "sha256:"
# Said at the end of every refusal: a plan is applied only as it was reviewed.
PLAN_AGAIN = "Nothing was written. Plan again and have the new plan reviewed."
# How many differences a refusal lists before it says how many more there are.
MAX_LISTED = 20

_NOT_MEANING = {"source", "bootstrap_servers", "security", "labels"}
_SETS = {("cluster", "ignore_topics"), ("policy", "protected_topic_patterns"), ("policy", "allowed_replication_factors")}


def canonical_desired(desired: DesiredState) -> dict[str, Any]:
    """The meaning of the manifests for one cluster, as JSON data."""
    topics = list(desired.topics.values())
    data: dict[str, Any] = {
        "cluster": desired.cluster.model_dump(mode="json", exclude=_NOT_MEANING),
        "policy": desired.policy.model_dump(mode="json", exclude={"source", "sources"}),
        "topics": dict(zip(desired.topics, _TOPICS.dump_python(topics, mode="json", **_TOPIC_DUMP), strict=True)),
    }
    for topic, dumped in zip(topics, data["topics"].values(), strict=True):
        dumped["partitions"], dumped["replication_factor"] = topic.partitions, topic.replication_factor
        if topic.truncate:
            dumped["truncate"] = [_rule(rule) for rule in topic.truncate]
    for part, key in _SETS:
        if data[part][key] is not None:
            data[part][key] = sorted(set(data[part][key]))
    for key in ("max_delete_fraction", "max_retention_decrease", "max_disk_usage"):  # 1 and 1.0 are one limit
        if data["policy"][key] is not None:
            data["policy"][key] = float(data["policy"][key])
    if data["policy"]["max_disk_usage"] is None:
        del data["policy"]["max_disk_usage"]  # plans bound before the setting existed stay bound
    if not data["policy"]["require_owner"]:
        del data["policy"]["require_owner"]  # the same
    if desired.teams:  # who reviews and each team's budget: apply checks the budgets again
        data["teams"] = {name: team.model_dump(mode="json", exclude={"source"}) for name, team in desired.teams.items()}
        for team in data["teams"].values():
            del team["budget"]["sources"]
    return data


# Every topic in one call of pydantic-core: a call per topic costs a fifth of planning 10,000 of them.
_TOPICS = TypeAdapter(list[DesiredTopic])
_TOPIC_DUMP: dict[str, Any] = {"exclude": {"__all__": {"name", "source", "truncate"}}, "exclude_defaults": True}


def _rule(rule: TruncationRule) -> dict[str, Any]:
    # A shared rule's name only says where it was written: inlined, it means the same.
    data = rule.model_dump(mode="json", exclude={"name", "source"})
    if isinstance(rule, BeforeTime):  # one instant, whatever offset it was written with
        data["timestamp"] = rule.timestamp.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")
    return data


def digest_of(canonical: dict[str, Any]) -> str:
    """sha256 of the canonical JSON text: sorted keys, no blanks, UTF-8."""
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return DIGEST_PREFIX + hashlib.sha256(text.encode("utf-8")).hexdigest()


def bind(desired: DesiredState, commit: str | None = None) -> ManifestBinding:
    canonical = canonical_desired(desired)
    return ManifestBinding(digest=digest_of(canonical), commit=commit, desired=canonical)


def binding_refusal(saved: Plan, origin: str, desired: DesiredState, manifests_dir: str, commit: str | None = None) -> str | None:
    """Why the saved plan in `origin` must not be applied with the manifests as they are now
    (`desired`, from `manifests_dir` at `commit`), or None when they mean what was reviewed."""
    binding = saved.manifests
    if binding is None:
        return (
            f"{origin} records no digest of the manifests it was planned from (it was saved by an earlier "
            f"version of reconcile), so it cannot be shown to be the plan that was reviewed. {PLAN_AGAIN}"
        )
    if digest_of(binding.desired) != binding.digest:
        return (
            f"{origin} was edited or damaged: its manifests digest {shown_text(binding.digest, 80)} does not match "
            f"the desired state it records, so what was reviewed is not known. {PLAN_AGAIN}"
        )
    current = canonical_desired(desired)
    if digest_of(current) == binding.digest:
        return None
    differences = differences_between(binding.desired, current)
    reviewed_at = f" at commit {binding.commit}" if binding.commit else ""
    now_at = f" (now at commit {commit})" if commit and commit != binding.commit else ""
    head = (
        f"{origin} was reviewed for other manifests: the manifests in {manifests_dir}{now_at} mean something "
        f"else for cluster {saved.cluster} than those it was planned from{reviewed_at} "
        f"({len(differences):,} difference{'s' if len(differences) != 1 else ''}, below). {PLAN_AGAIN}"
    )
    return problem_report(head, len(differences), differences[:MAX_LISTED])


def differences_between(reviewed: dict[str, Any], current: dict[str, Any]) -> list[str]:
    """Each difference between two canonical desired states, as `what: reviewed X, now Y`; a list
    that differs is shown whole."""
    from deepdiff import DeepDiff  # imported when a plan is refused, not when the CLI starts

    found = set()
    for report in DeepDiff(reviewed, current, view="tree").values():
        for level in report:
            path = level.path(output_format="list")
            cut = next((i for i, p in enumerate(path) if isinstance(p, int)), len(path))
            path = path[:cut]
            found.add(f"{_where(path)}: reviewed {_value(reviewed, path)}, now {_value(current, path)}")
    return sorted(found)


def _where(path: list[Any]) -> str:
    """`topic orders.v1, configs.retention.ms`, `policy, max_delete_fraction`, `cluster, cluster_id`."""
    if path[:1] == ["topics"] and len(path) > 1:
        name, rest = path[1], path[2:]
        return f"topic {shown_text(str(name))}" + (", " + ".".join(rest) if rest else "")
    return f"{path[0]}, " + ".".join(path[1:]) if len(path) > 1 else ".".join(path)


def _value(data: Any, path: list[str]) -> str:
    for depth, key in enumerate(path):
        if not isinstance(data, dict) or key not in data:
            # a topic's field left at its default is not recorded (see the module's docstring)
            return "(default)" if path[0] == "topics" and depth == 2 else "(not declared)"
        data = data[key]
    return shown_text(json.dumps(data, sort_keys=True, ensure_ascii=False), 120)
