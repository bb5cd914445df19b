"""Which topics of a fleet Spark SQL proves clean, so that the Python planner sees only the others.

A topic is clean when its drift report would be empty (`TopicDrift.empty`): no pending change, no
config drift, no replica, health, data-loss or retention finding, no diagnostic, not unmanaged,
nothing in its change log. Most topics of a reconciled fleet are; the Spark engine counts them
with aggregations and sends only the rest through the planner (`spark_job`).

The expression is sound, not complete: `clean` is true only where the planner and
`compute.topic_drift` would find nothing, and false wherever that is not simple to state in SQL,
in which case the planner decides as before. It is true only for a topic that is

- read (no `status`), each partition online (a leader), led by its first replica, every replica
  in sync, none on a drained broker, none being reassigned; and a row the models accept, today's
  and the earlier run's (every rule of `reconciler.models.partition_rules` and every bound of the
  models' values, in the SQL form stated there), so a row the planner would refuse still reaches
  it and is refused as before;
- declared, present, without truncation rules or a pinned replica_assignment, with the declared
  partition count and replication factor, every declared key set on the topic with the declared
  string (a value equal to itself by `same_config_value`), and no other key set on it; or not
  declared and never unmanaged: internal, `__*`, or matching an ignore pattern that is a plain
  literal (`^prefix` or `infix`: the one kind `re.search` and SQL agree on; other patterns prove
  nothing, and the planner decides);
- against an earlier run (the cluster has one): in it, with the same topic id (or one unknown),
  the same replicas and leaders per partition, no high watermark gone back, and its configs equal
  to the earlier ones or unread in either run.

tests/drift/test_spark_clean.py checks on generated fleets that every topic proven clean has an
empty report by the planner, and that the two engines' reports are equal.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import get_args

from pyspark.sql import Column
from pyspark.sql import functions as F

from reconciler.kafka_configs import TOPIC_NAME_CHARACTERS, TOPIC_NAME_MAX, same_config_value
from reconciler.models.desired import DesiredState, TopicState
from reconciler.models.observed import INTERNAL_TOPIC_SQL, AclOperation, ConfigSource, ObservedPartition
from reconciler.models.partition_rules import PARTITION_RULES, value_ranges
from reconciler.models.plan import ActionKind

# One row per declared topic: what a clean topic must match, and the topic's JSON for the planner.
DESIRED_SCHEMA = (
    "cluster string, topic string, declared boolean, want_plain boolean, want_partitions int, "
    "want_replication_factor int, want_configs array<struct<key:string,value:string>>, want string, want_shape string"
)
# One row per cluster: what its topics are checked against.
CLUSTER_SCHEMA = (
    "cluster string, cluster_checked boolean, compare boolean, drain array<int>, moving array<string>, "
    "ignore_prefixes array<string>, ignore_infixes array<string>, idle_after bigint"
)


def desired_rows(cluster: str, state: DesiredState) -> list[tuple]:
    rows = []
    dumped = state.model_dump(mode="json", include={"topics"})["topics"]  # at once: per topic costs far more
    for name, topic in state.topics.items():
        # Plain: nothing but partitions, replication factor and configs to compare, each config
        # value equal to itself (a DOUBLE "NaN" is not, so the planner sees it).
        plain = (
            topic.state is TopicState.PRESENT
            and not topic.truncate
            and not topic.replica_assignment
            and all(same_config_value(k, v, v) for k, v in topic.configs.items())
        )
        rows.append(
            (
                cluster,
                name,
                True,
                plain,
                topic.partitions,
                topic.replication_factor,
                sorted(topic.configs.items()),
                json.dumps(dumped[name]),
                # What the topic's quiet shape reads of its manifest entry (QUIET_SQL): all but its name and source.
                json.dumps({k: v for k, v in dumped[name].items() if k not in ("name", "source")}),
            )
        )
    return rows


# re.search(pattern, name) is name.startswith(text) for "^text", `text in name` for "text", where
# text is letters, digits, "_" and "-", or those and "." escaped.
_LITERAL = re.compile(r"(?:[A-Za-z0-9_-]|\\[._-])*")


def literal_pattern(pattern: str) -> tuple[str, str] | None:
    """("prefix", text) or ("infix", text) when `pattern` matches exactly the names starting with
    or containing `text`; None for any other pattern."""
    anchored = pattern.startswith("^")
    body = pattern[1:] if anchored else pattern
    if not _LITERAL.fullmatch(body):
        return None
    return ("prefix" if anchored else "infix", re.sub(r"\\(.)", r"\1", body))


def cluster_row(
    cluster: str, desired: DesiredState, checked: bool, compare: bool, moving: Iterable[str], ignore: Iterable[str]
) -> tuple:
    """`checked`: a state of the cluster with no topics passes the models (its brokers, its id), so
    its rows alone decide; `moving`: its topics with reassignments in progress."""
    literal = [literal_pattern(p) for p in (*desired.cluster.ignore_topics, *ignore)]
    return (
        cluster,
        checked,
        compare,
        sorted(desired.cluster.drain_brokers),
        sorted(moving),
        [text for kind, text in filter(None, literal) if kind == "prefix"],
        [text for kind, text in filter(None, literal) if kind == "infix"],
        desired.policy.idle_after_ms,
    )


_ACL = ", ".join(f"'{o}'" for o in get_args(AclOperation))
_TOPIC_SOURCE = int(ConfigSource.DYNAMIC_TOPIC_CONFIG)
_LAST_SOURCE = max(int(s) for s in ConfigSource)


def _topic_name_ok(column: str) -> str:
    """kafka_configs.is_topic_name: its characters and length, not "." or ".."."""
    return (
        f"(length({column}) BETWEEN 1 AND {TOPIC_NAME_MAX} AND regexp_replace({column}, '[{TOPIC_NAME_CHARACTERS}]', '') = '' "
        f"AND {column} NOT IN ('.', '..'))"
    )


def _configs_ok(column: str) -> str:
    """Configs the models accept: keys not empty and distinct, known sources, flags not null."""
    return (
        f"({column} IS NULL OR (forall({column}, c -> c.key <> '' AND c.source BETWEEN 0 AND {_LAST_SOURCE} "
        f"AND c.sensitive IS NOT NULL AND c.read_only IS NOT NULL) "
        f"AND size(array_distinct(transform({column}, c -> c.key))) = size({column})))"
    )


def _every(array: str, element_ok: str) -> str:
    """Every element of `array` satisfies `element_ok` (over `p` and its index `i`); an unknown
    (null) answer is a no."""
    return f"forall(transform({array}, (p, i) -> coalesce({element_ok}, false)), ok -> ok)"


# How the Parquet layout (snapshot_parquet.arrow_schema) holds a dict of the models: a list of
# structs, the key and the value each a field.
_ENTRIES = {"offsets_by_timestamp": ("timestamp", "offset")}


def _range_sql(where: str, low: int, high: int) -> str:
    """`value_ranges`' bound of `where` (`field`, `field[]`, `field{}`, `field{key}`) over `p`."""
    field = where.split("[")[0].split("{")[0]
    low_sql, high_sql = (f"{n}L" if not -(2**31) <= n < 2**31 else str(n) for n in (low, high))  # bigint literals
    nullable = not ObservedPartition.model_fields[field].is_required()  # a default: null, or left out (empty)
    if where.endswith("[]"):
        test = f"forall(p.{field}, b -> b BETWEEN {low_sql} AND {high_sql})"
    elif "{" in where:
        entry = _ENTRIES[field][0 if where.endswith("{key}") else 1]
        test = f"forall(p.{field}, e -> e.{entry} BETWEEN {low_sql} AND {high_sql})"
    else:
        test = f"p.{field} BETWEEN {low_sql} AND {high_sql}"
    return f"(p.{field} IS NULL OR {test})" if nullable and not where.endswith("[]") else test


# A partition as the models accept it (ObservedPartition): every rule of
# reconciler.models.partition_rules and every bound of its values.
_PARTITION_OK = " AND ".join(
    [*(rule.sql for rule in PARTITION_RULES), *(_range_sql(w, *b) for w, b in value_ranges(ObservedPartition).items())]
)

# And online, in sync and led by its preferred leader (compute._replica_problems, replica_health),
# on no drained broker.
_PARTITION_CLEAN = f"""
    {_PARTITION_OK} AND p.leader >= 0 AND size(p.replicas) > 0 AND try_element_at(p.replicas, 1) = p.leader
    AND size(p.isr) = size(p.replicas) AND NOT arrays_overlap(p.replicas, drain)"""

# The earlier run's partition as the models accept it (its replicas and leader equal today's).
_EARLIER_PARTITION_OK = _PARTITION_OK

# How the clean filter below accepts only what the models accept, per field of a topic and of a
# config: a clause of it, or None where the Parquet column's type says all (a string, a boolean
# read as False when null). A field added to the models without its entry here fails
# tests/drift/test_spark_clean.py.
_OPERATIONS_OK = f"(authorized_operations IS NULL OR forall(authorized_operations, o -> o IN ({_ACL})))"
TOPIC_FIELDS_CHECKED = {
    "name": _topic_name_ok("topic"),
    "topic_id": None,
    "internal": None,
    "partitions": "size(partitions) > 0",  # and each as _PARTITION_OK
    "configs": _configs_ok("configs"),
    "authorized_operations": _OPERATIONS_OK,
}
CONFIG_FIELDS_CHECKED = dict.fromkeys(("source", "sensitive", "read_only"), _configs_ok("configs")) | {"value": None}

# A row the models accept and whose topic is healthy, as far as the row shows.
_ROW_CLEAN = f"""
    cluster_checked AND topic IS NOT NULL AND status IS NULL AND {TOPIC_FIELDS_CHECKED["name"]}
    AND {TOPIC_FIELDS_CHECKED["partitions"]} AND {_every("partitions", _PARTITION_CLEAN)}
    AND (earlier_partitions IS NULL OR (size(earlier_partitions) > 0 AND {_every("earlier_partitions", _EARLIER_PARTITION_OK)}))
    AND {TOPIC_FIELDS_CHECKED["configs"]} AND {_configs_ok("earlier_configs")}
    AND (sizes_refused IS NULL OR sizes_refused <> '')
    AND {_OPERATIONS_OK}
    AND (cluster_authorized_operations IS NULL OR forall(cluster_authorized_operations, o -> o IN ({_ACL})))
    AND (group_offsets IS NULL OR forall(group_offsets, g -> g.group <> '' AND g.partition >= 0 AND g.offset >= 0))
    AND NOT array_contains(moving, topic)"""

# planner._plan_topic finds nothing to do: partitions, replication factor (replication.ReplicaPlanner)
# and _config_changes (each declared key set on the topic with its value; no undeclared key set on it).
_DECLARED_SHAPE = """
    want_plain AND want_partitions = size(partitions)
    AND forall(partitions, p -> size(p.replicas) = want_replication_factor)"""
_DECLARED_CONFIGS = f"""
    forall(want_configs, w -> exists(coalesce(configs, array()),
                                     c -> c.key = w.key AND c.source = {_TOPIC_SOURCE} AND c.value = w.value))
    AND forall(coalesce(configs, array()), c -> c.source <> {_TOPIC_SOURCE} OR exists(want_configs, w -> w.key = c.key))"""
_DECLARED_IN_SYNC = f"{_DECLARED_SHAPE} AND {_DECLARED_CONFIGS}"

# planner.unmanaged_topics leaves it out.
_NEVER_UNMANAGED = f"""
    {INTERNAL_TOPIC_SQL}
    OR exists(ignore_prefixes, x -> startswith(topic, x)) OR exists(ignore_infixes, x -> contains(topic, x))"""

# Against the earlier run: changelog.topic_changes lists nothing, compute._data_loss finds nothing
# (high watermarks seen then are still reached), lowered_retention has no earlier settings to cut
# against (equal configs, or unread on one side, which it and the change log skip alike).
_SAME_CONFIGS = "(coalesce(size(configs), 0) <= 0 OR coalesce(size(earlier_configs), 0) <= 0 OR configs = earlier_configs)"
_SAME_PARTITIONS = f"""
    (NOT compare OR (
        earlier_partitions IS NOT NULL
        AND (coalesce(topic_id, '') = '' OR coalesce(earlier_topic_id, '') = '' OR topic_id = earlier_topic_id)
        AND transform(partitions, p -> p.replicas) = transform(earlier_partitions, p -> p.replicas)
        AND transform(partitions, p -> p.leader) = transform(earlier_partitions, p -> p.leader)
        AND {
    _every("earlier_partitions", "p.high_watermark <= 0 OR try_element_at(partitions, i + 1).high_watermark >= p.high_watermark")
}))"""
_UNCHANGED = f"{_SAME_CONFIGS} AND {_SAME_PARTITIONS}"
# reconciler.drift.idle_topics finds it not idle: no idle_after, no evidence, or a record within idle_after.
_NOT_IDLE = """(idle_after IS NULL OR activity IS NULL
    OR exists(activity.partitions, p -> p.newest_timestamp >= activity.read_at_ms - idle_after))"""

CLEAN_SQL = (
    f"coalesce(({_ROW_CLEAN}) AND (CASE WHEN coalesce(declared, false) THEN ({_DECLARED_IN_SYNC}) "
    f"ELSE ({_NEVER_UNMANAGED}) END) AND ({_UNCHANGED}) AND {_NOT_IDLE}, false)"
)

# A topic whose findings, if any, follow from its configs alone (`reconciler.drift.quiet`'s quiet
# topics): the clauses above but those on configs. Quiet topics of a cluster alike in manifest entry
# (but the name), protection, configs, rights and earlier configs are one shape: the executors plan
# its first topic and give the others its findings renamed, when those name no topic (`spark_job`).
QUIET_SQL = (
    f"coalesce(({_ROW_CLEAN}) AND (NOT coalesce(declared, false) OR ({_DECLARED_SHAPE})) AND ({_SAME_PARTITIONS}) "
    f"AND {_NOT_IDLE}, false)"
)

# The clauses above, and for each finding a drift report can hold for a topic (TopicDrift.FINDINGS)
# and each action a plan can take (ActionKind), the clauses that prove there is none: a finding or
# an action added without its clause here fails tests/drift/test_spark_clean.py.
CLAUSES = {
    "row": _ROW_CLEAN,
    "declared": _DECLARED_IN_SYNC,
    "never unmanaged": _NEVER_UNMANAGED,
    "unchanged": _UNCHANGED,
    "not idle": _NOT_IDLE,
}
FINDINGS_RULED_OUT = {
    "hidden": ("row",),  # status null: read
    "unmanaged": ("declared", "never unmanaged"),
    "changes": ("declared",),  # as the actions below
    "config": ("declared",),
    "truncation": ("declared",),  # want_plain: no truncation rule
    "replicas": ("row", "declared"),  # the declared factor; led by the first replica, in sync, none drained
    "health": ("row",),  # online, in sync, preferred leaders, not being reassigned
    "data_loss": ("unchanged",),  # no high watermark gone back
    "retention": ("unchanged",),  # no earlier settings to cut against
    "unverified": ("row",),  # online (a fleet's snapshots carry no unanswered OffsetForLeaderEpoch)
    "diagnostics": ("row", "declared"),  # a row the models accept, nothing to plan
    "change_log": ("unchanged",),
    "idle": ("not idle",),
}
ACTIONS_RULED_OUT = {
    ActionKind.CREATE_TOPIC: ("row",),  # read: it exists
    ActionKind.ADD_PARTITIONS: ("declared",),  # the declared count
    ActionKind.REASSIGN_REPLICAS: ("row", "declared"),  # the declared factor, no pinned assignment, none drained
    ActionKind.ALTER_CONFIGS: ("declared",),  # every declared key set so, no other set on the topic
    ActionKind.TRUNCATE: ("declared",),  # want_plain: no truncation rule
    ActionKind.DELETE_TOPIC: ("declared",),  # want_plain: state present
}


def clean() -> Column:
    """True for a topic proven clean, over the input rows joined with `DESIRED_SCHEMA`'s and
    `CLUSTER_SCHEMA`'s columns; never null."""
    return F.expr(CLEAN_SQL)
