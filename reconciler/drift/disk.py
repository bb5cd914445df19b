"""Disk findings of a drift report (docs/capacity.md), pure: brokers whose log directories use
more of their filesystem than the policy's max_disk_usage, and topics without any limit that grow,
with the days until the broker they fill first is full at the current rate.

`disk_findings` reads only the topics `maybe_unbounded` admits (a necessary condition decided on
the configs alone, so no model is built for the other topics).
A topic's growth is measured between the earlier observation and this one (`drift --since`, a
fleet's previous run): without one nothing is said of growth.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime

from reconciler import kafka_configs
from reconciler.drift.model import DiskFinding
from reconciler.models.observed import LogDirCapacity, ObservedTopic
from reconciler.plan import retention
from reconciler.plan.capacity import ingest_by_growth
from reconciler.units import human_bytes

UNLIMITED = "-1"


_LIMIT_KEYS = ("retention.ms", "retention.bytes")


def maybe_unbounded(configs: Mapping[str, str | None]) -> bool:
    """What a topic's configs (key -> value) must show for it to have no limit at all: retention.ms
    and retention.bytes both -1, as set or reported. `unbounded` decides; this only filters."""
    return all((configs.get(key) or "").strip() == UNLIMITED for key in _LIMIT_KEYS)


def unbounded(topic: ObservedTopic) -> bool:
    """Whether the topic has no limit at all: delete policy, retention.ms and retention.bytes -1."""
    s = retention.settings(lambda key: topic.config_value(key) or kafka_configs.TOPIC_CONFIGS[key].default)
    return "delete" in s.policy and s.retention_ms < 0 and s.retention_bytes < 0


def disk_findings(
    log_dirs: Mapping[int, list[LogDirCapacity]],
    limit: float | None,
    taken_at: datetime | None,
    topics: Iterable[ObservedTopic],
    earlier: Mapping[str, ObservedTopic],
    since: datetime | None,
) -> list[DiskFinding]:
    """Brokers above `limit`, in broker order, then the growing topics without limits (of
    `topics`, measured against `earlier` taken at `since`), in topic order."""
    found = []
    for broker, dirs in sorted(log_dirs.items()):
        used, total = sum(d.used_bytes for d in dirs), sum(d.total_bytes for d in dirs)
        if limit is not None and used / total > limit:
            found.append(
                DiskFinding(
                    kind="disk-above-limit",
                    broker=broker,
                    log_dirs=[d.log_dir for d in dirs],
                    used_bytes=used,
                    total_bytes=total,
                    limit=limit,
                )
            )
    if taken_at is None or since is None:
        return found
    elapsed_ms = int((taken_at - since).total_seconds() * 1000)
    for topic in sorted(topics, key=lambda t: t.name):
        before = earlier.get(topic.name)
        if before is None or not unbounded(topic) or topic.topic_id != before.topic_id:
            continue
        growth = _growth(topic, before, elapsed_ms)
        if growth is None:
            continue
        rate, per_broker, method = growth
        found.append(_fills_first(topic.name, rate, per_broker, method, log_dirs))
    return found


def _growth(topic: ObservedTopic, before: ObservedTopic, elapsed_ms: int) -> tuple[int, dict[int, int], str] | None:
    """The topic's bytes per day over all replicas, per broker, and how measured; None: it does
    not grow, or its growth is not known."""
    earlier = {p.partition: p for p in before.partitions}
    per_broker: dict[int, int] = {}
    total, method = 0, ""
    for p in topic.partitions:
        was = earlier.get(p.partition)
        if was is None:
            continue
        found = ingest_by_growth(p, was, elapsed_ms)
        if not found.bytes_per_day:
            continue
        method = found.method
        for b in p.replicas:
            per_broker[b] = per_broker.get(b, 0) + found.bytes_per_day
            total += found.bytes_per_day
    return (total, per_broker, method) if total > 0 else None


def _fills_first(
    topic: str, rate: int, per_broker: dict[int, int], method: str, log_dirs: Mapping[int, list[LogDirCapacity]]
) -> DiskFinding:
    """The broker the topic fills first: the fewest days until its filesystem is full at this
    topic's rate there (brokers of unknown capacity last)."""

    def days(broker: int) -> float | None:
        dirs = log_dirs.get(broker)
        return None if not dirs else sum(d.usable_bytes for d in dirs) / per_broker[broker]

    broker = min(per_broker, key=lambda b: (days(b) is None, days(b) or 0.0, b))
    dirs = log_dirs.get(broker, [])
    left = days(broker)
    return DiskFinding(
        kind="unbounded-growth",
        broker=broker,
        topic=topic,
        log_dirs=[d.log_dir for d in dirs],
        used_bytes=sum(d.used_bytes for d in dirs) if dirs else None,
        total_bytes=sum(d.total_bytes for d in dirs) if dirs else None,
        bytes_per_day=rate,
        broker_bytes_per_day=per_broker[broker],
        days_until_full=None if left is None else round(left, 1),
        method=method,
    )


def disk_detail(d: DiskFinding) -> str:
    """A disk finding in one line, as every format shows it."""
    where = f"broker {d.broker}" + (f" ({', '.join(d.log_dirs)})" if d.log_dirs else "")
    if d.kind == "disk-above-limit":
        share = (d.used_bytes or 0) / (d.total_bytes or 1)
        return (
            f"{where} uses {human_bytes(d.used_bytes or 0)} of {human_bytes(d.total_bytes or 0)} ({share:.1%}), above the "
            f"policy's max_disk_usage of {d.limit:.0%}"
        )
    full = (
        f"{where} is full in {d.days_until_full:g} days at this rate"
        if d.days_until_full is not None
        else f"{where} fills first (its capacity is unknown)"
    )
    return (
        f"no retention limit (delete policy, retention.ms and retention.bytes -1) and grows "
        f"{human_bytes(d.bytes_per_day or 0)}/day ({human_bytes(d.broker_bytes_per_day or 0)}/day on broker {d.broker}; "
        f"{d.method}): {full}"
    )
