"""`read_json_file`, which reads a JSON snapshot through a window of its text (a million
partitions are 500 MB of text), against `read_json_document`, which reads the whole text: the
same value or the same error for every file, good or bad, with windows small enough that every
value, number and multi-byte character is cut somewhere."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from reconciler.errors import SnapshotError
from reconciler.files import json_document
from reconciler.files.json_document import read_json_document, read_json_file
from reconciler.files.snapshot_problems import SNAPSHOT_KEYS

HERE = Path(__file__).resolve().parent
FILES = [HERE / "good.json", *sorted((HERE / "bad").glob("*.json"))]

GOOD = (HERE / "good.json").read_text(encoding="utf-8")
CRAFTED = {
    "byte order mark": b"\xef\xbb\xbf" + GOOD.encode(),
    "two byte order marks": b"\xef\xbb\xbf\xef\xbb\xbf{}",
    "multi-byte characters": json.dumps(
        {"a": {"é": "日本語 ✓", "b": [1.5, -2e-7, 12345678901234567890]}}, ensure_ascii=False
    ).encode(),
    "numbers last in their object": b'{"a": 123456789, "b": {"c": 98765432109876}}',
    "empty objects": b'{"a": {}, "b": {"c": {}}, "d": []}',
    "a key twice in a topic": b'{"topics": {"t": 1, "t": 2}}',
    "a key twice at the top": b'{"a": 1, "b": 2, "a": 3}',
    "a key twice deeper": b'{"topics": {"t": {"x": 1, "x": 2}}}',
    "a paired surrogate escape": b'{"topics": {"t": "\\ud83d\\ude00"}}',
    "a lone surrogate escape as a key": b'{"topics": {"\\ud800": 1}}',
    "a second document": b'{"a": 1} {"b": 2}',
    "a trailing comma": b'{"a": 1,}',
    "cut off": b'{"topics": {"t": [1, 2',
    "whitespace only": b" \n\t ",
    "an array": b"[1, 2]",
    "NaN deep": b'{"topics": {"t": {"x": NaN}}}',
    "not UTF-8 late": b'{"topics": {"t": "\xff"}}',
}


def outcome(read) -> tuple[str, Any]:
    try:
        return ("value", read())
    except SnapshotError as e:
        return ("error", str(e))


def both(raw: bytes, chunk: int, monkeypatch: pytest.MonkeyPatch) -> tuple[object, object]:
    monkeypatch.setattr(json_document._Window, "CHUNK", chunk)
    windowed = outcome(lambda: read_json_file(io.BytesIO(raw), "snap.json", "snapshot", SNAPSHOT_KEYS))
    whole = outcome(lambda: read_json_document(raw, "snap.json", "snapshot", SNAPSHOT_KEYS))
    return windowed, whole


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
@pytest.mark.parametrize("chunk", [3, 1 << 20])
def test_every_snapshot_file_reads_as_the_whole_text_does(path: Path, chunk: int, monkeypatch: pytest.MonkeyPatch):
    windowed, whole = both(path.read_bytes(), chunk, monkeypatch)
    assert windowed == whole


@pytest.mark.parametrize("case", sorted(CRAFTED))
@pytest.mark.parametrize("chunk", [1, 2, 5])
def test_cut_anywhere_the_value_and_the_error_are_the_same(case: str, chunk: int, monkeypatch: pytest.MonkeyPatch):
    windowed, whole = both(CRAFTED[case], chunk, monkeypatch)
    assert windowed == whole


@pytest.mark.parametrize("chunk", [1, 7, 4096])
def test_a_good_snapshot_is_read_by_the_window_itself(chunk: int, monkeypatch: pytest.MonkeyPatch):
    """Not by the whole-text reader it falls back on: that would hold the text beside the values."""
    monkeypatch.setattr(json_document._Window, "CHUNK", chunk)
    cases = ("byte order mark", "multi-byte characters", "numbers last in their object")
    for raw in (GOOD.encode(), *(CRAFTED[c] for c in cases)):
        assert json_document._Window(io.BytesIO(raw), {}).document() == json.loads(raw.decode("utf-8-sig"))


def _pairs(value) -> int:
    """The key-value pairs of every object in `value`, as an `each` counts them."""
    if isinstance(value, dict):
        return len(value) + sum(_pairs(v) for v in value.values())
    if isinstance(value, list):
        return sum(_pairs(v) for v in value)
    return 0


def test_each_member_of_a_member_is_handed_over_as_read():
    raw = b'{"topics": {"a": {"n": 1}, "b": [2]}, "other": {"c": {"n": 3}}}'
    seen = []

    def each(value):
        seen.append(value)
        return ("built", value), _pairs(value)

    read = read_json_file(io.BytesIO(raw), "snap.json", each={"topics": each})
    assert read == {"topics": {"a": ("built", {"n": 1}), "b": ("built", [2])}, "other": {"c": {"n": 3}}}
    assert seen == [{"n": 1}, [2]]


EACH_CASES = {
    "a key twice in a topic's object": b'{"topics": {"t": {"x": 1, "y": {"z": 2, "z": 3}}}}',
    "a key twice, a colon in a string": b'{"topics": {"t": {"x": "a:b", "x": 2}}}',
    "a colon in a string": b'{"topics": {"t": {"x": "a:b", "y": {"k:": 2}}}}',
    "colons in strings, a key twice": b'{"topics": {"t": {"x": "a:b:c", "y": 1, "y": 1}}}',
    "a key twice, left by each": b'{"topics": {"t": {"left": true, "x": 1, "x": 2}}}',
    "left by each": b'{"topics": {"t": {"left": true}, "u": {"y": [1, {"z": 2}]}}}',
}


@pytest.mark.parametrize("case", sorted(EACH_CASES))
@pytest.mark.parametrize("chunk", [1, 3, 1 << 20])
def test_each_is_given_values_parsed_without_the_check_and_a_key_twice_is_still_refused(
    case: str, chunk: int, monkeypatch: pytest.MonkeyPatch
):
    """A value `each` takes is parsed without the check for a key twice; its colons against the
    pairs `each` counts show one, and the error is then the whole reader's."""
    monkeypatch.setattr(json_document._Window, "CHUNK", chunk)
    raw = EACH_CASES[case]

    def each(value):
        return None if isinstance(value, dict) and value.get("left") else (("built", value), _pairs(value))

    windowed = outcome(lambda: read_json_file(io.BytesIO(raw), "snap.json", "snapshot", SNAPSHOT_KEYS, each={"topics": each}))
    kind, whole = outcome(lambda: read_json_document(raw, "snap.json", "snapshot", SNAPSHOT_KEYS))
    if kind == "error":
        assert windowed == (kind, whole)
        assert "appears twice" in whole
    else:
        expected = {name: value if value.get("left") else ("built", value) for name, value in whole["topics"].items()}
        assert windowed == ("value", {"topics": expected})


# Indented as `reconcile snapshot` writes (json.dumps(indent=2)), so that topics are parsed by orjson.
INDENTED: dict[str, Any] = {
    "a topic": {"topics": {"t": {"name": "t", "partitions": [{"p": 0, "r": [1, 2]}], "c": {"k": {"v": "x:y"}}}}},
    "a number beyond 64 bits": {"topics": {"t": {"offset": 123456789012345678901234567890}, "u": {"offset": -(2**64)}}},
    "a number of 4000 digits": {"topics": {"t": {"offset": int("9" * 4000)}}},
    "a large float": {"topics": {"t": {"x": 1e300, "y": 2.5e-5}}},
    "NaN": {"topics": {"t": {"x": float("nan")}}},
    "a lone surrogate": {"topics": {"t": {"x": "\ud800"}}},
    "an object indented deeper": {"topics": {"t": {"a": {"b": {"c": {}}}, "d": [{"e": 1}]}, "u": {}}},
    "a list, not an object": {"topics": {"t": [1, {"a": 2}]}},
    "left by each": {"topics": {"t": {"left": True}, "u": {"x": 1}}},
}


def _indented(case: str) -> bytes:
    return json.dumps(INDENTED[case], indent=2).encode()


def _holds_a_float(value: Any) -> bool:
    """A float, or an integer beyond 64 bits (which orjson makes a float), anywhere in `value`."""
    if isinstance(value, dict):
        return any(_holds_a_float(v) for v in value.values())
    if isinstance(value, list):
        return any(_holds_a_float(v) for v in value)
    return isinstance(value, float) or (isinstance(value, int) and not -(2**63) <= value < 2**64)


def _left(value: Any) -> bool:
    """What the `each` below leaves: as every `each` must, any value holding a float."""
    return (isinstance(value, dict) and bool(value.get("left"))) or _holds_a_float(value)


def _each(value: Any) -> tuple[Any, int] | None:
    return None if _left(value) else (("built", value), _pairs(value))


@pytest.mark.parametrize("case", [*sorted(INDENTED), "a key twice", "a key twice deeper", *(p.name for p in FILES)])
@pytest.mark.parametrize("chunk", [7, 64, 1 << 20])
def test_indented_topics_read_as_the_whole_text_does(case: str, chunk: int, monkeypatch: pytest.MonkeyPatch):
    """Topics closed where json.dumps(indent=2) closes them are parsed by orjson: the same values
    and the same errors as the whole reader, whatever orjson does with numbers beyond 64 bits,
    NaN or escaped surrogates."""
    monkeypatch.setattr(json_document._Window, "CHUNK", chunk)
    if case.endswith(".json"):
        raw = next(p for p in FILES if p.name == case).read_bytes()
    elif case.startswith("a key twice"):
        inner = '"x": 1, "x": 2' if case == "a key twice" else '"x": {"y": 1, "y": 2}'
        raw = ('{\n  "topics": {\n    "t": {\n      ' + inner + "\n    }\n  }\n}").encode()
    else:
        raw = _indented(case)
    windowed = outcome(lambda: read_json_file(io.BytesIO(raw), "snap.json", "snapshot", SNAPSHOT_KEYS, each={"topics": _each}))
    kind, whole = outcome(lambda: read_json_document(raw, "snap.json", "snapshot", SNAPSHOT_KEYS))
    if kind == "value" and isinstance(whole, dict) and isinstance(whole.get("topics"), dict):
        whole = {**whole, "topics": {n: v if _left(v) else ("built", v) for n, v in whole["topics"].items()}}
    assert windowed == (kind, whole)


def test_an_indented_topic_is_parsed_by_orjson(monkeypatch: pytest.MonkeyPatch):
    """The fast path is taken (a reader that never took it would pass the test above too)."""
    parsed: list[str] = []
    real = json_document._orjson_loads()

    def loads(text: str) -> Any:
        parsed.append(text)
        return real(text)

    monkeypatch.setattr(json_document, "_orjson_loads", lambda: loads)
    read_json_file(io.BytesIO(_indented("a topic")), "snap.json", each={"topics": _each})
    assert [json.loads(text) for text in parsed] == [INDENTED["a topic"]["topics"]["t"]]
