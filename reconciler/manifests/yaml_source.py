"""YAML text -> Python data with the position of every key and value, read with the meaning YAML
1.2's core schema gives it. With reconciler.adopt.importer, the only module that imports yaml.

PyYAML implements YAML 1.1, where `on` is true, `012` is 10 and `1:30` is 90. Nodes are built
here from the parser's events, and every scalar is typed by YAML 1.2's core schema; a plain
scalar that YAML 1.1 reads differently (`yes`, `012`, `1_000`, `1:30`, `0o17`, `1e3`) is refused,
because a reviewer, or another tool, may read it the other way. A 1.1 timestamp
(`2026-10-01T00:00:00Z`) is the text it is written as, as in YAML 1.2; fields that take a time
parse that text themselves.

Explicit tags: only YAML's own !!str, !!int, !!float, !!bool, !!null, !!map and !!seq, each on a
value it fits. Anything else (`!!python/...`, `!!binary`, `!local`) is refused, never run nor
dropped. Documents nested more than MAX_DEPTH deep are refused while they are read, before
anything recurses (and before the parsers' own cost for deep nesting, which grows with the square
of the depth, adds up). Both parsers, libyaml's and the pure-Python one, give the same events, so
both give the same results; the pure-Python one is used for the messages of a file libyaml
refuses.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import yaml

from reconciler.errors import byte_line_and_column, shown, shown_text
from reconciler.models.desired import SourceRef

__all__ = ["MAX_ALIAS_EXPANSION", "MAX_DEPTH", "YamlDocument", "line_and_column", "read_yaml_text", "read_yaml_text_by_parser"]

MAX_DEPTH = 100
MAX_ALIAS_EXPANSION = 100_000

Path_ = tuple  # a path into a YAML document: keys and list indexes
Report = Callable[[int, int, str], None]  # line, column, message

# libyaml's parser, when PyYAML was built with it, gives the same events several times faster.
_FAST_LOADER = getattr(yaml, "CSafeLoader", None)


@dataclass(slots=True)  # one per document: 10,000 in a file of 10,000 topics
class YamlDocument:
    """One parsed YAML document with the position of every key and value in it."""

    file: str
    data: Any = None
    key_marks: dict = field(default_factory=dict)
    value_marks: dict = field(default_factory=dict)
    # Paths of keys and values already refused here (an ambiguous scalar, a tag): the checks
    # after this do not report them again.
    refused: set = field(default_factory=set)
    refused_at: set = field(default_factory=set)  # (line, column) of each
    # Texts of secret values (security.password, ...), which no message may show.
    secret_texts: set = field(default_factory=set)

    def ref(self, path: Path_ = (), key: bool = False) -> SourceRef:
        marks = self.key_marks if key else self.value_marks
        mark = marks.get(path)
        if mark is None:  # a place not written (a key left out): the nearest one it is inside of
            while path not in marks and path:
                path = path[:-1]
            mark = marks.get(path, (1, 1))
        return SourceRef.at(self.file, *mark)

    def is_refused(self, path: Path_) -> bool:
        """Whether `path`, or a key or value it is inside of, was refused already."""
        return any(path[:i] in self.refused for i in range(len(path), 0, -1)) if self.refused else False


# --- reading -----------------------------------------------------------------------------------

_NON_PRINTABLE = re.compile("[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_LINE_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
_CONTROL_NAMES = {0: "NUL", 7: "BEL", 8: "backspace", 0x0B: "vertical tab", 0x0C: "form feed", 0x1B: "ESC", 0x7F: "DEL"}


def line_and_column(text: str, position: int) -> tuple[int, int]:
    """1-based line and column of a character, counting line breaks as YAML does."""
    line, start = 1, 0
    for match in _LINE_BREAK.finditer(text, 0, position):
        line, start = line + 1, match.end()
    return line, position - start + 1


def decode(raw: bytes, report: Report) -> str | None:
    """The file's text, or None after reporting where it is not UTF-8."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line, column = byte_line_and_column(raw, e.start)
        report(
            line,
            column,
            f"not UTF-8: byte 0x{raw[e.start]:02x} at byte position {e.start} cannot be decoded; save the file as UTF-8",
        )
        return None


def read_yaml_text(
    text: str, file: str, report: Report, is_secret: Callable[[Path_], bool] = lambda path: False
) -> list[YamlDocument]:
    """The documents of one file; every problem goes to `report`. `is_secret(path)` says which
    values must never be shown in a message.

    Files of the plainest documents (as `reconcile import` writes them) are read line by line
    (`_LineReader`), four times faster than through the parser; every other file, and every
    problem, goes through the parser (`read_yaml_text_by_parser`). The line reader must give
    exactly what the parser gives: tests/load/test_plain_lines.py and tests/fuzz compare the two."""
    if not _printable(text, report):
        return []
    lines = _LineReader(file, is_secret).read(text)
    return lines if lines is not None else _parse(text, file, report, is_secret)


def read_yaml_text_by_parser(
    text: str, file: str, report: Report, is_secret: Callable[[Path_], bool] = lambda path: False
) -> list[YamlDocument]:
    """`read_yaml_text` through the parser's events alone: the reader of every file, which the line
    reader is checked against."""
    return _parse(text, file, report, is_secret) if _printable(text, report) else []


def _printable(text: str, report: Report) -> bool:
    bad = _NON_PRINTABLE.search(text)
    if bad is None:
        return True
    line, column = line_and_column(text, bad.start())
    code = ord(bad.group())
    name = _CONTROL_NAMES.get(code, "control character")
    more = len(_NON_PRINTABLE.findall(text)) - 1
    report(
        line,
        column,
        f"{name} (U+{code:04X}) is not allowed in YAML"
        + (f" ({more} more in this file)" if more else "")
        + "; remove it, or write it as an escape (\\x"
        f"{code:02x}) inside a double-quoted string if it is meant",
    )
    return False


def _parse(text: str, file: str, report: Report, is_secret: Callable[[Path_], bool]) -> list[YamlDocument]:
    if _FAST_LOADER is not None:
        found: list[tuple[int, int, str]] = []
        try:
            docs = _Reader(file, lambda *p: found.append(p), is_secret).read(text, _FAST_LOADER)
        except yaml.YAMLError:
            pass  # read again below, for the pure-Python parser's messages
        else:
            for problem in found:
                report(*problem)
            return docs
    reader = _Reader(file, report, is_secret)
    try:
        return reader.read(text, yaml.SafeLoader)
    except yaml.MarkedYAMLError as e:
        report(*_syntax_problem(e))
    except yaml.YAMLError as e:  # pragma: no cover - the checks above leave the reader nothing to refuse
        report(1, 1, f"not valid YAML: {e}")
    return reader.docs


def _syntax_problem(e: yaml.MarkedYAMLError) -> tuple[int, int, str]:
    context, problem = e.context or "", e.problem or ""
    if context == "while scanning a quoted scalar" and e.context_mark is not None:
        line, column = e.context_mark.line + 1, e.context_mark.column + 1
        return line, column, (f"quoted string opened at line {line} is never closed ({problem}); add the closing quote")
    if e.context_mark is not None and ("stream end" in problem or "end of stream" in problem):
        line, column = e.context_mark.line + 1, e.context_mark.column + 1
        what = context.removeprefix("while parsing ").removeprefix("while scanning ").removeprefix("a ") or "value"
        return line, column, (f"not valid YAML: the {what} that starts at line {line} is never closed ({problem}); close it")
    mark = e.problem_mark or e.context_mark
    line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    message = f"not valid YAML: {problem or context}"
    if problem and e.context_mark is not None and e.context_mark.line + 1 != line and context.startswith("while "):
        what = context.removeprefix("while parsing ").removeprefix("while scanning ").removeprefix("a ")
        message += f" (in the {what} that starts at line {e.context_mark.line + 1}; is it closed?)"
    if "'\\t'" in message:
        message += "; indent with spaces, YAML does not allow tabs there"
    return line, column, message


# --- the plainest documents, line by line -----------------------------------------------------------

# Documents as `reconcile import` writes them, and most people do: block mappings and lists of
# plain scalars without colons or quotes inside (or quoted ones without escapes), one-line flow
# lists of plain scalars, comments. Each line must be one of these shapes whole, so that it
# means to any YAML parser what it means here; a file with any other line (a multi-line or flow
# value, an anchor, a tag, a key repeated, a scalar a YAML version reads otherwise, an empty
# value) is read by the parser instead.
_WORD = r"[A-Za-z0-9_./+,-]+"  # what a plain scalar holds after its first character
_SCALAR = rf"""(?:[A-Za-z0-9_/]|[-.+][A-Za-z0-9_])[A-Za-z0-9_./+,-]*(?:[ ]+{_WORD})*|"[^"\\]*"|'[^']*'"""
_FLOW_ITEM = r"(?:[A-Za-z0-9_/]|[-.+][A-Za-z0-9_])[A-Za-z0-9_./+-]*"  # no comma: it ends an item
_PLAIN_LINE = re.compile(
    rf"""
    (?P<indent>[ ]*)
    (?:(?P<dash>-[ ]+)(?=[^ #]))?                   # a list entry, and what it holds on this line:
    (?:(?P<key>[A-Za-z0-9_][A-Za-z0-9_./-]*):       # a key, with its value or the collection below it
       (?:[ ]+(?P<value>{_SCALAR}|(?P<flow>\[[ ]*(?:{_FLOW_ITEM}(?:[ ]*,[ ]*{_FLOW_ITEM})*)?[ ]*\])))?
     |(?P<item>{_SCALAR}))                          # an entry's scalar (only after a dash)
    [ ]*(?:[ ]\#.*)?""",
    re.VERBOSE,
)
_FLOW_ITEMS = re.compile(_FLOW_ITEM)
_MAX_KEY = 1000  # YAML's parsers look no further than 1024 characters for the colon of a key
_BLANK_OR_COMMENT = re.compile(r"[ ]*(?:\#.*)?")
_NOT_PLAIN_TEXT = re.compile("[\t\r\x85\u2028\u2029]")  # tabs, and line breaks other than \n


class _Line(NamedTuple):
    """What one line of a plain document holds (_LineReader._shape)."""

    indent: int  # the column of its first character, 0-based
    dash: bool  # a list entry
    key: Any  # the key (typed), or _NO_KEY for an entry's scalar
    key_column: int  # 1-based, as marks are
    value: Any  # the scalar's value; _FLOW: a flow list (its `items`); _NO_KEY: the collection on the lines below
    value_column: int  # 1-based
    text: str  # the scalar's text, as a secret would be kept
    items: tuple[tuple[Any, int, str], ...]  # a flow list's: value, column (1-based), text


_BLANK = _Line(-1, False, None, 0, None, 0, "", ())
_FLOW = object()  # _Line.value of a flow list
_UNSHAPED = _Line(-2, False, None, 0, None, 0, "", ())  # a line not read yet (_LineReader.shapes)


class _LineReader:
    """`read` gives the documents of a file of the plainest documents only: what the parser's
    events give for them (values, positions of keys and values, secrets), or None for any other file."""

    def __init__(self, file: str, is_secret: Callable[[Path_], bool]):
        self.file, self.is_secret = file, is_secret
        # Most lines repeat, in a file of many documents (`partitions: 12`, `configs:`): each
        # line's reading is kept by its text; None for a line that is not plain.
        self.shapes: dict[str, _Line | None] = {}

    def read(self, text: str) -> list[YamlDocument] | None:
        # Tabs and line breaks other than \n: in ASCII text (most files) only \t and \r, found without a regex.
        if ("\t" in text or "\r" in text) if text.isascii() else _NOT_PLAIN_TEXT.search(text):
            return None
        docs: list[YamlDocument] = []
        lines = text.split("\n")
        start = 0
        while True:
            try:
                end = lines.index("---", start)
            except ValueError:
                end = len(lines)
            if not self._document(lines, start, end, docs):
                return None
            if end == len(lines):
                return docs
            start = end + 1

    def _document(self, lines: list[str], start: int, end: int, docs: list[YamlDocument]) -> bool:
        """Whether lines[start:end] are one plain document (appended to `docs`) or none."""
        doc = YamlDocument(self.file)
        key_marks, value_marks, is_secret, shapes = doc.key_marks, doc.value_marks, self.is_secret, self.shapes
        # The innermost open collection (the mapping or list, its path, the column of its keys or
        # dashes), in locals: most lines go on with it. The stack holds the ones it is inside of.
        current: Any = None
        path: Path_ = ()
        column = -1
        stack: list[tuple[Any, Path_, int]] = []
        waiting: Path_ | None = None  # a key of `current` whose value is the collection below it
        for number, line in enumerate(lines[start:end], start + 1):
            shape = shapes.get(line, _UNSHAPED)
            if shape is _UNSHAPED:
                shape = shapes[line] = self._shape(line)
            if shape is None:
                return False
            indent, dash, key, key_column, value, value_column, text, items = shape
            if indent < 0:
                continue  # blank, or a comment
            if waiting is not None:  # the first line of the collection that is the waiting key's value
                opened: Any
                if dash and indent >= column:
                    opened = current[waiting[-1]] = []
                elif not dash and indent > column:
                    opened = current[waiting[-1]] = {}
                else:
                    return False  # an empty value: null, for the parser to read
                value_marks[waiting] = (number, indent + 1)
                stack.append((current, path, column))
                current, path, column, waiting = opened, waiting, indent, None
            elif current is None:
                if dash:
                    return False  # a list document, for the parser to read
                current = doc.data = {}
                value_marks[()] = (number, indent + 1)
                column = indent
            elif indent != column or (type(current) is list) != dash:  # not one more line of `current`
                while column > indent or (not dash and column == indent and type(current) is list):
                    if not stack:
                        return False
                    current, path, column = stack.pop()
                if column != indent or (type(current) is list) != dash:
                    return False
            if dash:  # an entry of the list `current`
                place = (*path, len(current))
                if key is _NO_KEY:
                    current.append(value)
                    value_marks[place] = (number, value_column)
                    if text and is_secret(place):
                        doc.secret_texts.add(text)
                    continue
                mapping: dict = {}
                current.append(mapping)
                value_marks[place] = (number, key_column)
                stack.append((current, path, column))
                current, path, column = mapping, place, key_column - 1
            if key in current:
                return False  # a repeated key
            place = (*path, key)
            key_marks[place] = (number, key_column)
            if value is _NO_KEY:
                current[key] = None
                waiting = place
                continue
            value_marks[place] = (number, value_column)
            if value is not _FLOW:
                current[key] = value
                if text and is_secret(place):
                    doc.secret_texts.add(text)
                continue
            flow: list = []
            current[key] = flow
            for item, item_column, item_text in items:
                at = (*place, len(flow))
                flow.append(item)
                value_marks[at] = (number, item_column)
                if item_text and is_secret(at):
                    doc.secret_texts.add(item_text)
        if waiting is not None:
            return False
        if doc.data is not None:
            docs.append(doc)
        return True

    def _shape(self, line: str) -> _Line | None:
        """What `line` holds (_BLANK: nothing but a comment, maybe), or None when it is not a line
        of a plain document."""
        found = _PLAIN_LINE.fullmatch(line)
        if found is None:
            return _BLANK if _BLANK_OR_COMMENT.fullmatch(line) else None
        indent, dash, key = found.end("indent"), found.start("dash") >= 0, found.group("key")
        if key is None:
            if not dash:
                return None  # a scalar alone on its line: the end of a multi-line one?
            value, text = self._scalar(found.group("item"))
            return None if value is _NO_KEY else _Line(indent, True, _NO_KEY, 0, value, found.start("item") + 1, text, ())
        if len(key) > _MAX_KEY:
            return None  # YAML's parsers would not look that far for its colon
        name, _ = self._scalar(key)
        if name is _NO_KEY or name is None or isinstance(name, (bool, float)):
            return None  # keys that are no text nor whole number, for the parser to report
        key_column, value_start = found.start("key") + 1, found.start("value")
        if value_start < 0:
            return _Line(indent, dash, name, key_column, _NO_KEY, 0, "", ())
        if found.start("flow") < 0:
            value, text = self._scalar(found.group("value"))
            return None if value is _NO_KEY else _Line(indent, dash, name, key_column, value, value_start + 1, text, ())
        items = []
        for item in _FLOW_ITEMS.finditer(line, value_start, found.end("flow")):
            value, text = self._scalar(item.group())
            if value is _NO_KEY:
                return None
            items.append((value, item.start() + 1, text))
        return _Line(indent, dash, name, key_column, _FLOW, value_start + 1, "", tuple(items))

    @staticmethod
    def _scalar(written: str) -> tuple[Any, str]:
        """The value of a scalar `written` so (quotes included), and its text (a secret's, to
        keep); _NO_KEY for the value when YAML versions read it differently, which the parser reports."""
        if written[0] in "'\"":
            text = written[1:-1]
            value, problem = _typed_text(text, None, False)
        else:
            text = written
            value, problem = _typed_text(text, None, True)
        return (_NO_KEY if problem is not None else value), text


# --- nodes ---------------------------------------------------------------------------------------


# PyYAML's events (their marks typed optional, their kind told apart by a type table) and the nodes
# below (told apart from the placeholders by identity) are narrowed by checks mypy cannot follow:
# parameters holding them are typed `Event` and `Node`, names for Any that say what they hold.
Event = Any
Node = Any


class _Node:
    __slots__ = ("column", "depth", "line", "size", "tag")

    def __init__(self, tag: str | None, mark: Event) -> None:
        self.tag = tag
        self.line, self.column = mark.line + 1, mark.column + 1
        self.size, self.depth = 1, 0  # values once every alias is expanded; nesting below


class _Scalar(_Node):
    __slots__ = ("plain", "typed", "value")

    def __init__(self, event: Event) -> None:
        super().__init__(event.tag, event.start_mark)
        self.value = event.value
        self.plain = not event.style
        self.typed: tuple[Any, str | None] | None = None  # (value, problem or None) once typed


class _Mapping(_Node):
    __slots__ = ("key", "pairs")

    def __init__(self, event: Event) -> None:
        super().__init__(event.tag, event.start_mark)
        self.pairs: list = []
        self.key: Node = None  # a key waiting for its value while the mapping is read


class _Sequence(_Node):
    __slots__ = ("items",)

    def __init__(self, event: Event) -> None:
        super().__init__(event.tag, event.start_mark)
        self.items: list = []


_LEFT_OUT = object()  # a value already reported, left out so that it causes no further problems
_NO_KEY = object()  # no key: an entry's scalar, or a key whose value is below it (_LineReader)


class _Placeholder:
    """Where an alias to no anchor stood (reported when read)."""

    size, depth = 1, 0


_NO_NODE = _Placeholder()


class _Reader:
    def __init__(self, file: str, report: Report, is_secret: Callable[[Path_], bool]):
        self.file, self.report, self.is_secret = file, report, is_secret
        self.docs: list[YamlDocument] = []

    def read(self, text: str, loader: type[yaml.SafeLoader]) -> list[YamlDocument]:
        events = yaml.parse(text, Loader=loader)  # a generator (typed as an Iterator): closed to free the parser
        try:
            self._compose(events)
        finally:
            close = getattr(events, "close", None)
            if close is not None:
                close()
        return self.docs

    def _compose(self, events: Iterator[Event]) -> None:
        events = iter(events)
        for event in events:
            if type(event) is not yaml.DocumentStartEvent:
                continue  # the stream's start and end
            if not self._any_document(itertools.chain([event], events)):
                return

    def _any_document(self, events: Iterator[Event]) -> bool:
        """One document, from its start to its end: nodes from the events, then values from the
        nodes (`_document`). False when it nests too deep to be read further, and so the file."""
        stack: list[_Mapping | _Sequence] = []
        anchors: dict[str, _Node] = {}
        root = None
        written = 0
        too_deep = None  # the node where aliases nest values more than MAX_DEPTH deep
        node: _Node | _SelfAlias | _Placeholder
        for event in events:
            kind = type(event)
            if kind is yaml.ScalarEvent:
                node = _Scalar(event)
            elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
                node = _Mapping(event) if kind is yaml.MappingStartEvent else _Sequence(event)
                written += 1
                if event.anchor is not None:
                    self._anchor(anchors, event.anchor, node)
                if len(stack) >= MAX_DEPTH:
                    self.report(
                        node.line,
                        node.column,
                        f"lists and mappings nest more than {MAX_DEPTH} deep here; a manifest needs a "
                        "few levels, so this file is not read further: flatten it",
                    )
                    return False
                stack.append(node)
                continue
            elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
                closed = node = stack.pop()
                children = [n for pair in closed.pairs for n in pair] if isinstance(closed, _Mapping) else closed.items
                closed.size = 1 + sum(child.size for child in children)
                closed.depth = 1 + max((child.depth for child in children), default=0)
                if closed.depth > MAX_DEPTH and too_deep is None:
                    too_deep = closed
            elif kind is yaml.AliasEvent:
                anchored = anchors.get(event.anchor)
                if anchored is None:
                    line, column = event.start_mark.line + 1, event.start_mark.column + 1
                    self.report(
                        line,
                        column,
                        f"alias *{shown_text(event.anchor)} refers to no anchor before it; "
                        f"define &{shown_text(event.anchor)} first",
                    )
                    node = _NO_NODE
                elif any(open_node is anchored for open_node in stack):
                    # A value that contains itself: counted once here, reported when converted.
                    node = _SelfAlias(anchored)
                else:
                    node = anchored
            elif kind is yaml.DocumentEndEvent:
                if root is not None:
                    self._document(root, written, too_deep)
                return True
            else:
                continue  # the document's start
            if kind is yaml.ScalarEvent and isinstance(node, _Scalar):
                written += 1
                if event.anchor is not None:
                    self._anchor(anchors, event.anchor, node)
            if not stack:
                root = node
                continue
            parent = stack[-1]
            if isinstance(parent, _Sequence):
                parent.items.append(node)
            elif parent.key is None:
                parent.key = node
            else:
                parent.pairs.append((parent.key, node))
                parent.key = None
        return True

    def _anchor(self, anchors: dict, name: str, node: _Node) -> None:
        first = anchors.get(name)
        if first is not None:
            self.report(
                node.line,
                node.column,
                f"anchor &{shown_text(name)} is defined twice in this document "
                f"(first at line {first.line}); give each anchor its own name",
            )
        anchors[name] = node

    def _document(self, root: Node, written: int, too_deep: Node) -> None:
        if root is _NO_NODE or isinstance(root, _SelfAlias):
            return
        if root.size - written > MAX_ALIAS_EXPANSION:
            self.report(
                root.line,
                root.column,
                f"aliases in this document repeat values {root.size - written:,} times (more than "
                f"{MAX_ALIAS_EXPANSION:,}); write the values out, or share them with a TopicTemplate "
                "or a TruncationRule",
            )
            return
        if too_deep is not None:
            self.report(
                too_deep.line,
                too_deep.column,
                f"aliases nest lists and mappings more than {MAX_DEPTH} deep here; write the values out",
            )
            return
        doc = YamlDocument(self.file)
        converter = _Converter(doc, self.report, self.is_secret)
        doc.data = converter.value(root, (), frozenset())
        converter.finish()
        if doc.data is not None and doc.data is not _LEFT_OUT:
            self.docs.append(doc)


class _SelfAlias:
    """An alias to a mapping or list it is inside of."""

    __slots__ = ("depth", "node", "size")

    def __init__(self, node: _Node) -> None:
        self.node, self.size, self.depth = node, 1, 0


# --- nodes -> Python values ------------------------------------------------------------------------

_CORE = "tag:yaml.org,2002:"
_SCALAR_TAGS = {_CORE + t for t in ("str", "int", "float", "bool", "null")}
_ALLOWED_TAGS = "!!str, !!int, !!float, !!bool, !!null, !!map and !!seq"


class _Converter:
    def __init__(self, doc: YamlDocument, report: Report, is_secret: Callable[[Path_], bool]):
        self.doc, self.report, self.is_secret = doc, report, is_secret
        # Problems about scalars, reported once the whole document is read: an alias may use the
        # value where it is a secret, and then the message must not show it.
        self.pending: dict[int, tuple[_Scalar, Path_, str, str]] = {}
        self.secret_nodes: set[int] = set()

    def finish(self) -> None:
        for key, (node, _path, message, hidden) in self.pending.items():
            self.report(node.line, node.column, hidden if key in self.secret_nodes else message)

    def refuse(self, path: Path_, node: Node) -> None:
        self.doc.refused.add(path)
        self.doc.refused_at.add((node.line, node.column))

    def value(self, node: Node, path: Path_, within: frozenset) -> Any:
        """`within`: the collections this one is inside of, so that a value containing itself is
        reported instead of recursing for ever."""
        if node is _NO_NODE:
            return _LEFT_OUT
        if isinstance(node, _SelfAlias):
            node = node.node
            self.doc.value_marks.setdefault(path, (node.line, node.column))
            self.report(node.line, node.column, "this mapping or list contains an alias to itself; a value cannot contain itself")
            return _LEFT_OUT
        self.doc.value_marks.setdefault(path, (node.line, node.column))
        if isinstance(node, _Scalar):
            return self.scalar(node, path)
        if id(node) in within:
            self.report(node.line, node.column, "this mapping or list contains an alias to itself; a value cannot contain itself")
            return _LEFT_OUT
        within = within | {id(node)}
        self._collection_tag(node, path)
        if isinstance(node, _Sequence):
            items = (self.value(item, path + (i,), within) for i, item in enumerate(node.items))
            return [item for item in items if item is not _LEFT_OUT]
        result: dict = {}
        own_pairs, merged_pairs = self._pairs(node, path)
        own = []
        for key_node, value_node in own_pairs:
            key = self.key(key_node, path, node)
            if key is _LEFT_OUT:
                continue
            if path + (key,) in self.doc.key_marks:
                self.report(key_node.line, key_node.column, f"duplicate key {shown(key)}")
                continue
            self.doc.key_marks[path + (key,)] = (key_node.line, key_node.column)
            own.append((key, value_node))
        for key_node, value_node in merged_pairs:  # own keys win, then the first merged mapping to have a key
            key = self.key(key_node, path, node)
            if key is _LEFT_OUT or path + (key,) in self.doc.key_marks:
                continue
            self.doc.key_marks[path + (key,)] = (key_node.line, key_node.column)
            value = self.value(value_node, path + (key,), within)
            if value is not _LEFT_OUT:
                result[key] = value
        for key, value_node in own:
            value = self.value(value_node, path + (key,), within)
            if value is not _LEFT_OUT:
                result[key] = value
        return result

    def _collection_tag(self, node: _Mapping | _Sequence, path: Path_) -> None:
        expected = _CORE + ("map" if isinstance(node, _Mapping) else "seq")
        if node.tag is None or node.tag == expected:
            return
        what = "mapping" if isinstance(node, _Mapping) else "list"
        if node.tag in (_CORE + "map", _CORE + "seq") or node.tag in _SCALAR_TAGS:
            message = f"tag {_short_tag(node.tag)} does not fit a {what}; remove it"
        else:
            message = f"tag {_short_tag(node.tag)} is not allowed in manifests; remove it (only {_ALLOWED_TAGS} are)"
        self.report(node.line, node.column, message)
        self.refuse(path, node)

    def _pairs(
        self, node: _Mapping, path: Path_, merging: frozenset = frozenset()
    ) -> tuple[list[tuple[Node, Node]], list[tuple[Node, Node]]]:
        """The mapping's own pairs, and the pairs merged into it by YAML merge keys (`<<: *defaults`)."""
        merging = merging | {id(node)}
        own, merged = [], []
        for key_node, value_node in node.pairs:
            if not (isinstance(key_node, _Scalar) and key_node.plain and key_node.tag is None and key_node.value == "<<"):
                own.append((key_node, value_node))
                continue
            listed = isinstance(value_node, _Sequence) and value_node.tag is None
            for i, source in enumerate(value_node.items if listed else [value_node]):
                if isinstance(source, _SelfAlias):
                    source = source.node
                if source is _NO_NODE:
                    continue
                if not isinstance(source, _Mapping):
                    what = (
                        "a list"
                        if isinstance(source, _Sequence)
                        else "null"
                        if source.plain and source.tag is None and source.value in _NULL
                        else "a scalar"
                    )
                    item = f"item {i + 1} of its list is" if listed else "it is given"
                    self.report(
                        key_node.line,
                        key_node.column,
                        f"`<<` merges mappings, and {item} {what}; merge mappings only (`<<: *name` or "
                        "`<<: [*a, *b]`), or write the keys out",
                    )
                    continue
                self._collection_tag(source, path)
                if id(source) not in merging:  # a mapping merged into itself adds nothing
                    source_own, source_merged = self._pairs(source, path, merging)
                    merged.extend(source_own + source_merged)
        return own, merged

    def key(self, node: Node, path: Path_, mapping: _Mapping) -> Any:
        if isinstance(node, _Scalar):
            if node.typed is None:
                node.typed = _typed(node)
            key = self.scalar(node, path + (node.typed[0],), is_key=True)
            if key is None or isinstance(key, (bool, float)):
                self.refuse(path, mapping)  # the mapping, left without the key: not reported again
                self.report(
                    node.line,
                    node.column,
                    "mapping keys must be text or whole numbers, not "
                    + ("null" if key is None else "a boolean" if isinstance(key, bool) else "a number")
                    + "; quote the key",
                )
                return _LEFT_OUT
            return key
        if node is not _NO_NODE:
            target = node.node if isinstance(node, _SelfAlias) else node
            self.report(target.line, target.column, "mapping keys must be plain scalars")
        return _LEFT_OUT

    def scalar(self, node: _Scalar, path: Path_, is_key: bool = False) -> Any:
        if node.typed is None:
            node.typed = _typed(node)
        value, problem = node.typed
        if not is_key and self.is_secret(path):
            self.secret_nodes.add(id(node))
            if isinstance(node.value, str) and node.value:
                self.doc.secret_texts.add(node.value)
        if problem is not None:
            self.refuse(path, node)
            if id(node) not in self.pending:
                where = ".".join(str(p) for p in path)
                hidden = (
                    f"{where}: this value is read differently by YAML 1.1 and 1.2 readers, or has a tag that "
                    "is not allowed (it is not shown: it is a secret); write a reference such as "
                    "${KAFKA_PASSWORD}"
                )
                self.pending[id(node)] = (node, path, problem, hidden)
        return value


def _short_tag(tag: str) -> str:
    return "!!" + tag[len(_CORE) :] if tag.startswith(_CORE) else shown_text(tag, 40)


# --- typing scalars: YAML 1.2 core schema, and what YAML 1.1 would say ---------------------------------

_NULL = {"", "~", "null", "Null", "NULL"}
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_BOOL_11 = {
    **_BOOL,
    **dict.fromkeys(("yes", "Yes", "YES", "on", "On", "ON", "y", "Y"), True),
    **dict.fromkeys(("no", "No", "NO", "off", "Off", "OFF", "n", "N"), False),
}
_INT = re.compile(r"[-+]?[0-9]+")
_OCT = re.compile(r"0o[0-7]+")
_HEX = re.compile(r"0x[0-9a-fA-F]+")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_INF = re.compile(r"[-+]?\.(?:inf|Inf|INF)")
_NAN = re.compile(r"\.(?:nan|NaN|NAN)")
# PyYAML's YAML 1.1 resolver (yaml/resolver.py), which is what a reviewer's tools may use.
_INT_11 = re.compile(
    r"[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+"
    r"|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+"
)
_FLOAT_11 = re.compile(
    r"[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?"
    r"|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)"
)
# Every int, float, null, merge key, 1.1 "value" key and timestamp starts with one of these.
_NUMBER_START = frozenset("0123456789+-.~=<")
_MAX_DIGITS = 4000  # Python refuses to read longer numbers; no manifest value comes close


class _Unreadable(Exception):
    pass


def _core_value(text: str, tag: str | None) -> Any:
    """The value YAML 1.2's core schema gives a plain scalar (tag None) or one with a core tag;
    _Unreadable when the tag does not fit."""
    if tag is None:
        if text in _NULL:
            return None
        if text in _BOOL:
            return _BOOL[text]
        try:
            return _core_value(text, _CORE + "int")
        except _Unreadable:
            pass
        try:
            return _core_value(text, _CORE + "float")
        except _Unreadable:
            return text
    kind = tag[len(_CORE) :]
    if kind == "str":
        return text
    if kind == "null" and text in _NULL:
        return None
    if kind == "bool" and text in _BOOL:
        return _BOOL[text]
    if kind == "int":
        if _INT.fullmatch(text):
            return int(text)
        if _OCT.fullmatch(text):
            return int(text, 0)
        if _HEX.fullmatch(text):
            return int(text, 0)
    if kind == "float":
        if _FLOAT.fullmatch(text):
            return float(text)
        if _INF.fullmatch(text):
            return -math.inf if text.startswith("-") else math.inf
        if _NAN.fullmatch(text):
            return math.nan
        if _OCT.fullmatch(text) or _HEX.fullmatch(text):
            return float(_core_value(text, _CORE + "int"))
    raise _Unreadable(kind)


_TIMESTAMP_11 = object()
_CONSTRUCTOR = yaml.constructor.SafeConstructor()


def _value_11(text: str, tag: str | None) -> Any:
    """What PyYAML (YAML 1.1) makes of the scalar; _Unreadable when it refuses it."""
    if tag is None:
        if text in _BOOL_11:
            return _BOOL_11[text]
        if text in _NULL:
            return None
        if text == "=":
            raise _Unreadable("value")  # YAML 1.1's "value" key, which PyYAML cannot read
        if _INT_11.fullmatch(text):
            tag = _CORE + "int"
        elif _FLOAT_11.fullmatch(text):
            tag = _CORE + "float"
        elif _TIMESTAMP_11_RE.fullmatch(text):
            return _TIMESTAMP_11
        else:
            return text
    node = yaml.ScalarNode(tag, text)
    kind = tag[len(_CORE) :]
    try:
        if kind == "int":
            return _CONSTRUCTOR.construct_yaml_int(node)
        if kind == "float":
            return _CONSTRUCTOR.construct_yaml_float(node)
        if kind == "bool":
            return _CONSTRUCTOR.construct_yaml_bool(node)
        if kind == "null":
            return None if text in _NULL else text
    except (ValueError, KeyError, OverflowError):
        raise _Unreadable(kind) from None
    return text


_TIMESTAMP_11_RE = re.compile(
    r"[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?"
    r"(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?"
)


def _is_number(text: str) -> bool:
    return any(r.fullmatch(text) for r in (_INT, _FLOAT, _OCT, _HEX, _INT_11, _FLOAT_11))


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def _described(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    return f"the text {shown(value)}"


def _typed(node: _Scalar) -> tuple[Any, str | None]:
    """The scalar's value by YAML 1.2's core schema, and why it is refused (or None)."""
    return _typed_text(node.value, node.tag, node.plain)


def _typed_text(text: str, tag: str | None, plain: bool) -> tuple[Any, str | None]:
    """`_typed` of a scalar written as `text`, with `tag` (or None), plain (not quoted) or not."""
    if tag is None and (not plain or (text and text[0] not in _NUMBER_START and text not in _BOOL_11 and text not in _NULL)):
        return text, None  # quoted, a block scalar, or plain text that no YAML version reads as anything else
    if tag is not None and tag not in _SCALAR_TAGS:
        if tag in (_CORE + "map", _CORE + "seq"):
            return text, f"tag {_short_tag(tag)} does not fit a scalar; remove it"
        return text, f"tag {_short_tag(tag)} is not allowed in manifests; remove it (only {_ALLOWED_TAGS} are)"
    written = shown_text(text)
    prefix = "" if tag is None else _short_tag(tag) + " "
    if len(text) > _MAX_DIGITS and tag in (None, _CORE + "int", _CORE + "float") and _is_number(text):
        return text, (
            f"{prefix}a number of {len(text):,} characters is far beyond any manifest value; write a "
            "smaller one, or quote it if text is meant"
        )
    try:
        value = _core_value(text, tag)
    except _Unreadable:
        assert tag is not None  # without a tag every text is some value
        kind = tag[len(_CORE) :]
        want = {
            "int": "a whole number such as 12 (or 0x1F)",
            "float": "a number such as 0.5",
            "bool": "true or false",
            "null": "null",
        }[kind]
        return text, f"{prefix}{written}: the value does not fit the tag; write {want}, or remove the tag"
    try:
        value_11 = _value_11(text, tag)
    except _Unreadable:
        value_11 = _Unreadable
    if value_11 is _TIMESTAMP_11 or _same(value, value_11):
        return value, None
    if value_11 is _Unreadable:
        return value, (
            f"{prefix}{written} is {_described(value)} in YAML 1.2 but not readable in YAML 1.1; "
            f"quote it ('{written}') if text is meant"
        )
    options = list(dict.fromkeys(text for text in map(_canonical, (value_11, value)) if text is not None))
    if any(isinstance(v, bool) for v in (value_11, value)):
        options = ["true or false"]
    instead = (f"write {' or '.join(options)}, or " if options else "") + "quote it if text is meant"
    return value, (
        f"{prefix}{written} is {_described(value_11)} in YAML 1.1 but {_described(value)} in YAML 1.2 "
        f"(a reader may take either); {instead}"
    )


def plain_reads_as_text(text: str) -> bool:
    """Whether `text`, written as a plain (unquoted) scalar, is that same text to every reader:
    YAML 1.2 (this loader) and YAML 1.1 (PyYAML's dumper, and many people) alike."""
    try:
        return _core_value(text, None) == text and _value_11(text, None) == text
    except _Unreadable:
        return False


def _canonical(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        return repr(value)
    return None
