"""A value of the wrong type in any snapshot is refused, naming the file, never read as something
else (a Parquet `internal` column of the strings "false"/"true" was read as true, so a cluster's
unmanaged topics vanished from a fleet report). Every column and every field of a column's structs
(Parquet), every field of every model (JSON): the cases are derived from the schema and the
models, so a column or field added is covered without a line here. Both drift engines refuse a bad
Parquet file before they read a row, with the same message."""

from __future__ import annotations

import json
from pathlib import Path
from typing import cast

import pytest
from pydantic import BaseModel

from reconciler.drift import engine
from reconciler.errors import SnapshotError
from reconciler.files.fleet import write_fleet_snapshot
from reconciler.files.snapshot import load_snapshot
from reconciler.files.snapshot_parquet import arrow_schema
from reconciler.models.desired import DesiredState
from reconciler.models.observed import Broker, ObservedConfig, ObservedPartition, ObservedState, ObservedTopic
from tests.files.test_bad_snapshots import GOOD

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


def _never_used(cluster: str) -> DesiredState:
    """The file is refused before any desired state is used."""
    return cast(DesiredState, None)


def _leaves(arrow_type, where: str = "") -> list[str]:
    """The paths (`partitions[].replicas[]`) of every value that is no list or struct."""
    if pa.types.is_struct(arrow_type):
        return [leaf for f in arrow_type for leaf in _leaves(f.type, f"{where}.{f.name}")]
    if pa.types.is_list(arrow_type):
        return _leaves(arrow_type.value_type, f"{where}[]")
    return [where]


def _retyped(arrow_type, path: str):
    """`arrow_type` with the leaf at `path` made a type it must not be: text, or bytes where it is text."""
    if not path:
        return pa.binary() if pa.types.is_string(arrow_type) else pa.string()
    if path.startswith("[]"):
        return pa.list_(_retyped(arrow_type.value_type, path[2:]))
    name, _, rest = path[1:].partition(".")
    name, bracket, more = name.partition("[]")
    rest = bracket + more + ("." + rest if rest else "")
    return pa.struct([pa.field(f.name, _retyped(f.type, rest) if f.name == name else f.type) for f in arrow_type])


PARQUET_CASES = [(column.name, leaf) for column in arrow_schema() for leaf in _leaves(column.type)]


@pytest.fixture(scope="module")
def good_parquet(tmp_path_factory) -> Path:
    return write_fleet_snapshot(load_snapshot(GOOD), tmp_path_factory.mktemp("fleet"))


@pytest.mark.parametrize("name, leaf", PARQUET_CASES, ids=[n + leaf for n, leaf in PARQUET_CASES])
def test_a_parquet_column_of_another_type_is_refused_by_both_engines_naming_the_file(name, leaf, good_parquet, tmp_path):
    table = pq.read_table(good_parquet)
    index = table.schema.get_field_index(name)
    wrong = _retyped(table.schema.field(index).type, leaf)
    bad = tmp_path / "fleet" / good_parquet.parent.name / good_parquet.name
    bad.parent.mkdir(parents=True)
    retyped = table.set_column(index, pa.field(name, wrong), table.column(index).cast(wrong))
    pq.write_table(retyped.replace_schema_metadata(table.schema.metadata), bad)

    messages = []
    for refused_by in (
        load_snapshot,
        lambda p: engine.run_fleet(p.parent.parent, _never_used, engine="local"),
        lambda p: engine.run_fleet(p.parent.parent, _never_used, engine="spark"),  # before Spark starts
    ):
        with pytest.raises(SnapshotError) as refused:
            refused_by(bad)
        messages.append(str(refused.value))
    assert messages[0] == messages[1] == messages[2], messages
    assert messages[0].startswith(f"{bad} is not a valid snapshot (1 problem), so it is refused whole"), messages[0]
    said = "binary" if leaf_type(table.schema.field(index).type, leaf) == pa.string() else "string"
    assert f"column {name}{leaf} is {said}; a snapshot's is" in messages[0], messages[0]


def leaf_type(arrow_type, path: str):
    if not path:
        return arrow_type
    if path.startswith("[]"):
        return leaf_type(arrow_type.value_type, path[2:])
    name, _, rest = path[1:].partition(".")
    name, bracket, more = name.partition("[]")
    return leaf_type(arrow_type.field(name).type, bracket + more + ("." + rest if rest else ""))


def test_every_column_and_field_of_the_format_has_a_case():
    cases = [n + leaf for n, leaf in PARQUET_CASES]
    assert len(cases) == len(set(cases)) >= 30
    assert {"internal", "partitions[].leader", "partitions[].replicas[]", "configs[].sensitive", "run"} <= set(cases)


# --- JSON: each field of each model, given a value of another type --------------------------------

_GOOD = json.loads(GOOD.read_text())
_TOPIC = next(iter(_GOOD["topics"]))
_PLACES: dict[type[BaseModel], tuple[str | int, ...]] = {
    ObservedState: (),
    ObservedTopic: ("topics", _TOPIC),
    ObservedPartition: ("topics", _TOPIC, "partitions", 0),
    ObservedConfig: ("topics", _TOPIC, "configs", next(iter(_GOOD["topics"][_TOPIC]["configs"]))),
    Broker: ("brokers", 0),
}
JSON_CASES = [(model, field) for model in _PLACES for field in model.model_fields]


def _wrong_value(model, field: str):
    """A number where the field holds text, else the text "false" (which no other field takes)."""
    schema = model.model_json_schema()["properties"][field]
    kinds = [schema, *schema.get("anyOf", [])]
    return 7 if any(k.get("type") == "string" and "format" not in k and "enum" not in k for k in kinds) else "false"


@pytest.mark.parametrize("model, field", JSON_CASES, ids=[f"{m.__name__}.{f}" for m, f in JSON_CASES])
def test_a_json_value_of_another_type_is_refused_naming_the_file(model, field, tmp_path):
    data = json.loads(GOOD.read_text())
    place = data
    for step in _PLACES[model]:
        place = place[step]
    place[field] = _wrong_value(model, field)
    bad = tmp_path / "snap.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(SnapshotError) as refused:
        load_snapshot(bad)
    assert str(refused.value).startswith(f"{bad} is not a valid snapshot"), str(refused.value)
    assert field in str(refused.value)
