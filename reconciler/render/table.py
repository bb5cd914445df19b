"""Tables, written once: plain-text columns for terminals and GitHub Markdown for comments. Plan,
apply-result and drift renderers all use these, so a cell reads and escapes the same in each."""

from __future__ import annotations

from collections.abc import Collection, Sequence


def text_columns(header: Sequence[str], rows: Sequence[Sequence[str]], right: Collection[int] = ()) -> list[str]:
    """Columns two spaces apart, trailing spaces trimmed; the columns numbered in `right` (counts,
    offsets) are right-aligned."""
    widths = [max(map(len, column)) for column in zip(header, *rows)]
    # One justification per column, decided once: a plan's tables have 100,000 cells.
    justify = [str.rjust if i in right else str.ljust for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join([fit(c, w) for fit, c, w in zip(justify, cells, widths)]).rstrip()

    return [line(header), *map(line, rows)]


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
