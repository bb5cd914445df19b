"""JSON snapshots: `reconcile snapshot -o FILE` writes one, every command that takes
`--snapshot FILE` reads it back (through `reconciler.files.snapshot.load_snapshot`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, BinaryIO

from pydantic import ValidationError

from reconciler.errors import MAX_PROBLEMS, SnapshotError, validation_problems
from reconciler.files.json_document import read_json_file
from reconciler.files.snapshot_problems import SNAPSHOT_KEYS, TAKE_A_NEW_ONE, explain, invalid_snapshot
from reconciler.models.observed import ObservedConfig, ObservedState, counted_topic_from_file


def read_snapshot_json(file: BinaryIO, path: str | Path) -> ObservedState:
    """The snapshot in `file` (the file at `path`, opened binary), checked; SnapshotError naming the file otherwise."""
    shared: dict[tuple, ObservedConfig] = {}
    data = read_json_file(
        file, str(path), "snapshot", SNAPSHOT_KEYS, each={"topics": lambda topic: counted_topic_from_file(topic, shared)}
    )
    if not isinstance(data, dict):
        hint = (
            " (a .parquet name, but the file does not start with Parquet's magic bytes PAR1)"
            if str(path).endswith(".parquet")
            else ""
        )
        raise SnapshotError(f"{path} holds {_kind(data)}, not a snapshot (a JSON object){hint}. {TAKE_A_NEW_ONE}")
    return validate_snapshot(data, str(path))


def validate_snapshot(data: dict, origin: str) -> ObservedState:
    try:
        return ObservedState.from_file(data)
    except ValidationError as e:
        raise invalid_snapshot(
            origin, e.error_count(), validation_problems(e, MAX_PROBLEMS, SNAPSHOT_KEYS, explain=explain)
        ) from e


def write_snapshot_json(state: ObservedState, path: str | Path) -> None:
    Path(path).write_text(state.to_json(), encoding="utf-8")


def _kind(data: Any) -> str:
    if data is None:
        return "null"
    return {list: "a JSON array", str: "a JSON string", bool: "a JSON boolean", int: "a JSON number", float: "a JSON number"}.get(
        type(data), type(data).__name__
    )
