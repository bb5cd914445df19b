"""One YAML document -> its model (reconciler.manifests.documents), every problem reported.

A document is validated against its kind's model. pydantic's errors are mapped back to the YAML
key or value they concern and put in the words of the manifest format; the values the model
refused are left out and the rest is validated again, so the checks that follow still see (and
report on) everything else. What was left out is remembered (`Entry.refused`): a later check
does not take its absence for a choice.
"""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from reconciler.errors import shown, shown_text
from reconciler.kafka_configs import INT_MAX, LONG_MAX, TOPIC_NAME_CHARACTERS, TOPIC_NAME_MAX
from reconciler.manifests.documents import (
    DOC_MODELS,
    MANIFEST_ERROR,
    AnyDoc,
    rfc3339,
    split_servers,
)
from reconciler.manifests.problems import SECRET_FIELDS, Problems, contains_secret, is_secret
from reconciler.manifests.yaml_source import Path_, YamlDocument
from reconciler.models.desired import ENV_REFERENCE, HOST_PORT_OR_REFERENCE, SettingError

# What people write for an environment variable outside ${NAME}: $NAME, $(cmd), %NAME%, {NAME}, ${NAME.
_ENV_LOOKALIKE = re.compile(r"\$[A-Za-z_({]|%[A-Za-z_][A-Za-z0-9_]*%|^\{[A-Za-z_][A-Za-z0-9_]*\}$")
# Errors that say the value had the right type but broke a limit: they say more than the type
# errors of a union's other members at the same place.
_LIMITS = frozenset(
    {
        "greater_than",
        "greater_than_equal",
        "less_than",
        "less_than_equal",
        "too_short",
        "too_long",
        "string_too_short",
        "string_too_long",
        "string_pattern_mismatch",
        MANIFEST_ERROR,
    }
)


_NOTHING_REFUSED: frozenset[Path_] = frozenset()  # shared: most documents have nothing refused

M = TypeVar("M", bound=BaseModel)
N = TypeVar("N", bound=BaseModel)


@dataclass(frozen=True)
class Entry(Generic[M]):
    """A document that has a model, and the places whose values the model refused (reported, and
    left out of the model)."""

    doc: YamlDocument
    model: M
    refused: frozenset[Path_] = frozenset()

    def of(self, model: N) -> Entry[N]:
        """This entry, typed as holding `model` (its own model, narrowed by the caller)."""
        assert model is self.model
        return cast("Entry[N]", self)

    def is_refused(self, path: Path_) -> bool:
        """Whether the value at `path`, or one it is inside of, was refused."""
        return any(path[:i] in self.refused for i in range(len(path), 0, -1)) if self.refused else False

    def refused_within(self, path: Path_) -> bool:
        """Whether the value at `path`, or one it is inside of, or one inside it, was refused."""
        return self.is_refused(path) or any(place[: len(path)] == path for place in self.refused)


def declares_cluster(doc: YamlDocument) -> bool:
    """A `kind: Cluster` document, valid or not (an invalid one is reported as such, not as missing)."""
    return isinstance(doc.data, dict) and doc.data.get("kind") == "Cluster" and not doc.is_refused(("kind",))


def check_document(doc: YamlDocument, problems: Problems) -> Entry[AnyDoc] | None:
    """The document's model, or None after reporting why it has none."""
    if not isinstance(doc.data, dict):
        problems.add(doc.ref(), "a manifest document must be a mapping with a `kind`")
        return None
    kind = doc.data.get("kind")
    if doc.is_refused(("kind",)):
        return None
    if kind is None:
        problems.add(doc.ref(), "document has no `kind` (one of " + ", ".join(DOC_MODELS) + ")")
        return None
    model_type = DOC_MODELS.get(kind) if isinstance(kind, str) else None
    if model_type is None:
        problems.add(doc.ref(("kind",)), f"unknown kind {shown(kind)}" + problems.did_you_mean(str(kind), DOC_MODELS))
        return None
    try:
        return Entry(doc, model_type.model_validate(doc.data), _NOTHING_REFUSED)
    except ValidationError as e:
        return _check_again(doc, model_type, e, problems)


def _check_again(doc: YamlDocument, model_type: type[AnyDoc], error: ValidationError, problems: Problems) -> Entry[AnyDoc] | None:
    """The model of a document its model refused (`error`), validated again without the values it
    refused, or None after reporting why it has none."""
    data: dict = doc.data
    refused: set[Path_] = set()
    kept: dict[str, Any] = {}
    while True:
        errors = error.errors(include_url=False)
        _report(doc, model_type, errors, problems, refused)
        keys_of: dict = {}
        places: dict[Path_, set[str]] = {}
        for err in errors:
            place = _droppable(model_type, yaml_path(doc.data, err["loc"], keys_of=keys_of))
            places.setdefault(place, set()).add(err["type"])
        if () in places or set(places) <= refused:
            return None  # nothing left to leave out
        left = data
        for place, kinds in places.items():
            info = model_type.model_fields.get(place[0]) if len(place) == 1 else None
            if info is not None and info.is_required():
                # A required value of the right type that breaks a limit (a topic name too
                # long): the rest of the document is still checked, with the field's example
                # standing in, and the value as written is kept (remembered as refused).
                examples = info.examples
                if not kinds & _LIMITS or not examples:
                    return None
                kept[place[0]] = doc.data[place[0]]
                left = {**left, place[0]: examples[0]}
            else:
                left = _without(left, place)
        if left is data:
            return None
        data = left
        refused |= set(places)
        try:
            model: AnyDoc = model_type.model_validate(data)
        except ValidationError as e:
            error = e
            continue
        return Entry(doc, model.model_copy(update=kept) if kept else model, frozenset(refused))


# --- pydantic's errors in the manifest's words -------------------------------------------------------


def _report(
    doc: YamlDocument,
    model_type: type[BaseModel],
    error_list: list[ErrorDetails],
    problems: Problems,
    refused: AbstractSet[Path_] = frozenset(),
) -> None:
    # value errors by place (and whether a key is the problem); several at one place are union members
    wrong: dict[tuple[Path_, bool], list[ErrorDetails]] = {}
    keys_of: dict = {}
    for e in error_list:
        setting = (e.get("ctx") or {}).get("error")
        if isinstance(setting, SettingError):  # a check of settings that go together, about one of them
            loc = yaml_path(doc.data, (*e["loc"], setting.key), keys_of=keys_of)
        else:
            loc = yaml_path(doc.data, e["loc"], missing=e["type"] == "missing", keys_of=keys_of)
        if doc.is_refused(loc) and e["type"] in ("extra_forbidden", "missing"):
            continue  # reported when the YAML was read
        if any(len(place) > len(loc) and place[: len(loc)] == loc for place in refused):
            continue  # a check of the whole, failing for want of a value inside it already refused
        if e["type"] == "extra_forbidden":
            name = str(loc[-1])
            problems.add(
                doc.ref(loc, key=True),
                f"unknown key {shown(name)}" + problems.did_you_mean(name, fields_at(model_type, loc[:-1])),
            )
        elif e["type"] == "missing":
            problems.add(doc.ref(loc[:-1]), f"missing required key {shown(loc[-1])}")
        else:
            wrong.setdefault((loc, e["loc"][-1:] == ("[key]",)), []).append(e)
    # A union member that got further into the value (a dict member with a bad key) says more
    # than the members that refused the value as a whole.
    deeper = {loc[:i] for loc, _ in wrong for i in range(len(loc))}
    for (loc, is_key), errors in wrong.items():
        if loc in deeper or doc.is_refused(loc):
            continue  # said better deeper in, or reported when the YAML was read
        value = errors[0].get("input")
        # The member whose type fitted, and which refused the value for a limit, is the one meant.
        errors = [e for e in errors if e["type"] in _LIMITS] or errors
        secret = is_secret(loc) or contains_secret(doc, value)
        worded = list(dict.fromkeys(m for e in errors for m in _in_manifest_words(loc, e, value, is_key)))
        if worded and (not secret or loc[:1] == ("security",)):
            for message in worded:
                problems.add(doc.ref(loc, key=is_key), message)
            continue
        where = ".".join(shown_text(x) for x in loc)
        expected = list(dict.fromkeys(_pydantic_message(e["msg"]) for e in errors))
        expected = expected[:1] + [m.removeprefix("input should be ") for m in expected[1:]]
        text = expected[0] if len(expected) == 1 else ", ".join(expected[:-1]) + " or " + expected[-1]
        if secret:
            problems.add(
                doc.ref(loc),
                f"{where}: {text} (the value is not shown: it is a secret; write a reference such as ${{KAFKA_PASSWORD}})",
            )
        else:
            problems.add(doc.ref(loc), f"{where}: {text} (got {shown(value)})")


def _in_manifest_words(loc: Path_, error: ErrorDetails, value: Any, is_key: bool) -> list[str]:
    """The manifest format's messages for a limit the model refused a value for; none when
    pydantic's own words will do."""
    kind, ctx = error["type"], error.get("ctx") or {}
    if kind == MANIFEST_ERROR:
        return [ctx["message"]]
    if kind == "value_error" and isinstance(ctx.get("error"), SettingError):  # worded for the manifest already
        return [str(ctx["error"])]
    name = loc[-1] if loc else None
    if len(loc) >= 2 and loc[-2] == "before_offset" and isinstance(name, int):  # {partition: offset}
        if is_key and kind == "greater_than_equal":
            return [f"partition {name} does not exist (partitions are numbered from 0)"]
        if kind == "greater_than_equal":
            return [f"before_offset for partition {name} must be 0 or more, not {shown_text(value)}"]
        if kind == "less_than_equal":
            return [f"before_offset for partition {name} is above the largest offset Kafka has ({LONG_MAX})"]
    if name in ("partitions", "replication_factor", "keep_last", "before_offset"):
        if kind == "greater_than_equal" and ctx["ge"] == 0:
            return [f"{name} must be 0 or more, not {shown_text(value)}"]
        if kind == "greater_than_equal":
            hint = "; to delete every record write `everything: true`" if name == "keep_last" and value == 0 else ""
            return [f"{name} must be at least {ctx['ge']}, not {shown_text(value)}{hint}"]
        if kind == "less_than_equal" and ctx["le"] == LONG_MAX:
            return [f"{name} {shown_text(value)} is above the largest offset Kafka has ({LONG_MAX})"]
        if kind == "less_than_equal":
            return [f"{name} {shown_text(value)} is above Kafka's limit of {ctx['le']:,}"]
        if name == "before_offset" and kind == "too_short":
            return ["before_offset names no partitions"]
    if name == "max_delete_fraction" and kind in ("greater_than", "less_than_equal"):
        return [f"max_delete_fraction must be in (0, 1], not {shown_text(value)}"]
    if name == "max_disk_usage" and kind in ("greater_than", "less_than_equal"):
        return [
            f"max_disk_usage must be in (0, 1] (the largest share of a broker's log directory filesystem a plan may "
            f"project it to use, e.g. 0.85), not {shown_text(value)}"
        ]
    if name == "max_retention_decrease" and kind in ("greater_than_equal", "less_than"):
        return [
            f"max_retention_decrease must be at least 0.01 and below 1 (the largest share by which one apply may "
            f"lower retention), not {shown_text(value)}"
        ]
    if name == "max_destructive_actions" and kind in ("greater_than_equal", "less_than_equal", "int_type", "int_from_float"):
        return [
            f"max_destructive_actions must be a whole number from 1 to {INT_MAX:,} (the most actions deleting data "
            f"for good that one plan may hold), not {shown(value)}; leave it out for no limit"
        ]
    if loc == ("name",) and kind in ("string_too_short", "string_too_long", "string_pattern_mismatch"):
        return [topic_name_problem(value)]
    if name == "before_time" and kind == "string_pattern_mismatch":
        why = rfc3339(value)
        return [why] if isinstance(why, str) else []
    if loc[:1] == ("bootstrap_servers",) and kind == "string_pattern_mismatch":
        return server_problems(value)
    if loc[:1] == ("security",) and isinstance(name, str) and kind == "string_pattern_mismatch":
        problem = reference_problem(name, value)
        return [problem] if problem else []
    return []


def _pydantic_message(message: str) -> str:
    """pydantic's message in the words of the manifest format: 'input should be a mapping'."""
    message = re.sub(r"a valid dictionary( or instance of \w+)?", "a mapping", message)
    message = re.sub(r"List should have at least 1 item after validation, not 0", "must not be empty", message)
    if message.startswith("Value error, "):  # a model's own check, already in the manifest's words
        return message.removeprefix("Value error, ")
    return message[:1].lower() + message[1:]


def topic_name_problem(name: str) -> str:
    if not name:
        return "topic name is empty"
    if name in (".", ".."):
        return f"topic name {shown(name)} is not allowed by Kafka"
    if len(name) > TOPIC_NAME_MAX:
        return f"topic name is {len(name)} characters long; Kafka allows at most {TOPIC_NAME_MAX}"
    bad = sorted(set(re.sub(f"[{TOPIC_NAME_CHARACTERS}]", "", name)))
    return (
        f"topic name {shown(name)} has characters Kafka does not allow ({shown(''.join(bad))}); use letters, "
        "digits, '.', '_' and '-'"
    )


def server_problems(value: str) -> list[str]:
    """What is wrong with each server of one bootstrap_servers entry."""
    found = []
    for server in split_servers(value):
        match = HOST_PORT_OR_REFERENCE.match(server)
        if not match:
            found.append(f"bootstrap server {shown(server)} is not host:port (e.g. kafka-1.example.com:9092)")
        elif not 1 <= int(match.group("port")) <= 65535:
            found.append(f"bootstrap server {shown(server)} has port {match.group('port')}; ports are 1 to 65535")
    return found


def reference_problem(name: str, value: str) -> str | None:
    """Why the security setting `name` is not a well-formed value: a malformed ${NAME} reference,
    another way of naming a variable (which would be taken literally), or a literal secret."""
    secret = name in SECRET_FIELDS
    # Whatever is left once the well-formed ${NAME} references are taken out must not look like
    # another way of naming a variable: it would be taken as a literal value.
    rest = ENV_REFERENCE.sub("", value)
    if "${" in rest:
        return (
            f"security.{name}: malformed environment reference"
            + ("" if secret else f" in {shown(value)}")
            + "; write ${VARIABLE_NAME}"
        )
    if _ENV_LOOKALIKE.search(rest):
        return (
            f"security.{name}"
            + (" looks like" if secret else f": {shown(value)} looks like")
            + " an environment reference ($NAME, $(command), %NAME%, {NAME}) but is not one, and would be "
            "taken literally; write ${VARIABLE_NAME}"
        )
    if secret and not ENV_REFERENCE.fullmatch(value):
        return (
            f"security.{name} is a literal secret; keep secrets out of Git and write a reference such as "
            "${KAFKA_PASSWORD}, set in the environment"
        )
    return None


# --- pydantic locations as places in the YAML ------------------------------------------------------


def yaml_path(data: Any, loc: tuple, missing: bool = False, keys_of: dict | None = None) -> Path_:
    """A pydantic error location as a path into the YAML data, without the union-member names
    (such as 'int' or 'dict[int,int]') pydantic puts in it. With `missing`, the last part is a
    key the data does not have, and is kept. `keys_of` caches each mapping's keys by their text,
    so that many errors in one large mapping take linear time."""
    path: list = []
    current = data
    keys_of = {} if keys_of is None else keys_of
    for i, part in enumerate(loc):
        if isinstance(current, dict):
            if part in current and not isinstance(part, bool):
                key = part
            else:
                if id(current) not in keys_of:
                    keys_of[id(current)] = (current, {str(k): k for k in reversed(list(current))})
                key = keys_of[id(current)][1].get(str(part))
            if key is not None:
                path.append(key)
                current = current[key]
            elif missing and i == len(loc) - 1:
                path.append(part)
        elif isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current):
            path.append(part)
            current = current[part]
    return tuple(path)


def fields_at(model_type: type[BaseModel], loc: Path_) -> list[str]:
    """Field names of the (nested) model at `loc`, for "did you mean" suggestions. A part of `loc`
    below a field is a model's field name; below a list or dict field it is an index or key."""
    current: Any = model_type
    for part in loc:
        if _is_model(current):
            info = current.model_fields.get(part) if isinstance(part, str) else None
            if info is None:
                return []
            current = info.annotation
        else:
            current = _model_in(current)
            if current is None:
                return []
    model = current if _is_model(current) else _model_in(current)
    return list(model.model_fields) if model is not None else []


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The first model class inside a typing annotation (Optional[...], list[...], dict[..., ...])."""
    if _is_model(annotation):
        return annotation
    for arg in get_args(annotation):
        inner = _model_in(arg)
        if inner is not None:
            return inner
    return None


def _droppable(model_type: type[BaseModel], path: Path_) -> Path_:
    """The place to leave out for an error at `path`: the key of a model that holds it (a model
    in a mapping, such as an override, or in a list, such as a truncation rule, included). A
    list or mapping of plain values is left out whole: without the refused item it would mean
    something else."""
    kept: list = []
    current: Any = model_type
    for part in path:
        model = _model_of(current)
        if model is not None:
            kept.append(part)
            info = model.model_fields.get(part) if isinstance(part, str) else None
            if info is None:
                break  # a key the model does not have
            current = info.annotation
            continue
        items = _items_model(current)
        if items is None:
            break
        kept.append(part)
        current = items
    return tuple(kept)


def _members(annotation: Any) -> list[Any]:
    """The members of an optional type, without None."""
    args = (
        get_args(annotation)
        if get_origin(annotation) is not None and get_origin(annotation) not in (dict, list)
        else (annotation,)
    )
    return [a for a in args if a is not type(None)]


def _model_of(annotation: Any) -> type[BaseModel] | None:
    members = _members(annotation)
    return members[0] if len(members) == 1 and _is_model(members[0]) else None


def _items_model(annotation: Any) -> type[BaseModel] | None:
    """The model of the values of a mapping or list of models."""
    members = _members(annotation)
    if len(members) == 1 and get_origin(members[0]) in (dict, list):
        items = get_args(members[0])[-1]
        return items if _is_model(items) else None
    return None


def _without(data: Any, place: Path_) -> Any:
    """`data` without the key at `place`, copied along the way (`data` itself is not changed). A
    list keeps its length: the item is emptied, so the places of the others stay as written."""
    key = place[0]
    if isinstance(data, list):
        if not (isinstance(key, int) and 0 <= key < len(data)):
            return data
        changed = _without(data[key], place[1:]) if len(place) > 1 else {}
        return data if changed is data[key] else [*data[:key], changed, *data[key + 1 :]]
    if not isinstance(data, dict) or key not in data:
        return data
    if len(place) == 1:
        return {k: v for k, v in data.items() if not (k == key and type(k) is type(key))}
    changed = _without(data[key], place[1:])
    return data if changed is data[key] else {**data, key: changed}


# --- checks a schema cannot say about one document ------------------------------------------------


def valid_regexes(doc: YamlDocument, path: Path_, patterns: list[str], problems: Problems, single: bool = False) -> list[str]:
    """The patterns that compile as Python regexes (the dialect a schema's `format: regex` is
    not); each one that does not is reported."""
    valid = []
    for i, pattern in enumerate(patterns):
        try:
            re.compile(pattern)
        except re.error as e:
            problems.add(doc.ref(path if single else path + (i,)), f"{shown(pattern)} is not a valid regex: {e}")
        else:
            valid.append(pattern)
    return valid
