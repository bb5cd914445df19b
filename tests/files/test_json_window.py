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
