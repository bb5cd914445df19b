"""How values read to a person: config values with their friendly form, counts, sizes, positions."""
from __future__ import annotations

from reconciler import kafka_configs, units
from reconciler.kafka_configs import Unit
from reconciler.models.desired import SourceRef

REDACTED = "(sensitive)"
UNSET = "(not set)"


def config_value(key: str, value: str | None, sensitive: bool = False) -> str:
    """`604800000 (7d)` for durations, `53687091200 (50.0 GiB)` for sizes; sensitive values never shown."""
    if sensitive:
        return REDACTED
    if value is None:
        return UNSET
    spec = kafka_configs.TOPIC_CONFIGS.get(key)
    try:
        number = int(value)
    except ValueError:
        return value
    if spec is not None and spec.unit is Unit.MS and number >= 1000:
        return f"{value} ({units.human_duration(number)})"
    if spec is not None and spec.unit is Unit.BYTES and number >= 1024:
        return f"{value} ({units.human_bytes(number)})"
    if number == -1 and spec is not None and spec.unit is not None:
        return "-1 (unlimited)"
    return value


def size(n: int | None) -> str:
    """An approximate size, `2.7 MiB`; "unknown" when it is not known."""
    return "unknown" if n is None else units.human_bytes(n)


def count(n: int) -> str:
    return f"{n:,}"


def plural(n: int, word: str, words: str | None = None) -> str:
    return f"{count(n)} {word if n == 1 else (words or word + 's')}"


def where(source: SourceRef | None) -> str:
    return f"{source.file}:{source.line}" if source else ""

