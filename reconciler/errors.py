"""The reconciler's own error hierarchy.

Every error a user can meet carries a one-paragraph message that names the file, line, topic or
partition concerned and says what to do. Client-library exceptions are chained as causes, never
shown raw.
"""

from __future__ import annotations

import json
import re
import reprlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError


class ReconcilerError(Exception):
    """Base class: its message is what the user sees."""


def at(file: str, line: int, column: int) -> str:
    """A place in a file as editors and CI annotations read it: `FILE:LINE:COLUMN` (1-based)."""
    return f"{file}:{line}:{column}"


def byte_line_and_column(raw: bytes, index: int) -> tuple[int, int]:
    """1-based line and column of the byte at `index` in UTF-8 text that may be broken there:
    lines end at b"\n", the column counts characters (a broken byte counts as one)."""
    start = raw.rfind(b"\n", 0, index) + 1
    return raw.count(b"\n", 0, index) + 1, len(raw[start:index].decode("utf-8", errors="replace")) + 1


@dataclass(frozen=True)
class ManifestProblem:
    file: str
    line: int
    column: int
    message: str

    def __str__(self) -> str:
        return f"{at(self.file, self.line, self.column)}: {self.message}"


class ManifestError(ReconcilerError):
    """One or more problems in the manifests, all reported at once."""

    def __init__(self, problems: list[ManifestProblem]):
        self.problems = sorted(problems, key=lambda p: (p.file, p.line, p.column, p.message))
        count = len(self.problems)
        head = f"{count} {noun(count, 'problem')} in the manifests:"
        super().__init__("\n".join([head, *(f"  {p}" for p in self.problems)]))


class SnapshotError(ReconcilerError):
    """A snapshot or saved plan file that cannot be read."""


class ClusterError(ReconcilerError):
    """The cluster could not be read or written."""

    def __init__(self, message: str, retriable: bool = False):
        super().__init__(message)
        self.retriable = retriable


class NotAuthorised(ClusterError):
    """The brokers refused a read for want of a right (an *_AUTHORIZATION_FAILED answer)."""


INTERRUPTED = "interrupted (Ctrl-C or SIGTERM)"


def failure_text(error: BaseException) -> str:
    """An error as a sentence inside a report that goes on (an apply's result after its writes)."""
    if isinstance(error, KeyboardInterrupt):
        return INTERRUPTED
    if isinstance(error, ReconcilerError):
        return str(error).rstrip(".")
    return f"internal error ({type(error).__name__}: {error}); this is a bug in the reconciler, please report it"


class PlanRejected(ReconcilerError):
    """A plan that must not be applied (errors in it, or the cluster moved away from it)."""


def summarize_validation_error(error: ValidationError, limit: int = 3, keyed: Mapping[str, int] | None = None) -> str:
    """A pydantic error in one line: the first few problems with their JSON paths, every quoted
    value and key cut to a readable length."""
    parts = validation_problems(error, limit, keyed)
    more = error.error_count() - limit
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")


def validation_problems(
    error: ValidationError,
    limit: int = 20,
    keyed: Mapping[str, int] | None = None,
    loc_prefix: int = 0,
    explain: Callable[[Any], str | None] | None = None,
) -> list[str]:
    """The first `limit` problems of a pydantic error, each as `JSON path: message (got VALUE)`.

    `keyed` names the dict-valued fields and how many levels of keys follow them (`{"topics": 1,
    "group_offsets": 3}`), so keys are quoted as keys (`topics."orders.v1"`) even when they look
    like field names; `loc_prefix` drops that many leading path elements (the caller names them);
    `explain` may give a clearer message than pydantic's for an error."""
    return [problem_line(e, keyed, loc_prefix, explain) for e in error.errors(include_url=False)[:limit]]


def problem_line(
    e: Any, keyed: Mapping[str, int] | None = None, loc_prefix: int = 0, explain: Callable[[Any], str | None] | None = None
) -> str:
    loc = tuple(e["loc"])
    place = json_path(loc[loc_prefix:], keyed, prefix=loc[:loc_prefix])
    message = shown_text(str((explain and explain(e)) or e["msg"]), 300)
    if (
        "input" in e
        and e["type"] not in _NO_INPUT
        and not isinstance(e["input"], (dict, list))
        and not (isinstance(e["input"], int) and str(e["input"]) in message)
    ):  # said already
        message += f" (got {short_value(e['input'])})"
    return f"{place or '(top level)'}: {message}"


# Errors whose input is the whole object (missing fields, extra fields, a model's own checks on a
# mapping): quoting it says nothing.
_NO_INPUT = {"missing", "model_type", "dict_type", "list_type"}
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def json_path(loc: tuple, keyed: Mapping[str, int] | None = None, prefix: tuple = ()) -> str:
    """('topics', 'orders.v1', 'partitions', 2, 'high_watermark') -> topics."orders.v1".partitions[2].high_watermark"""
    keyed = keyed or {}
    out: list[str] = []
    keys_left = _keys_after(prefix, keyed)  # path elements still to come that are keys, not fields
    for element in loc:
        if element == "[key]":
            out.append(" (the key)")
            continue
        if keys_left > 0:
            out.append("." + short_value(str(element), 60))
            keys_left -= 1
        elif isinstance(element, int):
            out.append(f"[{element}]")
        elif isinstance(element, str) and _IDENTIFIER.fullmatch(element):
            out.append("." + element)
            keys_left = keyed.get(element, 0)
        else:
            out.append("." + short_value(str(element), 60))
    return "".join(out).lstrip(".")


def _keys_after(prefix: tuple, keyed: Mapping[str, int]) -> int:
    keys_left = 0
    for element in prefix:
        if keys_left > 0:
            keys_left -= 1
        elif isinstance(element, str):
            keys_left = keyed.get(element, 0)
    return keys_left


def short_value(value: Any, limit: int = 80) -> str:
    """A value as a JSON path's message quotes it: strings JSON-quoted, everything cut (`shortened`)."""
    if isinstance(value, str):
        return shortened(value, limit, json.dumps)
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int):
        digits = len(str(value)) if value.bit_length() < 14_000 else None
        if digits is None or digits > limit:
            return f"an integer of {digits or 'over 4,000'} digits"
        return str(value)
    return shown_text(_REPR.repr(value), limit)


_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother, _REPR.maxlist, _REPR.maxdict = 2, 40, 40, 4, 4


SHOWN_LENGTH = 60
MAX_PROBLEMS = 20  # listed in one error about a file; the rest are counted


def noun(n: int, word: str, words: str | None = None) -> str:
    """The word for `n` things, the number said elsewhere: `broker` for one, `brokers` otherwise."""
    return word if n == 1 else (words or word + "s")


def plural(n: int, word: str, words: str | None = None) -> str:
    """A count and its word: `1 topic`, `1,234 topics`."""
    return f"{n:,} {noun(n, word, words)}"


def problem_report(head: str, count: int, problems: list[str]) -> str:
    """`head`, then the problems one per line, then how many more there were than listed."""
    more = count - len(problems)
    return "\n".join([head, *(f"  {p}" for p in problems), *([f"  and {more:,} more"] if more > 0 else [])])


def shortened(text: str, limit: int, quote: Callable[[str], str] = str) -> str:
    """`text` quoted by `quote`, its first `limit` characters only when it is longer, with its
    length said: the one way a message shortens a value (a 50 MB value is not echoed whole)."""
    return quote(text) if len(text) <= limit else f"{quote(text[:limit])}…({len(text):,} characters)"


def shown_text(text: str, limit: int = SHOWN_LENGTH) -> str:
    """User input quoted in a message without quotes around it, cut to a readable length."""
    return shortened(str(text), limit)


def shown(value: object, limit: int = SHOWN_LENGTH) -> str:
    """User input in a message as Python writes it ('text', 12, [1, 2]), cut to a readable length."""
    if isinstance(value, str):
        return shortened(value, limit, repr)
    return shortened(_SHOWN_REPR.repr(value), limit)


def _make_repr() -> reprlib.Repr:
    r = reprlib.Repr()
    r.maxlevel, r.maxlist, r.maxtuple, r.maxdict, r.maxset = 3, 6, 6, 6, 6
    r.maxstring = r.maxother = r.maxlong = SHOWN_LENGTH
    return r


_SHOWN_REPR = _make_repr()
