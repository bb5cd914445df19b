"""The action kinds: each is stated once, with all its facts, and has exactly one model class."""

from __future__ import annotations

import typing

from pydantic import BaseModel

from reconciler.models.plan import KIND_FACTS, Action, ActionKind


def _classes() -> dict[ActionKind, type]:
    union = typing.get_args(Action)[0]
    return {cls.model_fields["kind"].default: cls for cls in typing.get_args(union)}


def test_every_kind_has_its_facts_and_one_model_class():
    assert list(KIND_FACTS) == list(ActionKind)
    classes = _classes()
    assert list(classes) == list(ActionKind)
    for kind, cls in classes.items():
        assert issubclass(cls, BaseModel) and cls.model_fields["destructive"].default is kind.facts.destructive


def test_apply_order_and_symbols():
    assert [k.value for k in sorted(ActionKind, key=lambda k: k.order)] == [
        "create_topic",
        "add_partitions",
        "reassign_replicas",
        "alter_configs",
        "truncate",
        "delete_topic",
    ]
    assert "".join(k.facts.symbol for k in ActionKind) == "+~~~x-"
    assert f"{ActionKind.TRUNCATE}" == str(ActionKind.TRUNCATE) == "truncate"
