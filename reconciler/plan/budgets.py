"""Each team's budget against what its topics take of one cluster after a plan (docs/teams.md).
Pure: desired state, observed state and the plan's actions (with their disk figures) in,
diagnostics out; the planner adds them to the plan and apply checks the errors again.

- max_topics and max_partitions (partition replicas: partitions x replication factor) count the
  team's present topics as the manifests declare them, so a plan that deletes a topic frees its
  share and one that creates a topic takes it.
- max_disk: for a team whose topics the plan may add to disk (`adding_teams`), per topic, what its
  partitions hold on every replica now plus what the plan's actions on it add
  (reconciler.plan.capacity): a new topic its `expected_bytes_per_day` x retention x replicas. A
  part not known (a size not read, a topic without expected_bytes_per_day) makes the figure a lower
  bound, said as "at least"; unknown never blocks, as for max_disk_usage. The read sizes only the
  topics of such teams (reconciler.plan.read_scope.estimate_scope), not every partition.
- max_retention and name_prefix hold for each topic of the team: retention.ms as declared, else
  what the cluster gives it (only where cleanup.policy deletes; a compacted topic's size is its
  key space's, counted by max_disk).

The totals are errors above the budget and warnings from WARN_FROM of it, naming the team, its
figure, its budget (and where it is written) and the topics adding most.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from reconciler import kafka_configs
from reconciler.errors import shown_text
from reconciler.models.desired import DesiredState, DesiredTopic, Team, TeamBudget, TopicState
from reconciler.models.observed import ObservedState
from reconciler.models.plan import Action, DeleteTopic, Diagnostic, DiagnosticCode, Severity
from reconciler.plan.capacity import TOP_CONTRIBUTORS, WARN_FROM, may_add
from reconciler.units import human_bytes, human_duration

FIX = "remove or shrink some of its topics, or raise the budget in a reviewed change of the Team document"


@dataclass
class _Figures:
    """One team's topics on one cluster, and what each adds to each total."""

    topics: list[DesiredTopic] = field(default_factory=list)
    disk: dict[str, int] = field(default_factory=dict)  # topic -> bytes, as far as known
    disk_unknown: list[str] = field(default_factory=list)  # topics whose bytes are partly unknown


def sized_topics(desired: DesiredState, actions: Sequence[Action]) -> frozenset[str]:
    """The topics whose partition sizes the disk budgets count for `actions`: every present topic
    of each team with a disk budget that the actions may add to (`adding_teams`)."""
    teams = adding_teams(desired, actions)
    if not teams:
        return frozenset()
    return frozenset(n for n, t in desired.topics.items() if t.owner in teams and t.state is TopicState.PRESENT)


def adding_teams(desired: DesiredState, actions: Sequence[Action]) -> set[str]:
    """The teams with a disk budget whose topics `actions` may add to disk (a figure above 0, or
    unknown for an action that may add: capacity.may_add). Only these are held to max_disk: a plan
    may not take a team over its disk budget, and one that only frees (or does not touch its
    topics) is not blocked by a team already over it, which could not shrink otherwise."""
    budgeted = {name for name, team in desired.teams.items() if team.budget.max_disk_bytes is not None}
    if not budgeted:
        return set()
    found = set()
    for action in actions:
        want = desired.topics.get(action.topic)
        disk = action.disk  # None: the action changes nothing on disk (more partitions for the same traffic)
        if want is None or want.owner not in budgeted or disk is None or not may_add(action):
            continue
        if disk.bytes is None or disk.bytes > 0:
            found.add(want.owner)
    return found


def findings(
    desired: DesiredState, observed: ObservedState, actions: Sequence[Action], inherited: Mapping[str, str]
) -> list[Diagnostic]:
    """Every budget a team goes over (an error) or comes close to (a warning) on this cluster."""
    budgeted = {name: team for name, team in desired.teams.items() if team.budget.sources}
    if not budgeted:
        return []
    figures: dict[str, _Figures] = {name: _Figures() for name in budgeted}
    for topic in desired.topics.values():
        if topic.owner in figures and topic.state is TopicState.PRESENT:
            figures[topic.owner].topics.append(topic)
    found: list[Diagnostic] = []
    disk_teams = adding_teams(desired, actions)
    if disk_teams:
        _disk(desired, observed, actions, {name: figures[name] for name in disk_teams})
    for name, team in sorted(budgeted.items()):
        found += _team(team, figures[name], desired.cluster.name, inherited, name in disk_teams)
    return found


def _disk(desired: DesiredState, observed: ObservedState, actions: Sequence[Action], figures: dict[str, _Figures]) -> None:
    by_topic: dict[str, list[Action]] = {}
    for action in actions:
        if not isinstance(action, DeleteTopic):
            by_topic.setdefault(action.topic, []).append(action)
    for figure in figures.values():
        for topic in figure.topics:
            have = observed.topics.get(topic.name)
            total, known = 0, True
            for p in have.partitions if have is not None else ():  # a plain loop: the fastest way here
                size = p.size_bytes
                if size is None:
                    known = False
                else:
                    total += size * len(p.replicas)
            for action in by_topic.get(topic.name, ()):
                if action.disk is None:
                    continue
                if action.disk.bytes is None:
                    known = False
                else:
                    total += action.disk.bytes
            figure.disk[topic.name] = total
            if not known:
                figure.disk_unknown.append(topic.name)


def _team(team: Team, figure: _Figures, cluster: str, inherited: Mapping[str, str], adds_disk: bool) -> list[Diagnostic]:
    budget = team.budget
    found: list[Diagnostic] = []

    def total(setting: str, limit: int | None, of: Callable[[DesiredTopic], int], shown: Callable[[int], str], what: str) -> None:
        if limit is None:
            return
        exact = _count if shown is _count else lambda n: f"{shown(n)} ({n:,} bytes)"
        count = sum(map(of, figure.topics))
        if count < WARN_FROM * limit:
            return
        each = {t.name: of(t) for t in figure.topics}
        above = count > limit
        unknown = figure.disk_unknown if setting == "max_disk" else []
        top = sorted(((n, name) for name, n in each.items() if n > 0), key=lambda item: (-item[0], item[1]))
        most = ", ".join(f"{name} {shown(n)}" for n, name in top[:TOP_CONTRIBUTORS])
        found.append(
            Diagnostic(
                severity=Severity.ERROR if above else Severity.WARNING,
                code=_CODES[setting],
                message=f"team {shown_text(team.name)} would have {'at least ' if unknown else ''}{exact(count)} {what} "
                f"on cluster {shown_text(cluster)} after this plan, {'above' if above else 'close to'} its budget "
                f"{setting} {exact(limit)} ({count / limit:.0%})"
                + (f"; most from {most}" if most else "")
                + (f"; not known for {', '.join(unknown[:TOP_CONTRIBUTORS])}" if unknown else "")
                + (f"; {FIX}" if above else ""),
                source=budget.sources.get(setting),
                owner=team.name,
            )
        )

    total("max_topics", budget.max_topics, lambda t: 1, _count, "topics")
    total(
        "max_partitions",
        budget.max_partitions,
        lambda t: t.partitions * t.replication_factor,
        _count,
        "partition replicas (partitions x replication factor)",
    )
    total(
        "max_disk",
        budget.max_disk_bytes if adds_disk else None,
        lambda t: figure.disk.get(t.name, 0),
        human_bytes,
        "on disk (all replicas)",
    )
    for topic in figure.topics:
        found += _each(team, topic, cluster, inherited)
    return found


def _each(team: Team, topic: DesiredTopic, cluster: str, inherited: Mapping[str, str]) -> list[Diagnostic]:
    """What one topic of the team breaks on its own: the name prefix, the retention ceiling."""
    budget = team.budget
    found = []

    def named() -> str:  # worded only for a topic that breaks something: most do not
        return f"topic {shown_text(topic.name)} of team {shown_text(team.name)} on cluster {shown_text(cluster)}"

    if budget.name_prefix is not None and not topic.name.startswith(budget.name_prefix):
        found.append(
            _topic_error(
                topic,
                DiagnosticCode.TEAM_NAME_PREFIX,
                f"{named()} does not start with {shown_text(budget.name_prefix)}, the team's name_prefix"
                f"{_at(budget, 'name_prefix')}; rename it or give it another owner",
            )
        )
    ceiling = budget.max_retention_ms
    if ceiling is None:
        return found
    configs = topic.configs
    text = configs.get("retention.ms", inherited.get("retention.ms"))
    kept = int(text) if text is not None else None
    if kept is None or 0 <= kept <= ceiling:
        return found
    if not kafka_configs.cleanup_policy_allows_delete(configs.get("cleanup.policy", inherited.get("cleanup.policy"))):
        return found
    declared = "declared" if "retention.ms" in configs else "inherited from the cluster"
    found.append(
        _topic_error(
            topic,
            DiagnosticCode.TEAM_MAX_RETENTION,
            f"{named()} keeps records for {human_duration(kept)} (retention.ms {kept}, {declared}), above the "
            f"team's max_retention {human_duration(ceiling)}{_at(budget, 'max_retention')}; set "
            f"retention.ms to at most {ceiling}",
        )
    )
    return found


def _topic_error(topic: DesiredTopic, code: str, message: str) -> Diagnostic:
    return Diagnostic(
        severity=Severity.ERROR, code=code, message=message, topic=topic.name, source=topic.source, owner=topic.owner
    )


def _at(budget: TeamBudget, setting: str) -> str:
    where = budget.sources.get(setting)
    return f" (at {where})" if where is not None else ""


def _count(n: int) -> str:
    return f"{n:,}"


_CODES = {
    "max_topics": DiagnosticCode.TEAM_MAX_TOPICS,
    "max_partitions": DiagnosticCode.TEAM_MAX_PARTITIONS,
    "max_disk": DiagnosticCode.TEAM_MAX_DISK,
}


def refusal(desired: DesiredState, now: ObservedState, actions: Sequence[Action], inherited: Mapping[str, str]) -> list[str]:
    """The budget errors a plan's actions have against the manifests and the cluster as they are now (apply)."""
    return [d.message for d in findings(desired, now, actions, inherited) if d.severity is Severity.ERROR]
