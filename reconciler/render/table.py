"""Tables, written once: plain-text columns for terminals and GitHub Markdown for comments. Plan,
apply-result and drift renderers all use these, so a cell reads and escapes the same in each."""
from __future__ import annotations

from collections.abc import Collection, Sequence


def text_columns(header: Sequence[str], rows: Sequence[Sequence[str]], right: Collection[int] = ()) -> list[str]:
    """Columns two spaces apart, trailing spaces trimmed; the columns numbered in `right` (counts,
    offsets) are right-aligned."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return [line(header), *(line(r) for r in rows)]


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]], right: Collection[int] = ()) -> list[str]:
    """A GitHub Markdown table; the columns numbered in `right` are right-aligned. Cells are
    Markdown (a caller may wrap one in backticks) and escaped by `markdown_cell`."""
    rule = "|" + "".join("---:|" if i in right else "---|" for i in range(len(header)))
    return [_markdown_row(header), rule, *(_markdown_row(r) for r in rows)]


def markdown_cell(text: str) -> str:
    """A cell's text on one line with its pipes escaped, so it can neither end the cell nor the row."""
    return text.replace("|", "\\|").replace("\n", " ")


def _markdown_row(cells: Sequence[str]) -> str:
    return "|" + "|".join(f" {markdown_cell(c)} " if c else " " for c in cells) + "|"


def html_text(text: str) -> str:
    """Text for HTML inside Markdown (a `<summary>`): markup characters escaped."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
