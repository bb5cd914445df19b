"""Retention lowered out of band: a topic whose settings on the cluster make the brokers delete
records that the manifests, or the cluster as observed earlier, would keep. Pure.

The "change" is read backwards from a plan's: from the manifests' value (the plan's config change
applied) or the earlier observation's, to the value the cluster has now. It is classified and
estimated by `reconciler.plan.retention` exactly as the planner would classify and estimate that change,
measured back from when the cluster was read: what the brokers delete at their next retention
check, or may already have deleted (a cut that has already run leaves little left to estimate;
with an earlier observation, the log start's move shows what went).

Inherited values (what a key without a topic override falls back to) are read from the topic
itself, so that a topic's finding does not depend on which other topics are planned with it (the
quiet pass copies a shape's findings to its other topics).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from reconciler.drift.model import RetentionLowered
from reconciler.models.desired import DesiredTopic
from reconciler.models.observed import ObservedState, ObservedTopic
from reconciler.models.plan import Action, AlterConfigs, ConfigChange
from reconciler.plan import retention
from reconciler.plan.retention import Classification, Settings
from reconciler.units import epoch_ms


def lowered_retention(
    observed: ObservedTopic | None,
    desired: DesiredTopic | None,
    actions: list[Action],
    earlier: ObservedTopic | None,
    observed_at: datetime | None,
) -> RetentionLowered | None:
    """The cut the cluster's current settings make against the manifests (the plan's config change
    for this topic, if any) and against `earlier`, or None when neither deletes anything. A change
    since `earlier` that gave every moved key the value the manifests declare was Git's own
    (applied by the reconciler), not one out of band."""
    if observed is None or not observed.configs:  # configs not read: nothing to compare
        return None
    changes = [c for a in actions if isinstance(a, AlterConfigs) for c in a.changes]
    if all(_pins(c, observed) for c in changes) and (
        earlier is None or not earlier.configs or earlier.configs == observed.configs
    ):
        # Equal settings on both sides of each comparison (a pin sets a key to the value it has):
        # `retention.classify` finds nothing deleted between equal settings.
        return None
    # A one-topic view, built without validating the topic again.
    inherited = retention.inherited_values(ObservedState.view_of("-", {observed.name: observed}))
    against: list[tuple[str, Classification]] = []
    if changes:
        now, manifests = retention.before_and_after(changes, observed, inherited)
        against.append(("manifests", retention.classify(manifests, now)))
    values = _values(observed, inherited) if earlier is not None and earlier.configs else {}
    if (
        earlier is not None
        and earlier.configs
        and _same_log(observed, earlier)
        and not _made_by_git(observed, earlier, desired, changes, inherited, values)
    ):
        now = _settings(values)
        when = " (since the earlier observation)"
        found = retention.classify(_settings(_values(earlier, inherited)), now)
        against.append(
            (
                "earlier",
                Classification(tuple(e + when for e in found.effects), found.notes, found.retention_ms, found.retention_bytes),
            )
        )
    cuts = [(name, c) for name, c in against if c.destructive]
    if not cuts:
        return None
    merged = Classification(
        effects=tuple(e for _, c in cuts for e in c.effects),
        retention_ms=next((c.retention_ms for _, c in cuts if c.retention_ms is not None), None),
        retention_bytes=next((c.retention_bytes for _, c in cuts if c.retention_bytes is not None), None),
    )
    now_ms = epoch_ms(observed_at) if observed_at is not None else None
    cut, unknown = retention.retention_cut(merged, observed, now_ms)
    return RetentionLowered(
        topic=observed.name,
        against=[name for name, _ in cuts],
        cut=cut,
        unknown=unknown,
        records_since=_records_since(observed, earlier) if "earlier" in dict(cuts) else None,
    )


def missing_reads(found: RetentionLowered, observed: ObservedTopic, observed_at: datetime | None) -> tuple[int | None, bool]:
    """What a live read lacks for this finding's estimate: the ListOffsets timestamp (None: none
    missing) and whether partition sizes are."""
    cut = found.cut
    lookup = None
    if cut.retention_ms is not None and observed_at is not None:
        at = retention.time_lookup(epoch_ms(observed_at), cut.retention_ms)
        if any(p.unreadable is None and at not in p.offsets_by_timestamp for p in observed.partitions):
            lookup = at
    sizes = cut.retention_bytes is not None and any(p.unreadable is None and p.size_bytes is None for p in observed.partitions)
    return lookup, sizes


def _values(topic: ObservedTopic, inherited: Mapping[str, str]) -> dict[str, str | None]:
    """The topic's effective value of each key deciding what is deleted (its own, else `inherited`)."""
    configs = topic.configs
    out = {}
    for key in retention.SETTINGS_KEYS:
        config = configs.get(key)
        out[key] = config.value if config is not None and config.value is not None else inherited.get(key)
    return out


def _settings(values: Mapping[str, str | None]) -> Settings:
    return retention.settings_of(tuple(values.values()))


def _made_by_git(
    observed: ObservedTopic,
    earlier: ObservedTopic,
    desired: DesiredTopic | None,
    changes: list[ConfigChange],
    inherited: Mapping[str, str],
    now: Mapping[str, str | None],
) -> bool:
    """Whether every key that moved since `earlier` (of those deciding what is deleted) now has
    the value the manifests declare, with no change pending on it. `now`: the topic's values."""
    if desired is None:
        return False
    current = _settings(now)
    moved = set()
    for key in (set(observed.configs) | set(earlier.configs)).intersection(retention.SETTINGS_KEYS):
        was = earlier.configs.get(key)
        # The topic as it is, but for this key as it was: its earlier value, else what it inherits.
        then = was.value if was is not None and was.value is not None else inherited.get(key)
        if then != now[key] and _settings({**now, key: then}) != current:
            moved.add(key)
    pending = {c.key for c in changes}
    return bool(moved) and all(k in desired.configs and k not in pending for k in moved)


def _pins(change: ConfigChange, observed: ObservedTopic) -> bool:
    """Whether `change` sets a key to the value the topic has for it (its effective value either way)."""
    config = observed.configs.get(change.key)
    return change.op == "set" and config is not None and config.value is not None and config.value == change.after


def _same_log(observed: ObservedTopic, earlier: ObservedTopic) -> bool:
    return not (observed.topic_id and earlier.topic_id and observed.topic_id != earlier.topic_id)


def _records_since(observed: ObservedTopic, earlier: ObservedTopic | None) -> int | None:
    """How far the log start moved since the earlier observation over the partitions readable in
    both (records deleted meanwhile, by retention or anything else); None when none is."""
    if earlier is None:
        return None
    before = {p.partition: p.log_start_offset for p in earlier.partitions if p.log_start_offset >= 0}
    moved = [
        p.log_start_offset - before[p.partition] for p in observed.partitions if p.partition in before and p.log_start_offset >= 0
    ]
    return sum(max(0, m) for m in moved) if moved else None
