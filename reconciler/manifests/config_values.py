"""Topic config values as manifests write them: what each key accepts, and the Kafka string a value
stands for. Both are read off one catalogue (reconciler.kafka_configs): the JSON Schema of a
`configs` mapping for `reconcile schema`, and the normalisation the loader applies.

A schema can say each key's type, its choices, and the range of a value written as a number. It
cannot say the range of a value written as text (`7d`, `1GiB`, `"12"`), which is known only once
the text is converted; the loader checks those after normalising.
"""

from __future__ import annotations

import math
import re
from typing import Any

from reconciler import kafka_configs, units
from reconciler.errors import shown
from reconciler.kafka_configs import INT_RANGE, LONG_RANGE, ConfigType, TopicConfigKey, Unit
from reconciler.manifests.problems import Problems
from reconciler.manifests.yaml_source import Path_, YamlDocument

__all__ = ["ConfigReader", "configs_schema", "kafka_string", "scalar_text"]


class ConfigReader:
    """The `configs` mappings of the documents as Kafka strings. Each mapping is read once, however
    many topics and clusters use it, so each bad value is reported once."""

    def __init__(self, problems: Problems):
        self.problems = problems
        self._read: dict[tuple[int, Path_], dict[str, str]] = {}
        # (key, text) -> the Kafka string, or the message: thousands of topics write `retention.ms: 7d`.
        self._texts: dict[tuple[str, str], tuple[str | None, str]] = {}

    def configs(self, doc: YamlDocument, path: Path_, raw: dict[str, Any]) -> dict[str, str]:
        """The known keys with values Kafka accepts; the others are reported and left out."""
        key = (id(doc), path)
        if key not in self._read:
            self._read[key] = {}
            for name, value in raw.items():
                text = self.value(doc, path + (name,), name, value)
                if text is not None:
                    self._read[key][name] = text
        return self._read[key]

    def value(self, doc: YamlDocument, path: Path_, key: str, value: Any) -> str | None:
        if doc.is_refused(path):
            return None  # reported when the YAML was read
        if key not in kafka_configs.TOPIC_CONFIGS:
            self.problems.add(
                doc.ref(path, key=True),
                f"unknown topic config key {shown(key)}" + self.problems.did_you_mean(key, kafka_configs.TOPIC_CONFIGS),
            )
            return None
        if type(value) is str:
            found = self._texts.get((key, value))
            if found is None:
                found = self._texts[(key, value)] = _kafka_string_or_problem(key, value)
            text, problem = found
        else:
            text, problem = _kafka_string_or_problem(key, value)
        if text is None:
            self.problems.add(doc.ref(path), problem)
        return text


def _kafka_string_or_problem(key: str, value: Any) -> tuple[str | None, str]:
    try:
        return kafka_string(key, value), ""
    except ValueError as e:
        return None, str(e)


def kafka_string(key: str, value: Any) -> str:
    """The Kafka string `value` stands for as the value of the known topic config `key`; raises
    ValueError with the message for the manifest if it is not one Kafka accepts."""
    spec = kafka_configs.TOPIC_CONFIGS[key]
    if value is None:
        raise ValueError(f"{key} has no value")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{key}: {scalar_text(value)} is not a value Kafka reads; write a finite number")
    text = scalar_text(value)
    try:
        if spec.unit is Unit.MS and isinstance(value, str):
            text = str(units.parse_duration_ms(value))
        elif spec.unit is Unit.BYTES and isinstance(value, str):
            text = str(units.parse_bytes(value))
    except ValueError as e:
        raise ValueError(f"{key}: {e}") from None
    error = kafka_configs.value_error(key, text)
    if error:
        raise ValueError(error)
    return text


def scalar_text(value: Any) -> str:
    """A YAML scalar (or list of them) as Kafka's text: true/false, numbers as written, lists joined by commas."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(scalar_text(v) for v in value)
    return str(value)


# --- JSON Schema ---------------------------------------------------------------------------------

# Text forms, as the loader reads them (surrounding whitespace is ignored).
_BOOLEAN_TEXT = r"^\s*(?:[Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee])\s*$"
_INTEGER_TEXT = r"^\s*[-+]?[0-9]+\s*$"
_DECIMAL_TEXT = r"^\s*[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?\s*$"
_TEXT_FORMS = {
    Unit.MS: (units.DURATION_TEXT_PATTERN, "milliseconds, or a duration such as 500ms, 30s, 12h, 7d"),
    Unit.BYTES: (units.SIZE_TEXT_PATTERN, "bytes, or a size such as 512KiB, 1GiB, 1GB"),
    Unit.NONE: (_INTEGER_TEXT, "a whole number"),
}


def configs_schema(nullable: bool = False) -> dict[str, Any]:
    """A `configs` mapping: every key of the catalogue with the values it accepts, no other key.
    With `nullable`, a key may also be null (a Policy's required_configs: declared, any value)."""
    properties = {}
    for name, spec in kafka_configs.TOPIC_CONFIGS.items():
        value = _value_schema(spec)
        properties[name] = {"anyOf": [value, {"type": "null"}]} if nullable else value
    return {"type": "object", "properties": properties, "additionalProperties": False}


def _value_schema(spec: TopicConfigKey) -> dict[str, Any]:
    described = {"description": f"Kafka's default: {spec.default or '(empty)'}"}
    if spec.type is ConfigType.BOOLEAN:
        return {**described, "anyOf": [{"type": "boolean"}, {"type": "string", "pattern": _BOOLEAN_TEXT}]}
    if spec.type in (ConfigType.INT, ConfigType.LONG):
        low, high = INT_RANGE if spec.type is ConfigType.INT else LONG_RANGE
        number: dict[str, Any] = {
            "type": "integer",
            "minimum": low if spec.minimum is None else max(low, int(spec.minimum)),
            "maximum": high if spec.maximum is None else min(high, int(spec.maximum)),
        }
        if spec.name == "compression.gzip.level":  # as kafka_configs.value_error: -1, or 1 to 9
            number = {"type": "integer", "anyOf": [{"const": -1}, {"minimum": 1, "maximum": 9}]}
        pattern, words = _TEXT_FORMS[spec.unit]
        return {"description": f"{words}; {described['description']}", "anyOf": [number, {"type": "string", "pattern": pattern}]}
    if spec.type is ConfigType.DOUBLE:
        number = {"type": "number"}
        if spec.minimum is not None:
            number["minimum"] = spec.minimum
        if spec.maximum is not None:
            number["maximum"] = spec.maximum
        return {**described, "anyOf": [number, {"type": "string", "pattern": _DECIMAL_TEXT}]}
    if spec.choices is None:  # a list without choices (throttled replicas): any scalar or list of them
        return {**described, "type": ["string", "number", "boolean", "array"], "items": {"type": ["string", "integer"]}}
    if spec.type is ConfigType.STRING:
        return {**described, "enum": list(spec.choices)}
    choice = "(?:" + "|".join(re.escape(c) for c in spec.choices) + ")"
    items = {"type": "string", "pattern": rf"^\s*{choice}\s*(?:,\s*{choice}\s*)*$"}
    return {**described, "anyOf": [items, {"type": "array", "items": items, "minItems": 1}]}
