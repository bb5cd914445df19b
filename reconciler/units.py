"""Friendly durations and sizes (`7d`, `1h30m`, `50GiB`) to Kafka's integers, and back.

Parsing accepts what people write in manifests; formatting produces the shortest exact form, so
that `format_duration_ms(parse_duration_ms(x))` never changes a value's meaning. `-1` (Kafka's
"unlimited") passes through unchanged in both directions. Every parsed value is within Kafka's
long (int64), as a number written without a unit must be: this is the one place that says so for
text, whatever setting it is written for.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from reconciler.errors import shown
from reconciler.kafka_configs import LONG_RANGE

_DURATION_UNITS = {"ms": 1, "s": 1_000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000}
_DURATION_PART = re.compile(r"([0-9]+)(ms|s|m|h|d|w)")
_DURATION = re.compile(r"(?:[0-9]+(?:ms|s|m|h|d|w))+")
_INTEGER = re.compile(r"-?[0-9]+")
_LONGEST = 40  # characters: far beyond any value Kafka takes (a long has 19 digits)

_BYTE_UNITS = {
    "b": 1,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
    "tib": 1024**4,
    "kb": 1000,
    "mb": 1000**2,
    "gb": 1000**3,
    "tb": 1000**4,
}
_SIZE = re.compile(r"([0-9]+)\s*([a-z]+)?", re.IGNORECASE)

# What the two parsers below accept, as JSON Schema patterns (editors check manifests with them):
# spaces inside a duration are ignored; a bare integer is milliseconds or bytes.
DURATION_TEXT_PATTERN = r"^\s*(?:-?(?: *[0-9])+|(?: *[0-9](?: *[0-9])*(?: *m *s| *[smhdw]))+)\s*$"
SIZE_TEXT_PATTERN = r"^\s*(?:-?[0-9]+|[0-9]+\s*(?:[Bb]|[KkMmGgTt][Ii]?[Bb]))\s*$"


def _in_long_range(text: str, value: int, unit: str) -> int:
    low, high = LONG_RANGE
    if value > high:
        raise ValueError(f"{shown(text)} is above the largest value Kafka takes ({high:,} {unit}, a long); write a smaller one")
    if value < low:
        raise ValueError(f"{shown(text)} is below the smallest value Kafka takes ({low:,} {unit}, a long)")
    return value


def parse_duration_ms(text: str) -> int:
    """`"7d"` -> 604800000; `"1h30m"`, `"500ms"`, a bare integer (milliseconds) and `"-1"` too."""
    s = text.strip().replace(" ", "")
    if len(s) > _LONGEST:
        raise ValueError(f"{shown(text)} is too long to be a duration; write milliseconds or e.g. 500ms, 7d")
    if _INTEGER.fullmatch(s):
        return _in_long_range(text, int(s), "ms")
    if not _DURATION.fullmatch(s):
        raise ValueError(f"{shown(text)} is not a duration; write milliseconds or e.g. 500ms, 30s, 15m, 12h, 7d, 2w, 1h30m")
    return _in_long_range(text, sum(int(n) * _DURATION_UNITS[unit] for n, unit in _DURATION_PART.findall(s)), "ms")


def parse_bytes(text: str) -> int:
    """`"1GiB"` -> 1073741824; KiB/MiB/GiB/TiB are powers of 1024, KB/MB/GB/TB powers of 1000."""
    s = text.strip()
    if len(s) > _LONGEST:
        raise ValueError(f"{shown(text)} is too long to be a size; write bytes or e.g. 512KiB, 50GiB")
    if _INTEGER.fullmatch(s):
        return _in_long_range(text, int(s), "bytes")
    match = _SIZE.fullmatch(s)
    unit = (match.group(2) or "b").lower() if match else None
    if match is None or unit not in _BYTE_UNITS:
        raise ValueError(f"{shown(text)} is not a size; write bytes or e.g. 512KiB, 100MiB, 50GiB, 1TiB (or KB/MB/GB/TB)")
    return _in_long_range(text, int(match.group(1)) * _BYTE_UNITS[unit], "bytes")


def format_duration_ms(ms: int) -> str:
    """The shortest exact friendly form: 604800000 -> "7d", 5400000 -> "90m", 1500 -> "1500ms"."""
    if ms <= 0:
        return str(ms)
    for unit in ("w", "d", "h", "m", "s"):
        size = _DURATION_UNITS[unit]
        if ms % size == 0:
            return f"{ms // size}{unit}"
    return f"{ms}ms"


def format_bytes(n: int) -> str:
    """The largest binary unit that divides exactly: 53687091200 -> "50GiB", 1000 -> "1000"."""
    if n <= 0:
        return str(n)
    for unit in ("TiB", "GiB", "MiB", "KiB"):
        size = _BYTE_UNITS[unit.lower()]
        if n % size == 0:
            return f"{n // size}{unit}"
    return str(n)


def human_duration(ms: int) -> str:
    """Approximate, for reading beside a raw value: 604800000 -> "7d", 90061000 -> "1d 1h"."""
    if ms < 0:
        return "unlimited" if ms == -1 else str(ms)
    if ms < 1000:
        return f"{ms}ms"
    parts = []
    rest = ms
    for unit in ("d", "h", "m", "s"):
        size = _DURATION_UNITS[unit]
        if rest >= size:
            parts.append(f"{rest // size}{unit}")
            rest %= size
    return " ".join(parts[:2])


def human_bytes(n: int) -> str:
    """Approximate, for reading beside a raw value: 53687091200 -> "50.0 GiB"."""
    if n < 0:
        return "unlimited" if n == -1 else str(n)
    if n < 1024:
        return f"{n} B"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        value /= 1024
        if value < 1024 or unit == "PiB":
            return f"{value:.1f} {unit}"
    raise AssertionError("unreachable")


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def epoch_ms(instant: datetime) -> int:
    """Milliseconds since the epoch, exactly (no float rounding): Kafka's timestamps."""
    return (instant - _EPOCH) // timedelta(milliseconds=1)


def from_epoch_ms(ms: int) -> datetime:
    return _EPOCH + timedelta(milliseconds=ms)
