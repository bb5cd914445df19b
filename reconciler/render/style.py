"""Terminal colour, written once: one table of ANSI styles and what each thing is painted with.
Colour is only ever added when the caller asks (a terminal, no NO_COLOR)."""

from __future__ import annotations

from enum import Enum

from reconciler.models.plan import ActionKind, Severity
from reconciler.models.result import Status


class Style(Enum):
    """ANSI SGR parameters."""

    GREEN = "32"
    YELLOW = "33"
    YELLOW_BOLD = "33;1"
    RED_BOLD = "31;1"
    DIM = "2"
    BOLD = "1"


SEVERITY_STYLE = {Severity.ERROR: Style.RED_BOLD, Severity.WARNING: Style.YELLOW, Severity.INFO: Style.DIM}
STATUS_STYLE = {
    Status.APPLIED: Style.GREEN,
    Status.ALREADY_SATISFIED: Style.DIM,
    Status.IN_PROGRESS: Style.YELLOW,
    Status.REFUSED: Style.YELLOW_BOLD,
    Status.FAILED: Style.RED_BOLD,
}
DESTRUCTIVE_STYLE = Style.RED_BOLD


def kind_style(kind: ActionKind) -> Style:
    """What deletes data is red, what creates is green, any other change yellow."""
    if kind.facts.destructive:
        return DESTRUCTIVE_STYLE
    return Style.GREEN if kind.facts.summary == "create" else Style.YELLOW


def paint(text: str, style: Style, color: bool) -> str:
    return f"\033[{style.value}m{text}\033[0m" if color else text
