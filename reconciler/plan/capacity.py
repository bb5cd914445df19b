"""Disk capacity: how what the brokers' log directories hold compares with their size, and what
the reader could not learn of it (docs/capacity.md)."""

from __future__ import annotations

from collections.abc import Mapping


def capacity_unknown_line(unknown: Mapping[int, str]) -> str:
    """One line, said once, for the brokers whose capacity is not known (broker -> why): brokers
    with the same reason are named together. Unknown is never 0: nothing is estimated against it."""
    by_reason: dict[str, list[int]] = {}
    for broker, why in sorted(unknown.items()):
        by_reason.setdefault(why, []).append(broker)
    shown = "; ".join(
        f"{'broker' if len(brokers) == 1 else 'brokers'} {', '.join(map(str, brokers))}: {why}"
        for why, brokers in by_reason.items()
    )
    return f"disk capacity unknown ({shown}); usage against capacity is not checked there"
