"""Reading a YAML file with line numbers (S2.5): the calibration's case files and levels, a prices file.

Files are *composed* (not loaded), so every node keeps its ``start_mark`` and every
problem can name its line. A :class:`Source` collects the errors of one file; a
:class:`Fields` reads one mapping, reporting unknown, missing and mistyped keys, and
duplicate keys that plain YAML loading would silently drop.

Scalars are resolved without YAML 1.1's surprises: ``2026-03-01`` stays a string
(no date objects) and ``yes``/``no``/``on``/``off`` stay strings (only ``true``/``false``
are booleans).

A shared value (issue 32): the calibration suite's cases and levels and the tables' prices file
(``tables/prices.py``) read YAML the same way, so it lives below both; ``CaseError`` (one problem,
``file:line: what``) and ``CaseFileErrors`` (all of them) are its errors, re-exported by
``suites/calibration/cases/errors.py``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from pytest_assistant_eval.input_files import read_input_text

__all__ = ["CaseError", "CaseFileErrors", "Fields", "Source", "duplicate_keys", "line_of", "merge_keys", "KIND_NAMES"]


@dataclass(frozen=True, order=True)
class CaseError:
    """One problem in one case file. ``line`` is 1-based (0 when the file has no line)."""

    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


class CaseFileErrors(Exception):
    """All errors found across all case files; ``str()`` gives one ``file:line: message`` per line."""

    def __init__(self, errors: Iterable[CaseError]):
        self.errors: tuple[CaseError, ...] = tuple(sorted(set(errors), key=lambda e: (e.file, e.line, e.message)))
        super().__init__(str(self))

    def __str__(self) -> str:
        return "\n".join(str(e) for e in self.errors)

    def __reduce__(self):  # picklable across xdist workers
        return (CaseFileErrors, (self.errors,))


class _Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2-like booleans and no timestamps."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:timestamp")]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)

# libyaml composes the same nodes, marks included, about ten times faster: every xdist worker
# reads the case files at its start (issue 15). A file it refuses is read again by the Python
# loader, so error messages stay the same.
if getattr(yaml, "__with_libyaml__", False):
    class _FastLoader(yaml.CSafeLoader):  # type: ignore[name-defined,misc]
        pass

    _FastLoader.yaml_implicit_resolvers = _Loader.yaml_implicit_resolvers
else:  # pragma: no cover - PyYAML without libyaml
    _FastLoader = _Loader  # type: ignore[misc,assignment]


def line_of(node: Node | None) -> int:
    return node.start_mark.line + 1 if node is not None else 0


def duplicate_keys(node: Node | None) -> list[tuple[Node, Node]]:
    """Every repeated key under ``node`` as (the repeat, the first): plain YAML loading keeps
    the last value silently, so readers that construct whole subtrees report these first."""
    found: list[tuple[Node, Node]] = []
    stack = [node] if node is not None else []
    while stack:
        current = stack.pop()
        if isinstance(current, MappingNode):
            first: dict[Any, Node] = {}
            for key_node, value_node in current.value:
                if isinstance(key_node, ScalarNode):
                    key = (key_node.tag, key_node.value)
                    if key in first:
                        found.append((key_node, first[key]))
                    else:
                        first[key] = key_node
                stack.extend((key_node, value_node))
        elif isinstance(current, SequenceNode):
            stack.extend(current.value)
    return sorted(found, key=lambda pair: line_of(pair[0]))


MERGE_TAG = "tag:yaml.org,2002:merge"


def merge_keys(node: Node | None) -> list[Node]:
    """Every YAML merge key (``<<: *base``) under ``node``: the shared readers refuse them, by line
    (issue 31 J: constructing one raised ``ConstructorError``; supporting them in readers that
    check every key by its line would hide which line a merged value came from)."""
    found: list[Node] = []
    stack = [node] if node is not None else []
    seen: set[int] = set()
    while stack:
        current = stack.pop()
        if id(current) in seen:  # an alias is the same node: once
            continue
        seen.add(id(current))
        if isinstance(current, MappingNode):
            for key_node, value_node in current.value:
                if key_node.tag == MERGE_TAG:
                    found.append(key_node)
                stack.extend((key_node, value_node))
        elif isinstance(current, SequenceNode):
            stack.extend(current.value)
    return sorted(found, key=line_of)


KIND_NAMES = {
    "str": "a string",
    "text": "a string",
    "int": "an integer",
    "number": "a number",
    "bool": "true or false",
    "list": "a list",
    "map": "a mapping",
    "scalar": "a string, number or boolean",
    "any": "a value",
}


class Source:
    """One case file: its composed root node and the errors found in it."""

    def __init__(self, path: Path, errors: list[CaseError], display: str | None = None):
        self.path = path
        self.display = display or str(path)
        self.errors = errors
        self.root: Node | None = None
        # ids of items that were found but could not be used, and whether some item had
        # no readable id at all: cross-file checks stay quiet about them (no follow-on noise)
        self.broken_ids: set[str] = set()
        self.broken_without_id = False
        self._duplicates_reported: set[int] = set()  # key nodes already named, by id
        self._constructor = _Loader("")
        try:
            text = read_input_text(path)  # a regular file only, within its size limit (issue 31 J)
        except (OSError, UnicodeDecodeError) as exc:
            self.error(0, f"cannot read the file: {exc}")
            return
        try:
            try:
                self.root = yaml.compose(text, Loader=_FastLoader)
            except yaml.YAMLError:
                self.root = yaml.compose(text, Loader=_Loader)
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            line = mark.line + 1 if mark is not None else 0
            problem = " ".join(p for p in (exc.context, exc.problem) if p)
            self.error(line, f"bad YAML: {problem}")
        except yaml.YAMLError as exc:  # pragma: no cover - other reader errors
            self.error(0, f"bad YAML: {exc}")
        else:
            if self.root is None:
                self.error(1, "the file is empty")
            for node in merge_keys(self.root):
                self.error(node, "a YAML merge key ('<<') is not supported here: write the keys out")
            if merge_keys(self.root):
                self.root = None  # constructing it would fail; every merge is named above

    def error(self, where: Node | int | None, message: str) -> None:
        line = where if isinstance(where, int) else line_of(where)
        self.errors.append(CaseError(self.display, line, message))

    def value(self, node: Node) -> Any:
        """The plain Python value of ``node``; a key repeated inside it is reported (once) first,
        since constructing a mapping keeps only the last of two values."""
        if not isinstance(node, ScalarNode):
            self.report_duplicates(node)
        return self._constructor.construct_object(node, deep=True)

    def report_duplicates(self, node: Node | None, what: str = "") -> None:
        prefix = f"{what}: " if what else ""
        for dup, first in duplicate_keys(node):
            if id(dup) not in self._duplicates_reported:
                self._duplicates_reported.add(id(dup))
                self.error(dup, f"{prefix}duplicate key {dup.value!r} (first at line {line_of(first)})")

    def check(self, node: Node, kind: str, what: str) -> Any:
        """``node``'s value if it is of ``kind``; else report and return None.

        For ``list`` and ``map`` the node itself is returned (so callers keep lines)."""
        ok: bool
        if kind == "list":
            ok = isinstance(node, SequenceNode)
            result: Any = node
        elif kind == "map":
            ok = isinstance(node, MappingNode)
            result = node
        elif kind == "any":
            return self.value(node)
        else:
            if not isinstance(node, ScalarNode):
                ok, result = False, None
            else:
                result = self.value(node)
                if kind == "str":
                    ok = isinstance(result, str) and result.strip() != ""
                elif kind == "text":  # a string that may be empty
                    ok = isinstance(result, str)
                elif kind == "int":
                    ok = isinstance(result, int) and not isinstance(result, bool)
                elif kind == "number":
                    ok = isinstance(result, (int, float)) and not isinstance(result, bool)
                    if ok and result != result or ok and result in (float("inf"), float("-inf")):
                        ok = False
                elif kind == "bool":
                    ok = isinstance(result, bool)
                elif kind == "scalar":
                    ok = result is not None
                else:  # pragma: no cover
                    raise ValueError(kind)
        if not ok:
            self.error(node, f"{what} must be {KIND_NAMES[kind]}, not {_describe(node, self)}")
            return None
        return result


def _describe(node: Node, src: Source) -> str:
    if isinstance(node, MappingNode):
        return "a mapping"
    if isinstance(node, SequenceNode):
        return "a list"
    value = src.value(node)
    if value is None:
        return "empty"
    if isinstance(value, str):
        return "an empty string" if not value.strip() else f"the string {value!r}"
    return f"{type(value).__name__} {value!r}"


class Fields:
    """The keys of one YAML mapping, read with their lines.

    Unknown keys and duplicate keys are reported when it is made; ``get`` reports a
    missing required key or a wrong type and returns None then.
    """

    def __init__(self, src: Source, node: Node | None, what: str, allowed: set[str] | tuple[str, ...] | None):
        self.src = src
        self.what = what
        self.node = node
        self.ok = isinstance(node, MappingNode)
        self.items: dict[str, tuple[Node, Node]] = {}
        if not self.ok:
            if node is not None:
                src.error(node, f"{what} must be a mapping, not {_describe(node, src)}")
            return
        assert isinstance(node, MappingNode)
        for key_node, value_node in node.value:
            key = src.value(key_node) if isinstance(key_node, ScalarNode) else None
            if not isinstance(key, str):
                src.error(key_node, f"{what}: keys must be strings, not {_describe(key_node, src)}")
                continue
            if key in self.items:
                if id(key_node) not in src._duplicates_reported:
                    src._duplicates_reported.add(id(key_node))
                    src.error(key_node, f"{what}: duplicate key {key!r} (first at line {line_of(self.items[key][0])})")
                continue
            self.items[key] = (key_node, value_node)
            if allowed is not None and key not in allowed:
                src.error(key_node, f"{what}: unknown key {key!r} (allowed: {', '.join(sorted(allowed))})")

    @property
    def line(self) -> int:
        return line_of(self.node)

    def has(self, key: str) -> bool:
        return key in self.items

    def node_of(self, key: str) -> Node | None:
        pair = self.items.get(key)
        return pair[1] if pair else None

    def line_of(self, key: str) -> int:
        pair = self.items.get(key)
        return line_of(pair[1]) if pair else self.line

    def get(self, key: str, kind: str, *, required: bool = True, default: Any = None) -> Any:
        if not self.ok:
            return default
        pair = self.items.get(key)
        if pair is None:
            if required:
                self.src.error(self.node, f"{self.what}: missing field {key!r}")
            return default
        value = self.src.check(pair[1], kind, f"{self.what}: {key!r}")
        return default if value is None else value

    def str_list(self, key: str, *, required: bool = False) -> list[tuple[str, Node]]:
        """A list of strings with their nodes (a wrong item is reported and left out)."""
        seq = self.get(key, "list", required=required)
        out: list[tuple[str, Node]] = []
        if seq is None:
            return out
        for item in seq.value:
            value = self.src.check(item, "str", f"{self.what}: each item of {key!r}")
            if value is not None:
                out.append((value, item))
        return out

