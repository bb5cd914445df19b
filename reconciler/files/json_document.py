"""Strict JSON for the files the reconciler reads back: JSON snapshots, the header of a Parquet
snapshot, and saved plans; and `json_text`, the indented JSON it writes.

`json.loads` alone would accept what no reconcile wrote and fail later, far from the file: two
equal keys in one object (the last one silently wins), NaN and Infinity, numbers of thousands of
digits, nesting deep enough to exhaust the parser, escaped surrogates that are no character.
Each is refused here with a one-paragraph error naming the file and the place.
"""

from __future__ import annotations

import codecs
import functools
import json
import re
from collections.abc import Callable, Mapping
from typing import Any, BinaryIO, NoReturn

from pydantic_core import PydanticSerializationError, to_json

from reconciler.errors import MAX_PROBLEMS, SnapshotError, at, byte_line_and_column, json_path, shown, shown_text

# What to do instead, per kind of document.
_REDO = {
    "snapshot": "take a new one with `reconcile snapshot`",
    "saved plan": "save a plan with `reconcile plan --format json -o FILE`",
}


def _no_constants(name: str) -> NoReturn:
    raise ValueError(f"{name} is not a JSON number")


class _DuplicateKey(ValueError):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    """An object of the document; json.loads would keep the last of two equal keys without a word."""
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return result


def read_json_document(
    raw: bytes | str,
    origin: str,
    what: str = "snapshot",
    keyed: Mapping[str, int] | None = None,
    within: str | None = None,
) -> Any:
    """JSON text (bytes: UTF-8) parsed, or SnapshotError naming `origin` and the place: a file that
    is empty, not UTF-8, nested too deep for the parser, or holds NaN/Infinity, a key twice in one
    object or a number of thousands of digits, is refused with a reason, never a traceback. A place
    in the file is said `FILE:LINE:COLUMN: ...`, as manifest problems are. `within`: the part of
    the file `origin` that holds the JSON when it is not the whole file (a Parquet file's key-value
    metadata); places are then said within that part. `keyed`: the document's dict-valued fields,
    for the JSON paths in messages (see `reconciler.errors.json_path`)."""
    redo = _REDO.get(what, "write it again")
    file = origin

    def refused(line: int, column: int, problem: str) -> SnapshotError:
        """The file refused, the place on a line of its own as a manifest problem is."""
        where = f"{file}: {within}, line {line}, column {column}" if within else at(file, line, column)
        return SnapshotError(f"{file} is not a {what}; {redo}.\n  {where}: {problem}")

    if within:
        origin = f"{file} ({within})"
    if isinstance(raw, bytes):
        if raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]  # a UTF-8 byte order mark, as some editors write
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            problem = f"not UTF-8 text (byte 0x{raw[e.start]:02x} at offset {e.start:,})"
            raise refused(*byte_line_and_column(raw, e.start), problem) from None
    else:
        text = raw
    if not text or text.isspace():  # not text.strip(), which would copy a snapshot of 50 MB
        raise SnapshotError(f"{origin} is empty, not a {what}; {redo}.")
    try:
        data = json.loads(text, parse_constant=_no_constants, object_pairs_hook=_unique_keys)
    except _DuplicateKey as e:
        problem = (
            f"the key {shown(e.key)} appears twice in one object; which of the two values was meant is not for reconcile to guess"
        )
        found = _second_key(text, e.key)
        if found is None:  # not found again: cannot happen, but the message stands without a place
            raise SnapshotError(f"{origin}: {problem}, so it is not a {what}; {redo}.") from None
        raise refused(*found, problem) from None
    except json.JSONDecodeError as e:
        problem = f"not JSON ({shown_text(e.msg, 200)}); a {what} is the JSON written by reconcile"
        raise refused(e.lineno, e.colno, problem) from None
    except RecursionError:
        raise SnapshotError(
            f"{origin}: not a {what}: arrays or objects are nested too deeply for the JSON parser "
            f"(a {what} nests a few levels); {redo}."
        ) from None
    except ValueError as e:
        token = _outside_strings(text)
        if token is None:
            raise SnapshotError(f"{origin} is not JSON ({shown_text(str(e), 200)}); {redo}.") from None
        if token.group("long"):
            problem = (
                f"a number of {len(token.group()):,} digits or more; no value in a {what} is that large (offsets are 64-bit)"
            )
        else:  # NaN or Infinity
            problem = shown_text(str(e), 200)
        raise refused(*_line_and_column(text, token.start()), problem) from None
    if _SURROGATE_ESCAPE.search(text):
        _refuse_lone_surrogates(data, origin, what, redo, keyed)
    return data


# For `each` of `read_json_file`: a value parsed without the check -> (its replacement, the
# key-value pairs its objects hold), or None.
Each = Callable[[Any], "tuple[Any, int] | None"]


def read_json_file(
    file: BinaryIO,
    origin: str,
    what: str = "snapshot",
    keyed: Mapping[str, int] | None = None,
    each: Mapping[str, Each] | None = None,
) -> Any:
    """`read_json_document` of the whole of `file` (binary, at its start): the same value, or the
    same error. A document that is an object is read a member at a time, and the members of
    its object members one at a time too (a snapshot's topics), from a window of the text: a
    snapshot of a million partitions is 500 MB of text, which need not be held beside its
    values. Whatever the window cannot take (an error anywhere, a key twice, an escaped
    surrogate, a document that is not an object) is read again whole by `read_json_document`,
    whose place and words for it are the only ones.

    `each`: for a member of the document, a function its own members' values are replaced by as
    they are read (a snapshot's topics by their models), where the window reads them. It is given
    the value parsed without the check for a key twice (the json module's own objects, much
    faster to build than through a hook) and gives back (what replaces it, how many key-value
    pairs the objects of the value hold), or None to leave the value as `read_json_document`
    would give it. Each key-value pair has one colon in the text outside strings, so a value whose
    text holds as many colons as its objects hold pairs has no key twice; any other value is
    parsed again with the check. `each` must take the values `read_json_document` gives too, and
    no value holding a float: an object may be parsed by orjson, which makes an integer beyond 64
    bits a float (`_Window._indented_object`)."""
    try:
        return _Window(file, each or {}).document()
    except _Whole:
        pass
    file.seek(0)
    return read_json_document(file.read(), origin, what, keyed)


class _Whole(Exception):
    """The document is read whole after all (see `read_json_file`)."""


# The json module's scanner of one value (json.scanner), as `read_json_document` parses with, and
# the same without the check for a key twice (see `each` in `read_json_file`).
_SCAN: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder(
    parse_constant=_no_constants, object_pairs_hook=_unique_keys
).scan_once  # type: ignore[attr-defined]
_SCAN_UNCHECKED: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder(parse_constant=_no_constants).scan_once  # type: ignore[attr-defined]
_SPACE = re.compile(r"[ \t\n\r]*")


# Where json.dumps(indent=2) closes an object that is a member of a member of the document.
_INDENTED_END = "\n    }"


@functools.cache
def _orjson_loads() -> Callable[[str], Any]:
    import orjson  # for snapshots only: the other commands that import this module do not pay for it

    return orjson.loads


class _Window:
    """A JSON object read from a binary file through a window of its text, two levels deep; each
    value below that parsed whole by the json module's scanner, as `json.loads` parses it (or, for
    `each`, by orjson where it gives the same: `_indented_object`)."""

    CHUNK = 1 << 20

    def __init__(self, file: BinaryIO, each: Mapping[str, Each]):
        self.file = file
        self.each = each
        self.decode = codecs.getincrementaldecoder("utf-8-sig")().decode  # a byte order mark, as some editors write
        self.text = ""  # the window: the file's text from the part not yet parsed
        self.at = 0  # the next character to parse, in `text`
        self.ended = False  # `text` runs to the end of the file

    def document(self) -> dict:
        if self._next() != "{":
            raise _Whole
        document = self._members(top=True)
        if self._next() != "":  # more than one document
            raise _Whole
        return document

    def _members(self, top: bool, each: Each | None = None) -> dict:
        self.at += 1  # the "{"
        members: dict = {}
        if self._next() == "}":
            self.at += 1
            return members
        while True:
            if self._next() != '"':
                raise _Whole
            key = self._value()[0]
            if key in members or self._next() != ":":
                raise _Whole
            self.at += 1
            if self._next() == "{" and top:
                members[key] = self._members(top=False, each=self.each.get(key))
            elif each is None:
                members[key] = self._value()[0]
            else:
                members[key] = self._each(each)
            found = self._next()
            self.at += 1
            if found == "}":
                return members
            if found != ",":
                raise _Whole

    def _next(self) -> str:
        """The next character that is not whitespace ("" at the end of the file), not consumed."""
        while True:
            self.at = _SPACE.match(self.text, self.at).end()  # type: ignore[union-attr]  # matches anywhere
            if self.at < len(self.text):
                return self.text[self.at]
            if not self._more():
                return ""

    def _each(self, each: Each) -> Any:
        """The value at `at` given to `each`, or parsed with the check where `each` cannot show
        that no object in it holds a key twice (see `read_json_file`)."""
        value, start = self._indented_object() or self._value(_SCAN_UNCHECKED)
        taken = each(value)
        if taken is not None and self.text.count(":", start, self.at) == taken[1]:
            return taken[0]
        try:
            value, _ = _SCAN(self.text, start)  # a key twice: the whole reader says where
        except (ValueError, RecursionError):
            raise _Whole from None
        return value if taken is None else taken[0]

    def _indented_object(self) -> tuple[Any, int] | None:
        """The object at `at` and where it starts, when it ends where json.dumps(indent=2) closes
        a member of a member of the document (a topic of a snapshot `reconcile snapshot` wrote),
        parsed by orjson, about twice as fast as the json module; None to parse it otherwise.
        A text that orjson takes whole as one object is the object that starts there (it ends at
        the brace that closes the one it opens), so the value is the json module's, but for
        integers beyond 64 bits, which orjson makes floats: `each` takes no value holding one.
        Anything else orjson refuses (NaN, a lone surrogate, a cut) is left to the json module."""
        self._read_ahead()
        text, start = self.text, self.at
        cut = text.find(_INDENTED_END, start)
        if cut < 0 or text[start] != "{":
            return None
        end = cut + len(_INDENTED_END)
        try:
            value = _orjson_loads()(text[start:end])
        except ValueError:  # orjson's JSONDecodeError
            return None
        if _SURROGATE_ESCAPE.search(text, start, end):
            raise _Whole
        self.at = end
        return value, start

    def _read_ahead(self) -> None:
        """More of the file in the window when little is left: a value cut off by the window's
        end is parsed again, and the json module's error for the cut counts the lines before it."""
        if not self.ended and len(self.text) - self.at < self.CHUNK >> 4:
            self._more()

    def _value(self, scan: Callable[[str, int], tuple[Any, int]] = _SCAN) -> tuple[Any, int]:
        """The value at `at`, parsed whole (read on while the window ends within it), and where
        it starts in the window."""
        self._read_ahead()
        while True:
            try:
                value, end = scan(self.text, self.at)
            except (StopIteration, ValueError, RecursionError):  # JSONDecodeError is a ValueError
                if not self._more():
                    raise _Whole from None
                continue
            if end < len(self.text) or self.ended:  # a number ends only where something follows it
                if _SURROGATE_ESCAPE.search(self.text, self.at, end):
                    raise _Whole
                start, self.at = self.at, end
                return value, start
            self._more()

    def _more(self) -> bool:
        """More of the file in the window (the parsed text dropped), at least as much again as it
        holds unparsed, so a value larger than a chunk is parsed a few times, not once per chunk."""
        if self.ended:
            return False
        unparsed = len(self.text) - self.at
        chunk = self.file.read(max(self.CHUNK, unparsed))
        try:
            more = self.decode(chunk, final=not chunk)
        except UnicodeDecodeError:
            raise _Whole from None
        self.text, self.at, self.ended = self.text[self.at :] + more, 0, not chunk
        return True


# -- places, looked for only once a document is refused --------------------------------------------

# A JSON string, a structural character, or a token json.loads parses but refuses (NaN, Infinity,
# a number of more digits than Python's int() takes); strings are matched whole so nothing inside
# one is taken for a token.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\]:,]|(?P<constant>NaN|-?Infinity)|(?P<long>\d{4301,})')


def _line_and_column(text: str, position: int) -> tuple[int, int]:
    """1-based line and column of a character of JSON text (json.loads counts lines at "\\n")."""
    return text.count("\n", 0, position) + 1, position - text.rfind("\n", 0, position)


def _outside_strings(text: str) -> re.Match[str] | None:
    """The first NaN, Infinity or over-long number that is not inside a string."""
    for token in _TOKEN.finditer(text):
        if token.lastgroup is not None:
            return token
    return None


def _second_key(text: str, key: str) -> tuple[int, int] | None:
    """Line and column of the first `key` that repeats a key of the same object."""
    objects: list[set[str] | None] = []  # per open object its keys; None for an array
    before = ""  # the structural character before the current token ("" at the start, or a value)
    for token in _TOKEN.finditer(text):
        found = token.group()
        if found in ("{", "["):
            objects.append(set() if found == "{" else None)
        elif found in ("}", "]"):
            if objects:
                objects.pop()
        elif found.startswith('"') and before in ("{", ",") and objects and objects[-1] is not None:
            name = json.loads(found)
            if name == key and name in objects[-1]:
                return _line_and_column(text, token.start())
            objects[-1].add(name)
        before = found if len(found) == 1 else ""
    return None


# json.dumps writes characters outside the BMP as escaped surrogate pairs, which json.loads joins
# again; an escaped surrogate without its pair becomes a string that cannot be printed or
# written as UTF-8, so it would fail far away, in the middle of a plan's output.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _refuse_lone_surrogates(data: Any, origin: str, what: str, redo: str, keyed: Mapping[str, int] | None) -> None:
    found: list[tuple] = []
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
        places = "; ".join(json_path(tuple(_printable(x) for x in loc), keyed) or "(top level)" for loc in found)
        raise SnapshotError(
            f"{origin}: not a {what}: a string holds an escaped UTF-16 surrogate without its pair "
            f"(\\udXXX), which is no character at: {places}; {redo}."
        )


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _printable(element: Any) -> Any:
    return element.encode("utf-8", "backslashreplace").decode("utf-8") if isinstance(element, str) else element


# -- writing -------------------------------------------------------------------------------------

# What pydantic's serializer writes differently from json.dumps: characters beyond ASCII and DEL
# as themselves (json.dumps escapes them), and floats in Rust's shortest form (2.5e-5 for 2.5e-05).
_UNESCAPED = re.compile("[\x7f-\U0010ffff]")
# Every float either writes has a digit, then a point and a digit or an exponent; a line where that
# is found (in a key or a string, too) is a candidate. A float is the last thing on its line
# (after a space, or alone), and a string never is (its closing quote is). The two hints are
# looked for apart, each from its first character, which the regex engine finds much faster than
# a digit: the text of a large plan is tens of megabytes.
_FLOAT_HINTS = (re.compile(r"\.[0-9]"), re.compile(r"e[-+]?[0-9]"))
_DIGITS = frozenset("0123456789")
_FLOAT = re.compile(r"-?[0-9]+(?:\.[0-9]+(?:e[-+]?[0-9]+)?|e[-+]?[0-9]+)")  # not an integer


def json_text(data: Any) -> str:
    """`json.dumps(data, indent=2)` of JSON data (dicts, lists, strings, numbers, booleans, None),
    character for character, through pydantic's serializer: json.dumps with an indent runs in
    pure Python, slow for the plan of a large cluster (docs/performance.md). What the
    serializer does not take (a lone surrogate, a type it does not know) goes through json.dumps."""
    try:
        text = to_json(data, indent=2, inf_nan_mode="constants").decode("utf-8")
    except (PydanticSerializationError, ValueError):
        return json.dumps(data, indent=2)
    if not text.isascii() or "\x7f" in text:
        text = _UNESCAPED.sub(_escaped, text)
    return _python_floats(text)


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 | code >> 10:04x}\\u{0xDC00 | code & 0x3FF:04x}"


def _python_floats(text: str) -> str:
    """Floats rewritten as Python's repr writes them (json.dumps uses it)."""
    pieces: list[str] = []
    copied = looked_at = 0  # text before `copied` is in pieces; lines before `looked_at` are done
    hints = sorted(h.start() for found in _FLOAT_HINTS for h in found.finditer(text, 1) if text[h.start() - 1] in _DIGITS)
    for hint in hints:
        if hint < looked_at:
            continue
        end = text.find("\n", hint)
        looked_at = end = len(text) if end < 0 else end
        start = text.rfind(" ", 0, end) + 1
        stop = end - 1 if text[end - 1] == "," else end
        if _FLOAT.fullmatch(text, start, stop):
            pieces += (text[copied:start], repr(float(text[start:stop])))
            copied = stop
    if not pieces:
        return text
    pieces.append(text[copied:])
    return "".join(pieces)
