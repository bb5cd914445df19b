"""Reading and writing observed-state snapshots: the one reader every command uses.

`load_snapshot(path)` reads a JSON snapshot (`reconcile snapshot -o FILE`) or a Parquet one
(`--format parquet`), told apart by their content (Parquet files start with the magic bytes
`PAR1`), not by their names. Parquet needs pyarrow (`pip install 'kafka-reconciler[spark]'`) and
imports it only then.

Deleting records cannot be undone, and the planner turns a snapshot's offsets into DeleteRecords
targets, so a snapshot is refused whole unless every value passes the rules in
`reconciler.models.observed`: the error names the file and the JSON path (or the Parquet row) of
each bad value (the first `MAX_PROBLEMS`, then how many more), and nothing is planned. Files that
are not JSON at all (not UTF-8, empty, nested thousands deep, numbers of thousands of digits, a
top level that is not an object) get a one-paragraph error naming the file, never a traceback.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from reconciler.errors import MAX_PROBLEMS, SnapshotError, problem_report, shown, shown_text, validation_problems
from reconciler.models.observed import FILE_CONTEXT, INT32_MAX, INT64_MAX, ObservedState

PARQUET_MAGIC = b"PAR1"
# The dict-valued fields of a snapshot, with how many levels of keys follow each (for JSON paths).
SNAPSHOT_KEYS = {"topics": 1, "configs": 1, "offsets_by_timestamp": 1, "group_offsets": 3}
TAKE_A_NEW_ONE = "Take a new one with `reconcile snapshot`; do not edit snapshots by hand."


def load_snapshot(path: str | Path) -> ObservedState:
    """The snapshot in `path`, JSON or Parquet, checked; SnapshotError naming the file otherwise."""
    head = _read(path, 4)
    if head == PARQUET_MAGIC:
        from reconciler.drift.columnar import read_snapshot_parquet

        return read_snapshot_parquet(path)
    data = read_json_document(_read(path), str(path), "snapshot")
    if not isinstance(data, dict):
        hint = " (a .parquet name, but the file does not start with Parquet's magic bytes PAR1)" \
            if str(path).endswith(".parquet") else ""
        raise SnapshotError(f"{path} holds {_kind(data)}, not a snapshot (a JSON object){hint}. {TAKE_A_NEW_ONE}")
    return validate_snapshot(data, str(path))


def validate_snapshot(data: dict, origin: str) -> ObservedState:
    try:
        return ObservedState.model_validate(data, context=FILE_CONTEXT)
    except ValidationError as e:
        raise invalid_snapshot(origin, e.error_count(),
                               validation_problems(e, MAX_PROBLEMS, SNAPSHOT_KEYS, explain=explain)) from e


def explain(error: Any) -> str | None:
    """Clearer words than pydantic's for the snapshot's own ranges."""
    bound = (error.get("ctx") or {})
    if error["type"] == "greater_than_equal" and bound.get("ge") == -1:
        return "must be >= 0 (-1 is the marker for a value not known; see reconciler.models.observed)"
    if error["type"] == "less_than_equal" and bound.get("le") in (INT64_MAX, INT32_MAX):
        width = "int64" if bound["le"] == INT64_MAX else "int32"
        return f"above {width}'s maximum {bound['le']}, so Kafka cannot have reported it"
    return None


def invalid_snapshot(origin: str, count: int, problems: list[str]) -> SnapshotError:
    """One error listing the problems (at most MAX_PROBLEMS of `count`)."""
    head = (f"{origin} is not a valid snapshot ({count} problem{'s' if count != 1 else ''}), so it is refused "
            f"whole and nothing ran on it. {TAKE_A_NEW_ONE}")
    return SnapshotError(problem_report(head, count, problems))


def check_cluster(observed: ObservedState, path: str | Path, manifests: Any, cluster: str | None = None) -> ObservedState:
    """The snapshot is of `cluster` (when given) and of a cluster the manifests declare (`manifests`:
    anything with `cluster_names()`); SnapshotError naming the file otherwise."""
    if cluster and cluster != observed.cluster:
        raise SnapshotError(f"{path} is a snapshot of cluster {shown(observed.cluster)}, not {shown(cluster)}; "
                            "pass the matching --cluster or another snapshot.")
    known = manifests.cluster_names()
    if observed.cluster not in known:
        raise SnapshotError(
            f"{path} is a snapshot of cluster {shown(observed.cluster)}, which the manifests do not declare "
            f"(known: {shown_text(', '.join(known), 300) or 'none'}); add a `kind: Cluster` document for it, or use a "
            "snapshot of a declared cluster.")
    return observed


def save_snapshot(state: ObservedState, path: str | Path) -> None:
    Path(path).write_text(state.to_json(), encoding="utf-8")


# --- files and JSON -------------------------------------------------------------------------------

def _read(path: str | Path, size: int = -1) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(size)
    except IsADirectoryError as e:
        raise SnapshotError(f"{path} is a directory, not a snapshot file; give a file written by "
                            "`reconcile snapshot` (a fleet directory goes to `drift --fleet`).") from e
    except OSError as e:
        raise SnapshotError(f"cannot read snapshot {path}: {e.strerror}. Check the path, or take a "
                            "snapshot with `reconcile snapshot --cluster NAME -o FILE`.") from e


def _kind(data: Any) -> str:
    if data is None:
        return "null"
    return {list: "a JSON array", str: "a JSON string", bool: "a JSON boolean", int: "a JSON number",
            float: "a JSON number"}.get(type(data), type(data).__name__)


def _no_constants(name: str):
    raise ValueError(f"{name} is not a JSON number")


_LONG_NUMBER = re.compile(r"\d{4301,}")  # Python's int() refuses more digits


class _DuplicateKey(ValueError):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    """An object of the document; json.loads would keep the last of two equal keys without a word."""
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        raise _DuplicateKey(next(k for k, _ in pairs if k in seen or seen.add(k)))
    return result


def read_json_document(raw: bytes | str, origin: str, what: str = "snapshot") -> Any:
    """JSON text (bytes: UTF-8) parsed, or SnapshotError naming `origin` and the place: a file that
    is empty, not UTF-8, nested too deep for the parser, or holds NaN/Infinity or a number of
    thousands of digits, is refused with a reason, never a traceback."""
    redo = {"snapshot": "take a new one with `reconcile snapshot`",
            "saved plan": "save a plan with `reconcile plan --format json -o FILE`"}.get(what, "write it again")
    if isinstance(raw, bytes):
        if raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]  # a UTF-8 byte order mark, as some editors write
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            line = raw.count(b"\n", 0, e.start) + 1
            raise SnapshotError(f"{origin} is not UTF-8 text (byte 0x{raw[e.start]:02x} at offset {e.start:,}, line "
                                f"{line}), so it is not a {what}; {redo}.") from None
    else:
        text = raw
    if not text.strip():
        raise SnapshotError(f"{origin} is empty, not a {what}; {redo}.")
    try:
        data = json.loads(text, parse_constant=_no_constants, object_pairs_hook=_unique_keys)
    except _DuplicateKey as e:
        raise SnapshotError(f"{origin}: the key {shown(e.key)} appears twice in one object; which of the two values "
                            f"was meant is not for reconcile to guess, so it is not a {what}; {redo}.") from None
    except json.JSONDecodeError as e:
        raise SnapshotError(f"{origin} is not JSON (line {e.lineno}, column {e.colno}: {shown_text(e.msg, 200)}); a {what} "
                            f"is the JSON written by reconcile; {redo}.") from None
    except RecursionError:
        raise SnapshotError(f"{origin}: not a {what}: arrays or objects are nested too deeply for the JSON parser "
                            f"(a {what} nests a few levels); {redo}.") from None
    except ValueError as e:
        found = _LONG_NUMBER.search(text)
        if found:
            line = text.count("\n", 0, found.start()) + 1
            raise SnapshotError(f"{origin}:{line}: a number of {found.end() - found.start():,} digits or more; no value "
                                f"in a {what} is that large (offsets are 64-bit); {redo}.") from None
        raise SnapshotError(f"{origin} is not JSON ({shown_text(str(e), 200)}); {redo}.") from None
    if _SURROGATE_ESCAPE.search(text):
        _refuse_lone_surrogates(data, origin, what, redo)
    return data


# json.dumps writes characters outside the BMP as escaped surrogate pairs, which json.loads joins
# again; an escaped surrogate without its pair becomes a string that cannot be printed or
# written as UTF-8, so it would fail far away, in the middle of a plan's output.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _refuse_lone_surrogates(data: Any, origin: str, what: str, redo: str) -> None:
    from reconciler.errors import json_path

    found = []
    stack: list[tuple[tuple, Any]] = [((), data)]
    while stack and len(found) < MAX_PROBLEMS:
        loc, value = stack.pop()
        if isinstance(value, dict):
            for key, item in reversed(list(value.items())):
                if not _encodable(key):
                    found.append((*loc, key, "[key]"))
                stack.append(((*loc, key), item))
        elif isinstance(value, list):
            stack.extend(((*loc, i), item) for i, item in reversed(list(enumerate(value))))
        elif isinstance(value, str) and not _encodable(value):
            found.append(loc)
    if found:
        places = "; ".join(json_path(tuple(_printable(x) for x in loc), SNAPSHOT_KEYS if what == "snapshot" else None)
                           or "(top level)" for loc in found)
        raise SnapshotError(f"{origin}: not a {what}: a string holds an escaped UTF-16 surrogate without its pair "
                            f"(\\udXXX), which is no character at: {places}; {redo}.")


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _printable(element: Any) -> Any:
    return element.encode("utf-8", "backslashreplace").decode("utf-8") if isinstance(element, str) else element
