"""The local engine's columnar pass: most of a fleet's topics are planned and classified once
per shape, not once each. Pure (the snapshots are already read, as columns).

A topic is *quiet* when its columns show that nothing but its configs and its partition count can
give it a finding: it is declared (present, without pinned replicas), has no more partitions than
declared (fewer: the plan adds them, from the two counts alone), every partition's replica count
is the declared replication factor and none sits on a drained broker, every partition has a
leader, its preferred (first) replica; and against the earlier snapshot (when there is one) the
topic was there under the same id, with the same replicas and leaders, and no high watermark went
back. What the planner and the classification then find for it depends only on its *shape*: the
manifest's topic (all but its name and the sources), its partition count, whether it is
protected, its configs and authorized operations as read, and its configs in the earlier
snapshot. Its in-sync replicas are not in its shape: only its replica problems
(`compute.replica_problems`: an under-replicated partition) read them, neither the plan of a topic
whose replicas stay nor any other finding, so a quiet topic with fewer in sync than replicas has
those problems read off its own model and the rest from its shape. So quiet topics are grouped
by shape and each shape's first topic, one in sync where the shape has one (its representative),
goes through the full path (`compute.cluster_topics`, the whole planner); the others of its shape
get the representative's findings under their own name when those are name-free: no plan
diagnostic (their messages name the topic), no action but config pins (a declared key whose
inherited value equals the declared one: no retention effect, so no partition is read) and
partitions added, nothing on partitions. A shape whose findings are not name-free has
all its topics planned; where only what their own plan shows can differ (a truncation's targets
and a retention cut's estimate read each topic's partitions), each is classified as its
representative, with its own pending changes, truncation, diagnostics and replica problems
(`_retelling`), else in full.

Every topic that is not quiet is planned in full, as are the topics that decide what a topic
inherits (the planner reads the first topics, by name, holding each key of
`planner.READ_OFF_OTHER_TOPICS` with each config source: those are planned in any case, so the
planner sees the same inherited values). A topic whose replicas must move (a drained broker, another
replication factor, pinned replicas) is not quiet; the placement weighs every topic's replicas, so
each plan here is given the replicas of the topics it leaves out (`plan`'s `elsewhere`) and places
the moving topics, in name order, as the whole cluster's plan does. A cluster whose snapshots
cannot be proven good as columns is read and planned whole (`engine.run_local`).

tests/drift/test_quiet.py checks the pass against the full path, topic by topic, on the
benchmark's fleets and on hand-made clusters with every kind of finding.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from itertools import pairwise
from operator import itemgetter
from typing import Any

from reconciler.drift.compute import cluster_topics, plan_diagnostics, planned_findings, replica_problems
from reconciler.drift.model import ConfigDrift, ReplicaProblem, TopicDrift
from reconciler.files.snapshot_columns import SnapshotColumns
from reconciler.models.desired import DesiredState, DesiredTopic, TopicState
from reconciler.models.observed import ObservedState, ObservedTopic
from reconciler.models.plan import Action, AddPartitions, AlterConfigs, Diagnostic, DiagnosticCode, Plan, TruncateRecords
from reconciler.models.trusted import trusted_copier
from reconciler.plan.planner import READ_OFF_OTHER_TOPICS, PlanOptions, plan, unmanaged_topics
from reconciler.plan.policy import is_protected


def columnar_topics(
    desired: DesiredState, now: SnapshotColumns, earlier: SnapshotColumns | None, options: PlanOptions = PlanOptions()
) -> list[TopicDrift]:
    """Every topic's findings, as `compute.cluster_topics` gives them on the whole cluster."""
    shapes, full = _quiet(desired, now, earlier)
    witnesses = _inheritance_witnesses(now)
    full |= witnesses
    short = _short_of_sync(now)
    representatives = {}
    for key, rows in shapes.items():
        # The topics in sync first: a representative out of sync has replica problems of its own,
        # which would have its shape's topics planned and classified in full.
        shapes[key] = rows = sorted((r for r in rows if r not in full), key=short.__contains__)
        if rows:
            representatives[rows[0]] = key
    topics, first_plan, models = _planned(desired, now, earlier, full | set(representatives), options, every=True)
    by_name = {t.topic: t for t in topics}
    names, starts = now.names, now.starts.tolist()
    again: set[int] = set()
    retold: dict[int, _Retelling] = {}
    renamed = []
    for row, key in representatives.items():
        name, members = now.names[row], [now.names[r] for r in shapes[key][1:]]
        template = by_name[name]
        if not members:
            continue
        if not name_free(template, first_plan, name):
            again.update(shapes[key][1:])
            retelling = _retelling(template, first_plan, name)
            if retelling is not None:
                retold.update(dict.fromkeys(shapes[key][1:], retelling))
            continue
        # Whether a member is unmanaged is the planner's own rule on its name (and on the
        # `internal` flag, which the shape holds): asked of a view holding the representative under each name.
        view = ObservedState.view_of(now.state.cluster, dict.fromkeys(members, models[name]))
        renamed.append((renamer(template), shapes[key][1:], set(unmanaged_topics(desired, view, options))))
    problems = _replica_problems_of(now, [r for _, rows, _ in renamed for r in rows if r in short])
    for make, rows, unmanaged in renamed:
        topics += [make(names[r], starts[r + 1] - starts[r], names[r] in unmanaged, problems.get(r)) for r in rows]
    if again:
        wanted = {now.names[r] for r in again}
        rest, _, _ = _planned(desired, now, earlier, again | witnesses, options, every=False, retold=retold)
        topics += [t for t in rest if t.topic in wanted]
    return topics


def _planned(
    desired: DesiredState,
    now: SnapshotColumns,
    earlier: SnapshotColumns | None,
    rows: set[int],
    options: PlanOptions,
    every: bool,
    retold: Mapping[int, _Retelling] | None = None,
) -> tuple[list[TopicDrift], Plan, dict[str, ObservedTopic]]:
    """The full path on the topics in `rows`; `every`: also every topic not in `now`'s rows
    (declared and not read, or only in `earlier`: deleted). `retold`: rows planned here whose
    findings are their shape's template's but for what their own plan shows (`_retelling`),
    classified in full only where their plan differs from the template's in more."""
    names = {now.names[r] for r in rows}
    read = set(now.names)
    topics = now.topics(sorted(rows))
    observed = now.with_topics(topics)
    declared = {n: t for n, t in desired.topics.items() if n in names or (every and n not in read)}
    restricted = desired.model_copy(update={"topics": declared})
    cluster_plan = plan(restricted, observed, options, elsewhere=lambda: _replicas(now, rows), disk=False)
    found = _retold(cluster_plan, now, topics, retold) if retold else {}
    if found:  # the others are classified: the plan is the same, the topics retold left out
        names -= found.keys()
        restricted = desired.model_copy(update={"topics": {n: t for n, t in declared.items() if n not in found}})
        observed = now.with_topics({n: t for n, t in topics.items() if n not in found})
    before = None
    if earlier is not None:
        index = {n: i for i, n in enumerate(earlier.names)}
        wanted = [index[n] for n in names if n in index]
        if every:
            wanted += [i for i, n in enumerate(earlier.names) if n not in read]
        before = earlier.with_topics(earlier.topics(wanted))
    return cluster_topics(restricted, observed, cluster_plan, before) + list(found.values()), cluster_plan, topics


def _replicas(now: SnapshotColumns, planned: set[int]) -> dict[str, dict[int, list[int]]]:
    """The current replicas of `now`'s topics but those in the rows `planned` (a partition's id is
    its index: the snapshot rules hold)."""
    replicas, at, starts = now.replicas.tolist(), now.replica_starts.tolist(), now.starts.tolist()
    lists = [replicas[a:b] for a, b in pairwise(at)]  # each partition's, in file order
    return {
        name: dict(enumerate(lists[starts[row] : starts[row + 1]])) for row, name in enumerate(now.names) if row not in planned
    }


def name_free(template: TopicDrift, first_plan: Plan, topic: str) -> bool:
    """Whether the representative's findings hold for any topic of its shape, renamed. A shape
    holds its topics' partition count, so the partitions a topic gains (AddPartitions: the count
    declared and the count read, nothing of its name or its partitions) are its shape's."""
    if any(d.topic == topic for d in first_plan.diagnostics):
        return False
    for action in first_plan.actions:
        if action.topic != topic or isinstance(action, AddPartitions):
            continue
        if not isinstance(action, AlterConfigs) or action.destructive or action.retention is not None:
            return False
        if any(c.op != "set" or c.before != c.after for c in action.changes):
            return False
    return not (template.diagnostics or template.truncation or template.truncation_rows or _its_own(template))


def _its_own(template: TopicDrift) -> bool:
    """Whether the template has findings no other topic of its shape shares: what its replicas,
    leaders, offsets or history show, or that it is hidden."""
    return bool(
        template.replicas
        or template.health
        or template.data_loss
        or template.retention
        or template.unverified
        or template.change_log
        or template.hidden
    )


_RENAMED, _TOPIC = frozenset({"topic", "partitions", "unmanaged", "changes", "config", "replicas"}), frozenset({"topic"})
_RETOLD = _RENAMED | {"truncation", "truncation_rows", "diagnostics"}


def renamer(template: TopicDrift) -> Callable[[str, int, bool, list[ReplicaProblem] | None], TopicDrift]:
    """The template's findings for other topics of its shape: what `model_copy(update=...)` gives
    (each model's other values shared, its set of given fields the template's), built as trusted
    models since every value is the template's own or of its type; its checks made once. A topic's
    replica problems are its own where given (None: the template's, none)."""
    copy = trusted_copier(template, _RENAMED)
    changes = [trusted_copier(c, _TOPIC) for c in template.changes]
    config = [trusted_copier(c, _TOPIC) for c in template.config]
    shared = template.replicas  # a name-free template's: none

    def make(name: str, partitions: int, unmanaged: bool, replicas: list[ReplicaProblem] | None = None) -> TopicDrift:
        topic = {"topic": name}
        return copy(
            {
                "topic": name,
                "partitions": partitions,
                "unmanaged": unmanaged,
                "changes": [c(topic) for c in changes],
                "config": [c(topic) for c in config],
                "replicas": shared if replicas is None else replicas,
            }
        )

    return make


@dataclass(frozen=True)
class _Retelling:
    """A shape whose findings name their topic only where its own plan actions and diagnostics
    do (a truncation's targets, a retention cut's estimate, both per partition; a message naming
    the topic): each topic of it is planned, and its findings are the template's, renamed, with
    its own pending changes, truncation, plan diagnostics and replica problems."""

    alters: list[AlterConfigs]  # the template's config changes
    undeclared: bool  # whether the template's plan reports an undeclared config (its config drift lists them)
    copy: Callable[[dict[str, Any]], TopicDrift]
    config: list[Callable[[dict[str, Any]], ConfigDrift]]


# What a quiet topic's plan may hold, each shown by the topic's own findings (`compute.planned_findings`).
_OWN_ACTIONS = (AlterConfigs, TruncateRecords, AddPartitions)


def _retelling(template: TopicDrift, first_plan: Plan, topic: str) -> _Retelling | None:
    """How the topics of the template's shape are told, when only what their own plan shows can
    differ between them: the rest of a quiet topic's findings come from its configs, its shape's
    manifest topic and the plan's config changes, never from its partitions (its replicas, leaders
    and offsets show nothing, `_quiet`, but for its replica problems, its own). A truncation's
    targets and a retention cut's estimate do read its partitions, but only the actions themselves
    (their changes and truncation) and the plan's diagnostics say what they found."""
    if _its_own(template):
        return None
    actions = [a for a in first_plan.actions if a.topic == topic]
    if not all(isinstance(a, _OWN_ACTIONS) for a in actions):
        return None
    return _Retelling(
        [a for a in actions if isinstance(a, AlterConfigs)],
        any(d.code == DiagnosticCode.UNDECLARED_CONFIG for d in template.diagnostics),
        trusted_copier(template, _RETOLD),
        [trusted_copier(c, _TOPIC) for c in template.config],
    )


def _retold(
    cluster_plan: Plan, now: SnapshotColumns, topics: Mapping[str, ObservedTopic], retold: Mapping[int, _Retelling]
) -> dict[str, TopicDrift]:
    """The findings of the rows `retold` whose plan is their template's but for what it shows of
    itself: actions of the same kinds, the same config changes, equally destructive, the same
    undeclared-config report. The others are left out (classified in full)."""
    actions: dict[str, list[Action]] = {}
    for a in cluster_plan.actions:
        actions.setdefault(a.topic, []).append(a)
    diagnostics: dict[str | None, list[Diagnostic]] = {}
    for d in cluster_plan.diagnostics:
        diagnostics.setdefault(d.topic, []).append(d)
    unmanaged, hidden = set(cluster_plan.unmanaged_topics), set(now.state.hidden_topics)
    out = {}
    for row, told in retold.items():
        name = now.names[row]
        mine, said = actions.get(name, []), diagnostics.get(name, [])
        alters = [a for a in mine if isinstance(a, AlterConfigs)]
        if (
            name in hidden
            or not all(isinstance(a, _OWN_ACTIONS) for a in mine)
            or len(alters) != len(told.alters)
            or not all(_same_change(a, b) for a, b in zip(alters, told.alters, strict=True))
            or any(d.code == DiagnosticCode.UNDECLARED_CONFIG for d in said) != told.undeclared
        ):
            continue
        observed = topics[name]
        changes, truncation, rows = planned_findings(name, mine, observed)
        out[name] = told.copy(
            {
                "topic": name,
                "partitions": len(observed.partitions),
                "unmanaged": name in unmanaged,
                "changes": changes,
                "config": [c({"topic": name}) for c in told.config],
                "replicas": replica_problems(observed),
                "truncation": truncation,
                "truncation_rows": rows,
                "diagnostics": plan_diagnostics(said),
            }
        )
    return out


def _same_change(mine: AlterConfigs, template: AlterConfigs) -> bool:
    """Whether two AlterConfigs make the same changes, equally destructive (what a finding shows of them)."""
    return mine.changes == template.changes and mine.destructive == template.destructive


def _quiet(
    desired: DesiredState, now: SnapshotColumns, earlier: SnapshotColumns | None
) -> tuple[dict[tuple, list[int]], set[int]]:
    """Quiet topics by shape, and the rows of the others."""
    import numpy as np

    names = now.names
    counts = np.diff(now.starts)
    wants = [desired.topics.get(n) for n in names]
    factor = np.array([w.replication_factor if w is not None else -1 for w in wants], dtype=np.int64)
    owner = np.repeat(np.arange(len(names), dtype=np.int64), counts)
    factor_ok = _per_topic(now.replica_count == factor[owner], now.starts)
    drained_any = _per_topic(_drained(now, desired.cluster.drain_brokers), now.starts, every=False)
    first = np.full(now.leader.size, -2, dtype=np.int64)  # each partition's preferred leader (-2: no replicas)
    has = now.replica_count > 0
    first[has] = now.replicas[now.replica_starts[:-1][has]]
    led = (now.leader >= 0) & (now.leader == first)  # in sync or not: see `_short_of_sync`
    led_topic = _per_topic(led, now.starts)
    match, earlier_row = _unchanged(now, earlier) if earlier is not None else ([], [])
    shapes: dict[tuple, list[int]] = {}
    full: set[int] = set()
    sizes = counts.tolist()  # Python ints: compared and hashed per topic below
    for i, name in enumerate(names):
        want = wants[i]
        if (
            not led_topic[i]
            or drained_any[i]
            or (
                want is not None
                and (
                    want.state is not TopicState.PRESENT
                    or want.replica_assignment
                    or sizes[i] > want.partitions
                    or not factor_ok[i]
                )
            )
        ):
            full.add(i)
            continue
        before: Any = None
        if earlier is not None:
            j = earlier_row[i]
            if j < 0 or not match[i]:
                full.add(i)
                continue
            was, this = earlier.topic_ids[j], now.topic_ids[i]
            if was and this and was != this:
                full.add(i)
                continue
            before = earlier.configs[j]
        key = (
            _frozen(want) if want is not None else None,
            sizes[i],
            is_protected(desired, name),
            now.internal[i],
            now.configs[i],
            now.operations[i],
            before,
        )
        shapes.setdefault(key, []).append(i)
    return shapes, full


# A manifest topic's plain values: all but what names it (its name and source) and its containers.
_CONTAINERS = ("configs", "replica_assignment", "truncate")
_PLAIN_VALUES = itemgetter(*(k for k in DesiredTopic.model_fields if k not in ("name", "source", *_CONTAINERS)))


def _frozen(want: DesiredTopic) -> tuple:
    """The manifest's topic as a hashable value, without what names it (its name and source, its
    rules' sources). A quiet topic has no pinned replicas (empty): its containers are its configs,
    a dict of strings, and its truncation rules, most often none. A field added to DesiredTopic is
    in the plain values: a container there cannot be hashed, and fails here loudly."""
    values = want.__dict__
    rules = tuple(r.model_dump_json(exclude={"source"}) for r in values["truncate"]) if values["truncate"] else ()
    return _PLAIN_VALUES(values), tuple(values["configs"].items()), rules


def _short_of_sync(now: SnapshotColumns) -> set[int]:
    """The rows of the topics with a partition whose in-sync replicas are fewer than its replicas."""
    return {row for row, short in enumerate(_per_topic(now.isr_count != now.replica_count, now.starts, every=False)) if short}


def _replica_problems_of(now: SnapshotColumns, rows: list[int]) -> dict[int, list[ReplicaProblem]]:
    """The replica problems of the topics in `rows`, each read off its own model."""
    models = now.topics(rows)
    return {row: replica_problems(models[now.names[row]]) for row in rows}


def _per_topic(flags: Any, starts: Any, every: bool = True) -> list[bool]:
    """Per topic: whether all (`every`) or any of its partitions' `flags` hold."""
    import numpy as np

    if starts.size <= 1:
        return []
    reduce = np.logical_and if every else np.logical_or
    return reduce.reduceat(np.asarray(flags, dtype=bool), starts[:-1]).tolist()


def _drained(now: SnapshotColumns, drain: Iterable[int]) -> Any:
    """Per partition: whether a replica sits on a drained broker."""
    import numpy as np

    drain = list(drain)
    out = np.zeros(now.leader.size, dtype=bool)
    if drain and now.replicas.size:
        counts = np.diff(now.replica_starts)
        owner = np.repeat(np.arange(now.leader.size, dtype=np.int64), counts)
        on = np.zeros(now.replicas.size, dtype=bool)
        for broker in drain:
            on |= now.replicas == broker
        out[owner[on]] = True
    return out


def _unchanged(now: SnapshotColumns, earlier: SnapshotColumns) -> tuple[list[bool], list[int]]:
    """Per topic of `now`: whether the earlier snapshot had it with the same partitions, replicas
    and leaders and no high watermark above today's; and its row there (-1: not there)."""
    import numpy as np

    index = {n: i for i, n in enumerate(earlier.names)}
    rows = np.array([index.get(n, -1) for n in now.names], dtype=np.int64)
    if not earlier.leader.size or not now.leader.size:
        return [False] * len(now.names), rows.tolist()
    counts = np.diff(now.starts)
    earlier_counts = np.diff(earlier.starts)
    comparable = (rows >= 0) & (counts == np.where(rows >= 0, earlier_counts[np.maximum(rows, 0)], -1))
    owner = np.repeat(np.arange(len(now.names), dtype=np.int64), counts)
    position = np.arange(now.leader.size, dtype=np.int64) - now.starts[owner]
    # Each partition's counterpart in `earlier` (partition 0 of the file stands in where there is none).
    there = np.where(comparable[owner], earlier.starts[np.maximum(rows, 0)][owner] + position, 0)
    same = comparable[owner] & (earlier.leader[there] == now.leader) & (earlier.replica_count[there] == now.replica_count)
    went_back = (earlier.high_watermark[there] > 0) & (now.high_watermark < earlier.high_watermark[there])
    same &= ~went_back
    if now.replicas.size:
        replica_owner = np.repeat(np.arange(now.leader.size, dtype=np.int64), now.replica_count)
        offset = np.arange(now.replicas.size, dtype=np.int64) - now.replica_starts[replica_owner]
        compared = same[replica_owner]
        if earlier.replicas.size:
            at = np.where(compared, earlier.replica_starts[there][replica_owner] + offset, 0)
            compared &= earlier.replicas[at] != now.replicas
        same[replica_owner[compared]] = False
    return _per_topic(same, now.starts), rows.tolist()


def _inheritance_witnesses(now: SnapshotColumns) -> set[int]:
    """The rows holding, for each key the planner reads off other topics, config source and
    null-ness, the first topic by name with it: among them is every topic it could read a value from."""
    first: dict[tuple, tuple[str, int]] = {}
    keys = set(READ_OFF_OTHER_TOPICS)
    for row, (name, configs) in enumerate(zip(now.names, now.configs)):
        for key, value, source, _sensitive, _read_only in configs:
            if key in keys:
                found = first.get((key, source, value is None))
                if found is None or name < found[0]:
                    first[(key, source, value is None)] = (name, row)
    return {row for _, row in first.values()}
