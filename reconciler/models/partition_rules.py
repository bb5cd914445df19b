"""The rules a partition of a snapshot must hold, each stated once, in the two forms the readers
check it in: Python on plain values and numpy on whole columns.

- `ObservedPartition` and `ObservedTopic` (`reconciler.models.observed`) validate by `python`,
  and explain a rule broken with `problems`;
- the live reader's and the file reader's fast paths (`from_reader`, `all_from_reader`,
  `topic_from_file`) call the functions `holds` compiles from the same `python` expressions;
- the Parquet column check (`reconciler.files.snapshot_columns`) runs `columns`, for both drift
  engines (Spark's tasks run the local engine's reader).

Each form may take the rules before it in `PARTITION_RULES` to hold (the readers check them in
that order, and a partition breaking one is refused by the models whatever the others say).

The ranges of the values (offsets int64 and >= -1, broker ids int32 and >= 0, ...) are the models'
field annotations; `VALUE_RANGES` reads them from there for the forms that do not go through
pydantic. tests/models/test_partition_rules.py checks that the forms of each rule agree on
generated partitions, and that every field of the models is covered by a rule or a range.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

# The plain values a rule's `python` expression may read, in this order when compiled.
NAMES = ("index", "partition", "leader", "replicas", "isr", "offline", "start", "end", "epoch_end", "by_time")
UNKNOWN = -1  # the "not known" marker of leaders, epochs and offsets

Problem = tuple[tuple, str, Any]  # where in the partition (pydantic's loc), the message, the value


@dataclass(frozen=True)
class PartitionRule:
    name: str
    fields: tuple[str, ...]  # the ObservedPartition fields it constrains
    python: str  # over NAMES
    columns: Callable[[Any], bool]  # over `PartitionColumns`-like arrays: whether every partition holds it
    problems: Callable[[Any], list[Problem]]  # over an ObservedPartition that breaks it
    # Checked on the live reader's values too. The others are invariants of the replica lists
    # Kafka's controller keeps and Metadata reports (distinct brokers, the ISR and the offline
    # replicas among the replicas), trusted there as their wire types are: checking them costs
    # a tenth of a 100,000-partition read's CPU.
    live: bool = True

    @cached_property  # read on every compile of the rules
    def names(self) -> tuple[str, ...]:
        return tuple(n for n in NAMES if _mentions(self.python, n))


def _mentions(expression: str, name: str) -> bool:
    import re

    return re.search(rf"(?<![\w.]){name}(?!\w)", expression) is not None


_OFFLINE_ONLY = "-1 (offset unknown) is written only for an offline partition: leader -1 and both offsets -1"


def _offset_problems(p: Any) -> list[Problem]:
    start, end = p.log_start_offset, p.high_watermark
    if start >= 0 and end >= 0:
        return [(("log_start_offset",), f"log start offset {start} is above the high watermark {end}", start)]
    out: list[Problem] = []
    if start != end or p.leader != UNKNOWN:
        out += [((f,), _OFFLINE_ONLY, v) for f, v in (("log_start_offset", start), ("high_watermark", end)) if v < 0]
    if p.epoch_end_offset is not None:
        out.append((("epoch_end_offset",), "an offline partition (offsets -1) has no epoch end offset", p.epoch_end_offset))
    if p.offsets_by_timestamp:
        out.append(
            (("offsets_by_timestamp",), "an offline partition (offsets -1) has no offsets by time", p.offsets_by_timestamp)
        )
    return out


def _broker_list_problems(field: str) -> Callable[[Any], list[Problem]]:
    def problems(p: Any) -> list[Problem]:
        out: list[Problem] = []
        seen: set[int] = set()
        for i, broker in enumerate(getattr(p, field)):
            if broker in seen:
                out.append(((field, i), f"broker {broker} is listed twice in {field}", broker))
            elif field != "replicas" and broker not in p.replicas:
                out.append(((field, i), f"broker {broker} is in {field} but not one of the replicas {p.replicas}", broker))
            seen.add(broker)
        return out

    return problems


def _subset_rule(field: str, name: str) -> PartitionRule:
    return PartitionRule(
        name=f"{field} distinct, among the replicas",
        fields=(field,),
        python=f"len(set({name})) == len({name}) and set(replicas).issuperset({name})",
        columns=lambda c: c.replica_table.distinct_replicas(*c.lists[field]),
        problems=_broker_list_problems(field),
        live=False,
    )


PARTITION_RULES: tuple[PartitionRule, ...] = (
    PartitionRule(
        name="ids in order",
        fields=("partition",),
        python="partition == index",
        columns=lambda c: bool((c.partition == c.index).all()),
        problems=lambda p: [],  # the topic's to say (it knows the position): see ObservedTopic
    ),
    PartitionRule(
        # Online: offsets in order. Offline (no usable leader, or ListOffsets gave no answer): both
        # -1 with leader -1, and nothing read that needs a leader.
        name="offsets in order, or offline",
        fields=("log_start_offset", "high_watermark", "leader", "epoch_end_offset", "offsets_by_timestamp"),
        python=("0 <= start <= end or (start == end == leader == -1 and epoch_end is None and not by_time)"),
        columns=lambda c: bool(
            (
                ((c.start >= 0) & (c.start <= c.end))
                | ((c.start == -1) & (c.end == -1) & (c.leader == -1) & ~c.epoch_end_known & (c.times_count == 0))
            ).all()
        ),
        problems=_offset_problems,
    ),
    PartitionRule(
        # When Metadata listed replicas at all: a partition in flux can come without.
        name="leader among the replicas",
        fields=("leader",),
        python="leader == -1 or not replicas or leader in replicas",
        columns=lambda c: c.replica_table.holds_each(c.led, c.leader[c.led]),
        problems=lambda p: [(("leader",), f"leader {p.leader} is not one of the replicas {p.replicas}", p.leader)],
    ),
    PartitionRule(
        name="replicas distinct",
        fields=("replicas",),
        python="len(set(replicas)) == len(replicas)",
        columns=lambda c: c.replica_table.distinct(*c.lists["replicas"]),
        problems=_broker_list_problems("replicas"),
        live=False,
    ),
    _subset_rule("isr", "isr"),
    _subset_rule("offline_replicas", "offline"),
)

# The rules a partition holds on its own (`ObservedPartition`); the others need its place in the topic.
OWN_RULES = tuple(r for r in PARTITION_RULES if "index" not in r.names)
OFFSET_RULE = next(r for r in PARTITION_RULES if r.name == "offsets in order, or offline")


def holds(rules: Iterable[PartitionRule]) -> Callable[..., bool]:
    """One function of the names `rules` read (in NAMES' order, as keywords or positionally) that
    is true when every one of them holds: compiled from their `python`, so the fast paths pay
    no call per rule."""
    rules = tuple(rules)
    names = [n for n in NAMES if any(n in r.names for r in rules)]
    body = " and ".join(f"({r.python})" for r in rules) or "True"
    code = f"lambda {', '.join(names)}: {body}"
    function: Callable[..., bool] = eval(code, {"__builtins__": {"len": len, "set": set}})  # the rules' own text
    function.__doc__ = " and ".join(r.name for r in rules)
    return function


def breaks(rule: PartitionRule, p: Any, index: int | None = None) -> bool:
    """Whether the partition model (or anything with its fields) `p` breaks `rule`."""
    values = {
        "index": index,
        "partition": p.partition,
        "leader": p.leader,
        "replicas": p.replicas,
        "isr": p.isr,
        "offline": p.offline_replicas,
        "start": p.log_start_offset,
        "end": p.high_watermark,
        "epoch_end": p.epoch_end_offset,
        "by_time": p.offsets_by_timestamp,
    }
    return not _compiled(rule)(**{n: values[n] for n in rule.names})


_COMPILED: dict[str, Callable[..., bool]] = {}


def _compiled(rule: PartitionRule) -> Callable[..., bool]:
    found = _COMPILED.get(rule.name)
    if found is None:
        found = _COMPILED[rule.name] = holds([rule])
    return found


def value_ranges(model: Any) -> dict[str, tuple[int, int]]:
    """The bounds of every integer `model` holds, from its field annotations: `field`, `field[]`
    for a list's values, `field{}` and `field{key}` for a dict's values and keys."""
    from typing import Annotated, get_args, get_origin

    def bounds(annotation: Any, metadata: Iterable[Any]) -> tuple[int, int] | None:
        low = high = None
        for item in metadata:
            for inner in getattr(item, "metadata", [item]):
                low = getattr(inner, "ge", low)
                high = getattr(inner, "le", high)
        return (low, high) if low is not None and high is not None else None

    def walk(where: str, annotation: Any, metadata: Iterable[Any]) -> Iterable[tuple[str, tuple[int, int]]]:
        origin = get_origin(annotation)
        if origin is Annotated:
            base, *extra = get_args(annotation)
            yield from walk(where, base, [*metadata, *extra])
        elif origin is list:
            yield from walk(f"{where}[]", get_args(annotation)[0], [])
        elif origin is dict:
            key, value = get_args(annotation)
            yield from walk(f"{where}{{key}}", key, [])
            yield from walk(f"{where}{{}}", value, [])
        elif annotation is int:
            found = bounds(annotation, metadata)
            if found is not None:
                yield where, found
        else:  # Optional[...]: its arms
            for arm in get_args(annotation):
                yield from walk(where, arm, metadata)

    return {
        where: found
        for name, field in model.model_fields.items()
        for where, found in walk(name, field.annotation, field.metadata)
    }
