"""Models built from values their builder made itself, without validating them again."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)


def trusted(model: type[M], values: dict[str, Any], fields: set[str]) -> M:
    """A `model` holding `values` (every field, of the right types: the caller's promise), not
    validated: what `model_construct` does, without its per-call work, and with one shared set of
    the fields given (all of them) instead of one per model. For values the reconciler built
    itself (a live read's, or checked already); validation is for what a person or a file gives.
    Frozen models never change that set (a copy with an update copies it first)."""
    instance = model.__new__(model)
    object.__setattr__(instance, "__dict__", values)
    object.__setattr__(instance, "__pydantic_fields_set__", fields)
    object.__setattr__(instance, "__pydantic_extra__", None)
    object.__setattr__(instance, "__pydantic_private__", None)
    return instance
