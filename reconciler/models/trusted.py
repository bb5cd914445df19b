"""Models built from values their builder made itself, without validating them again."""

from __future__ import annotations

from collections.abc import Callable, Set
from dataclasses import dataclass
from enum import Enum
from functools import partial
from typing import Any, TypeVar, cast

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class _Fields:
    order: tuple[str, ...]
    names: frozenset[str]
    every: set[str]  # one set shared by every instance given all its fields (see `trusted`)
    defaults: dict[str, Callable[[], Any]]  # a fresh default per call: factories build new containers


_FIELDS: dict[type[BaseModel], _Fields] = {}
# The four slots of every model instance (pydantic's BaseModel declares them), set through their
# own descriptors: object.__setattr__ looks each name up first, a quarter of a trusted build's cost
# (a million partitions are built so).
_SET_DICT, _SET_FIELDS_SET, _SET_EXTRA, _SET_PRIVATE = (
    BaseModel.__dict__[slot].__set__
    for slot in ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")
)
_IMMUTABLE = (type(None), bool, int, float, str, bytes, tuple, frozenset, Enum)


def _constant(value: object) -> Callable[[], object]:
    return lambda: value


def _fields(model: type[BaseModel]) -> _Fields:
    found = _FIELDS.get(model)
    if found is None:
        defaults: dict[str, Callable[[], Any]] = {}
        for name, info in model.model_fields.items():
            if info.is_required():
                continue
            if info.default_factory is not None:
                if info.default_factory_takes_validated_data:
                    raise TypeError(f"{model.__name__}.{name}: a default factory given the data cannot be trusted")
                defaults[name] = cast("Callable[[], Any]", info.default_factory)
            elif isinstance(info.default, _IMMUTABLE):
                defaults[name] = _constant(info.default)
            else:
                defaults[name] = partial(info.get_default, call_default_factory=False)  # a copy of a mutable one
        names = tuple(model.model_fields)
        found = _FIELDS[model] = _Fields(names, frozenset(names), set(names), defaults)
    return found


def trusted(model: type[M], values: dict[str, Any], fields_set: set[str] | None = None) -> M:
    """A `model` holding `values` (of the right types: the caller's promise), not validated: what
    `model_construct` does, without its per-call work. For values the reconciler built itself (a
    live read's, or checked already); validation is for what a person or a file gives.

    A field left out gets its default (and counts as not set, as in `model_construct`); a key that
    is not a field, or a required field left out, is a TypeError. The instances given the same
    fields share one set of them instead of one each; `fields_set` overrides which fields count
    as set. Frozen models never change that set (a copy with an update copies it first)."""
    fields = _FIELDS.get(model) or _fields(model)
    if values.keys() == fields.names:
        given = fields.every
    else:
        given, fill = _filling(model, fields, frozenset(values))
        # in field order, as validation builds it: a model is dumped in the order of its values
        values = {name: values[name] if make is None else make() for name, make in fill}
    instance = model.__new__(model)
    _SET_DICT(instance, values)
    _SET_FIELDS_SET(instance, given if fields_set is None else fields_set)
    _SET_EXTRA(instance, None)
    _SET_PRIVATE(instance, None)
    return instance


def trusted_copy(instance: M, update: dict[str, Any]) -> M:
    """`instance.model_copy(update=update)`, the updated values of the fields' types (the caller's
    promise), without its per-call work: the other values shared, the set of given fields the
    instance's own (`update` must name fields it holds as given). For findings copied to many
    topics (`reconciler.drift.quiet`)."""
    return trusted_copier(instance, update.keys())(update)


def trusted_copier(instance: M, keys: Set[str]) -> Callable[[dict[str, Any]], M]:
    """`lambda update: trusted_copy(instance, update)` for updates of the fields `keys`, with
    the check and the lookups done once: for one template copied to many topics."""
    model = type(instance)
    given = instance.__pydantic_fields_set__
    if not keys <= given:
        raise TypeError(f"{model.__name__}: not fields given to the instance: {sorted(keys - given)}")
    values, new = instance.__dict__, model.__new__
    set_dict, set_fields_set, set_extra, set_private = _SET_DICT, _SET_FIELDS_SET, _SET_EXTRA, _SET_PRIVATE

    def copy(update: dict[str, Any]) -> M:
        made = new(model)
        set_dict(made, {**values, **update})
        set_fields_set(made, given)
        set_extra(made, None)
        set_private(made, None)
        return made

    return copy


def trusted_maker(model: type[M], given: Set[str]) -> Callable[[dict[str, Any]], M]:
    """`lambda values: trusted(model, values, set(given))` for values holding every field of the
    model in its order (the caller's promise: not compared per call), the instances sharing one
    set of given fields: for a model built many times by one builder (a report's drift items)."""
    fields = _FIELDS.get(model) or _fields(model)
    if not given <= fields.names:
        raise TypeError(f"{model.__name__}: not fields {sorted(given - fields.names)}")
    fields_set, new = set(given), model.__new__
    set_dict, set_fields_set, set_extra, set_private = _SET_DICT, _SET_FIELDS_SET, _SET_EXTRA, _SET_PRIVATE

    def make(values: dict[str, Any]) -> M:
        made = new(model)
        set_dict(made, values)
        set_fields_set(made, fields_set)
        set_extra(made, None)
        set_private(made, None)
        return made

    return make


_Fill = tuple[set[str], tuple[tuple[str, "Callable[[], Any] | None"], ...]]
_FILLS: dict[tuple[type[BaseModel], frozenset[str]], _Fill] = {}


def _filling(model: type[BaseModel], fields: _Fields, keys: frozenset[str]) -> _Fill:
    """For `model` given the fields `keys`: the set of them, and where each value comes from (the
    values given, or a default), decided once per model and keys."""
    found = _FILLS.get((model, keys))
    if found is None:
        unknown, missing = keys - fields.names, fields.names - keys - fields.defaults.keys()
        if unknown or missing:
            raise TypeError(f"{model.__name__}: not fields {sorted(unknown)}, required fields missing {sorted(missing)}")
        found = _FILLS[model, keys] = (set(keys), tuple((n, None if n in keys else fields.defaults[n]) for n in fields.order))
    return found


def trusted_each(model: type[M], rows: list[dict[str, Any]]) -> list[M]:
    """`trusted(model, row)` for each of `rows`, with the lookups hoisted: every partition of a
    cluster passes here on each read. The rows come from one builder that gives every field in
    the model's order (its callers check that per row already), so only the first row's keys are
    compared here: comparing each costs a tenth of this function."""
    fields = _FIELDS.get(model) or _fields(model)
    if rows and rows[0].keys() != fields.names:
        raise TypeError(f"{model.__name__}: each row must hold every field, not {sorted(rows[0])}")
    every, new = fields.every, model.__new__
    set_dict, set_fields_set, set_extra, set_private = _SET_DICT, _SET_FIELDS_SET, _SET_EXTRA, _SET_PRIVATE
    out = []
    for row in rows:
        instance = new(model)
        set_dict(instance, row)
        set_fields_set(instance, every)
        set_extra(instance, None)
        set_private(instance, None)
        out.append(instance)
    return out
