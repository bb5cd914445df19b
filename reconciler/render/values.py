"""How values read to a person: config values with their friendly form, counts, sizes, positions."""

from __future__ import annotations

from reconciler import kafka_configs, units
from reconciler.errors import plural
from reconciler.kafka_configs import Unit
from reconciler.models.desired import SourceRef
from reconciler.models.plan import DiskEstimate, PartitionMove, Plan, ReassignReplicas, RetentionCut
from reconciler.plan import retention
from reconciler.plan.capacity import signed_bytes as signed_size

UNKNOWN = "unknown"
REDACTED = "(sensitive)"
UNSET = "(not set)"


def not_validated(plan: Plan) -> str | None:
    """Said wherever a plan with writes is shown that no broker was asked about (--offline, a snapshot)."""
    if plan.validated_on_brokers or not plan.has_changes:
        return None
    return (
        "Not validated by the brokers: this plan was made without validate_only (--offline or from a snapshot), "
        "so they have not said whether they would accept its writes. Apply asks them (the same preflight) "
        "before its first write and writes nothing if they would refuse any."
    )


def config_value(key: str, value: str | None, sensitive: bool = False) -> str:
    """`604800000 (7d)` for durations, `53687091200 (50.0 GiB)` for sizes; sensitive values never shown."""
    if sensitive:
        return REDACTED
    if value is None:
        return UNSET
    spec = kafka_configs.TOPIC_CONFIGS.get(key)
    try:
        number = int(value)
    except ValueError:
        return value
    if spec is not None and spec.unit is Unit.MS and number >= 1000:
        return f"{value} ({units.human_duration(number)})"
    if spec is not None and spec.unit is Unit.BYTES and number >= 1024:
        return f"{value} ({units.human_bytes(number)})"
    if number == -1 and spec is not None and spec.unit is not None:
        return "-1 (unlimited)"
    return value


def size(n: int | None) -> str:
    """An approximate size, `2.7 MiB`; "unknown" when it is not known."""
    return "unknown" if n is None else units.human_bytes(n)


def count(n: int) -> str:
    return f"{n:,}"


def where(source: SourceRef | None) -> str:
    return f"{source.file}:{source.line}" if source else ""


EXPIRY_HEADER = ["Partition", "Log start", "Kept from", "High watermark", "Records deleted", "Bytes deleted"]


def estimate_bound(cut: RetentionCut) -> str:
    """Said wherever a retention estimate is shown: which figure is a bound. A time limit bounds the
    records (ListOffsets finds the first one kept), a size limit the bytes (DescribeLogDirs gives the
    size, not where the bytes sit); the other figure is proportional, exact only for records of even
    size."""
    whole = "as the brokers delete whole segments only and may keep more"
    if cut.retention_ms is not None and cut.retention_bytes is not None:
        return (
            f"records are an upper bound for the time limit and bytes for the size limit, {whole}; "
            "the other figures assume records of even size"
        )
    if cut.retention_bytes is not None:
        return f"bytes are an upper bound, {whole}; records assume records of even size"
    return f"records are an upper bound, {whole}; bytes assume records of even size"


EXPIRY_RIGHT = (0, 1, 2, 3, 4, 5)


def retention_estimate(cut: RetentionCut) -> str:
    """A retention cut's cost in a few words: "deletes up to 1,120 records in 2 partitions, about 2.7 MiB"."""
    if not cut.counted:
        return "deletes records, not counted"
    unknown = len(cut.unknown_partitions)
    total = plural(len(cut.partitions), "partition")
    if unknown == len(cut.partitions):
        return f"deletes an {UNKNOWN} number of records in {total}"
    deleted_bytes = cut.bytes_to_delete
    if cut.retention_ms is None:  # a size limit alone: the bytes are the bound, the records a proportion
        records = f"deletes about {plural(cut.known_records, 'record')} in {total}"
        if unknown:
            return f"{records}, {unknown} of them {UNKNOWN}"
        return records + (f", up to {size(deleted_bytes)}" if deleted_bytes else "")
    records = f"deletes up to {plural(cut.known_records, 'record')} in {total}"
    if unknown:
        return f"{records}, {unknown} of them {UNKNOWN}"
    return records + (f", about {size(deleted_bytes)}" if deleted_bytes else "")


def stepping(cut: RetentionCut) -> list[str]:
    """One line per key lowered one allowed step this apply: "retention.ms 30d -> 15d this apply; 4
    more applies to reach 1d (at most 50% per apply)"."""
    return [
        f"{s.key} {retention.shown_limit(s.key, s.current)} -> {retention.shown_limit(s.key, s.planned)} this "
        f"apply; {more_applies(s.remaining)} to reach {retention.shown_limit(s.key, s.target)} (at most "
        f"{s.max_decrease:.0%} per apply)"
        for s in cut.steps
    ]


def more_applies(n: int) -> str:
    return f"{count(n)} more {'apply' if n == 1 else 'applies'}"


def expiry_rows(cut: RetentionCut) -> list[list[str]]:
    """One row per partition under EXPIRY_HEADER; what is not known says so."""

    def known(n: int | None) -> str:
        return UNKNOWN if n is None else count(n)

    return [
        [
            str(p.partition),
            known(p.log_start_offset),
            known(p.keep_from_offset),
            known(p.high_watermark),
            known(p.records_to_delete),
            size(p.bytes_to_delete),
        ]
        for p in cut.partitions
    ]


def replica_list(brokers: list[int]) -> str:
    return "[" + ", ".join(map(str, brokers)) + "]"


def moved(move: PartitionMove) -> str:
    """What changes for one partition: "+3 -1", "leader 1 -> 2", "in progress"."""
    parts = [f"+{b}" for b in move.adding] + [f"-{b}" for b in move.removing]
    if move.before[0] != move.after[0]:
        parts.append(f"preferred leader {move.before[0]} -> {move.after[0]}")
    if move.in_progress:
        parts.append("in progress")
    return " ".join(parts) or "order only"


REASSIGNMENT_HEADER = ["Partition", "Replicas now", "Replicas after", "Change", "Copies"]


def reassignment_rows(action: ReassignReplicas) -> list[list[str]]:
    """One row per moving partition; what it copies is its size times the replicas added."""
    return [
        [str(p.partition), replica_list(p.before), replica_list(p.after), moved(p), size(p.bytes_to_copy) if p.adding else "-"]
        for p in action.partitions
    ]


def placed(assignments: dict[int, list[int]]) -> str:
    """A new topic's replica lists, as the plan places them: "0: [2, 3], 1: [3, 1]"."""
    return ", ".join(f"{p}: [{', '.join(map(str, r))}]" for p, r in sorted(assignments.items()))


def reassignment_headline(action: ReassignReplicas) -> str:
    before, after = action.replication_factor_before, action.replication_factor_after
    what = f"replication factor {before} -> {after}" if before != after else "replicas moved"
    copied = action.bytes_to_copy
    copy = f", copies {size(copied)}" if copied is not None and copied > 0 else ", copy size unknown" if copied is None else ""
    throttle = (
        f", throttled at {size(action.throttle_bytes_per_s)}/s" if action.throttle_bytes_per_s and copied != 0 else ""
    )  # removals copy nothing
    return f"{what} in {plural(len(action.partitions), 'partition')}{copy}{throttle}"


# -- disk capacity (docs/capacity.md) ---------------------------------------------------------------


def disk_figure(disk: DiskEstimate) -> str:
    """An action's disk figure in one line: the bytes, per broker, and how they were estimated."""
    if disk.bytes is None:
        if disk.unbounded and disk.bytes_per_day is not None:
            return f"unbounded, +{units.human_bytes(disk.bytes_per_day)}/day: {disk.method}"
        return disk.method
    brokers = ", ".join(f"broker {b} {signed_size(n)}" for b, n in sorted(disk.per_broker.items()))
    rate = f", at {units.human_bytes(disk.bytes_per_day)}/day" if disk.bytes_per_day else ""
    return f"{signed_size(disk.bytes)}" + (f" ({brokers})" if brokers else "") + f"{rate}: {disk.method}"


CAPACITY_HEADER = ["Broker", "Log dirs", "Used now", "Capacity", "Added", "Projected", "Share"]
CAPACITY_RIGHT = (0, 2, 3, 4, 5, 6)


def capacity_rows(plan: Plan) -> list[list[str]]:
    """The plan's per-broker table: used now, capacity, what the actions add, projected, share."""
    rows = []
    for row in plan.capacity:
        added = signed_size(row.added_bytes) + (" + unknown" if row.added_unknown else "")
        projected = row.projected_at_least
        share = None if projected is None or row.total_bytes is None else projected / row.total_bytes
        at_least = ">= " if row.added_unknown else ""
        rows.append(
            [
                str(row.broker),
                ", ".join(row.log_dirs) or "-",
                size(row.used_bytes),
                size(row.total_bytes),
                added,
                "unknown" if projected is None else at_least + size(projected),
                "unknown" if share is None else f"{at_least}{share:.1%}",
            ]
        )
    return rows
