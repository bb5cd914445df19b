"""The rules of a snapshot's partitions (`reconciler.models.partition_rules`), stated once and
checked in two forms: whatever a fast path decides, it decides by the same rule as the models.
Here: every field of the models is covered by a rule or a bound, and the Python and numpy forms
of each rule agree on generated partitions, those near every edge included."""

from __future__ import annotations

import random

import pytest

from reconciler.models.observed import ObservedPartition
from reconciler.models.partition_rules import NAMES, OWN_RULES, PARTITION_RULES, breaks, holds, value_ranges

pa = pytest.importorskip("pyarrow")
np = pytest.importorskip("numpy")


def _field(where: str) -> str:
    return where.split("[")[0].split("{")[0]


def test_every_field_of_a_partition_is_bound_by_a_rule_or_a_range():
    covered = {f for rule in PARTITION_RULES for f in rule.fields} | {_field(w) for w in value_ranges(ObservedPartition)}
    assert set(ObservedPartition.model_fields) <= covered, set(ObservedPartition.model_fields) - covered
    assert covered <= set(ObservedPartition.model_fields)


def test_every_rule_reads_only_the_names_it_may_and_compiles():
    for rule in PARTITION_RULES:
        assert rule.names and set(rule.names) <= set(NAMES), rule.name
        holds([rule])  # a syntax error in its Python form fails here
    assert len({r.name for r in PARTITION_RULES}) == len(PARTITION_RULES)


def test_the_ranges_are_the_models_annotations():
    ranges = value_ranges(ObservedPartition)
    assert ranges["leader"] == (-1, 2**31 - 1) and ranges["replicas[]"] == (0, 2**31 - 1)
    assert ranges["log_start_offset"] == (-1, 2**63 - 1) and ranges["offsets_by_timestamp{key}"] == (-(2**63), 2**63 - 1)


def generated_partitions(seed: int, count: int) -> list[dict]:
    """Partitions near every rule's edges: offsets -1, equal or crossed; leaders in and out of the
    replicas; lists with repeats, or brokers outside the replicas; ids in and out of order."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        replicas = rng.choice([[], [1], [1, 2, 3], [2, 1], [1, 1], [3, 2, 1]])
        sub = [b for b in replicas if rng.random() < 0.7]
        out.append(
            {
                "partition": rng.choice([0, 0, 0, 1]),
                "leader": rng.choice([-1, 1, 2, 3, 4]),
                "leader_epoch": rng.choice([-1, 0, 7]),
                "replicas": replicas,
                "isr": rng.choice([sub, sub + [4], sub + sub[:1], list(replicas)]),
                "offline_replicas": rng.choice([[], [], sub[:1], [4], sub[:1] * 2]),
                "log_start_offset": rng.choice([-1, 0, 5, 10]),
                "high_watermark": rng.choice([-1, 0, 5, 10]),
                "size_bytes": rng.choice([None, 0, 100]),
                "epoch_end_offset": rng.choice([None, None, -1, 3]),
                "offsets_by_timestamp": rng.choice([{}, {}, {5: 1}, {5: -1}]),
            }
        )
    return out


def python_verdict(rule, p: dict) -> bool:
    model = ObservedPartition.model_construct(**p)
    return not breaks(rule, model, index=0)


def numpy_verdict(rule, p: dict) -> bool:
    """The rule's `columns` form on a topic of this one partition, as snapshot_columns builds it."""
    from reconciler.files import snapshot_columns
    from reconciler.files.snapshot_parquet import arrow_schema

    row = {**p, "offsets_by_timestamp": [{"timestamp": t, "offset": o} for t, o in p["offsets_by_timestamp"].items()]}
    parts = pa.array([row], type=arrow_schema().field("partitions").type.value_type)
    _, columns = snapshot_columns.rule_columns(np.array([0, 1], dtype=np.int64), parts)
    return bool(rule.columns(columns))


@pytest.mark.parametrize("rule", PARTITION_RULES, ids=lambda r: r.name)
def test_the_python_and_numpy_forms_of_each_rule_agree(rule):
    """On partitions holding the rules before it in the table, which a form may assume (the
    readers check them in order: `isr`'s numpy form takes the replicas to be distinct)."""
    before = PARTITION_RULES[: PARTITION_RULES.index(rule)]
    partitions = [p for p in generated_partitions(seed=len(rule.name), count=600) if all(python_verdict(r, p) for r in before)]
    verdicts = [(python_verdict(rule, p), numpy_verdict(rule, p)) for p in partitions]
    assert all(a == b for a, b in verdicts), next(p for p, (a, b) in zip(partitions, verdicts) if a != b)
    assert {a for a, _ in verdicts} == {True, False}  # both sides of the rule were generated


def test_the_python_and_numpy_forms_of_all_rules_agree():
    for p in generated_partitions(seed=11, count=400):
        assert all(python_verdict(r, p) for r in PARTITION_RULES) == all(numpy_verdict(r, p) for r in PARTITION_RULES), p


def test_a_partition_breaking_a_rule_is_refused_by_the_models_with_the_rule_s_problems():
    for p in generated_partitions(seed=3, count=300):
        broken = [r for r in OWN_RULES if not python_verdict(r, p)]
        try:
            ObservedPartition.model_validate({**p, "partition": 0})
        except Exception as e:  # noqa: BLE001  # ValidationError: its messages are the rules'
            assert broken, (p, e)
            messages = {error["msg"] for error in e.errors()}  # type: ignore[attr-defined]
            expected = {m for r in broken for _, m, _ in r.problems(ObservedPartition.model_construct(**p))}
            assert messages == expected, (p, messages, expected)
        else:
            assert not broken, p


def test_the_compiled_rules_are_the_rules_one_by_one():
    for p in generated_partitions(seed=5, count=300):
        model = ObservedPartition.model_construct(**p)
        together = holds(OWN_RULES)(
            leader=p["leader"],
            replicas=p["replicas"],
            isr=p["isr"],
            offline=p["offline_replicas"],
            start=p["log_start_offset"],
            end=p["high_watermark"],
            epoch_end=p["epoch_end_offset"],
            by_time=p["offsets_by_timestamp"],
        )
        assert together == (not any(breaks(r, model) for r in OWN_RULES))
