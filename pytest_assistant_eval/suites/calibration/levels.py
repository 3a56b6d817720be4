"""Level settings, the level setting key and automatic placement (S3).

A level is what the assistant product configures around a model: its
instructions, tools, caps, result caps, context window, history policy and the
fixed sentence it uses to hand a question to a higher level. They live in
``calibration/levels.yaml`` with one instructions file per level under
``calibration/instructions/``.

The setting key (S3.4) is what a finished cell records so that results asked
under different instructions, tools or tool behaviour are never silently mixed.
This module must never import pytest or talk to a provider.

Placement rules (``placement``), first match wins:

1. the built-in ``scripted`` reference assistants (provider ``scripted`` or a
   name ``scripted:...``) -> advanced: they are written to do every case;
2. a known context window below 32,768 tokens, or a known size below 8B -> basic;
3. a window of at least 65,536 tokens (or unknown) together with either a size of
   at least 70B or a frontier family name -> advanced. Frontier families:
   Claude Opus and Sonnet, GPT-4 class (gpt-4, gpt-4o, gpt-4.1) and GPT-5, the
   o1/o3/o4 reasoning models, Gemini Pro; "mini", "nano", "flash", "lite" and
   "haiku" variants are not frontier;
4. everything else -> standard.

The size comes from the argument, or else from the name (``llama3.1:70b``,
``mixtral:8x7b`` = 56B). When ``levels`` does not define the rule's level, the
level at the same rank (first, middle, last) is used.

Size: loading with its file-and-line errors (the trust verdict's bars too), the setting key and
placement are three jobs in one module; placement (`placement`, `_size_from_name`, `_is_frontier`) and the setting key
(`setting_key`, `setting_change`) would each split off. What the tables read of a key (`setting_id`,
`setting_mix`) and the trust bars live in ``tabular/`` (issue 32) and are re-exported here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from pytest_assistant_eval.yaml_source import line_of, merge_keys
from pytest_assistant_eval.input_files import read_input_text
from pytest_assistant_eval.tabular.setting_keys import canonical_json, setting_id, setting_mix, sha256_hex as _sha256
from pytest_assistant_eval.tabular.trust_bars import TrustBars

__all__ = [
    "BEHAVIOUR_VERSION",
    "DEFAULT_TOOL_NAMES",
    "ANSWER_CLASSES",
    "ESCALATION_PLACEHOLDER",
    "Level",
    "Levels",
    "LevelsError",
    "TrustBars",
    "load_levels",
    "setting_key",
    "setting_change",
    "setting_id",
    "setting_mix",
    "placement",
    "canonical_json",
]

#: Bumped when what the tools return changes while their descriptions stay the same
#: (the tools hash cannot see that change, so a checkpoint or a summary must be told).
BEHAVIOUR_VERSION = "b1"

DEFAULT_TOOL_NAMES: tuple[str, ...] = (
    "search_contacts", "get_contact",
    "search_messages", "read_message", "send_message",
    "list_events", "get_event", "create_event", "move_event", "cancel_event",
    "search_listings", "get_listing", "list_bookings", "book_listing", "cancel_booking",
    "list_cards", "get_card", "list_charges", "charge_card",
    "list_runs", "get_run",
)  # fmt: skip

ANSWER_CLASSES = ("lookup", "interpret", "diagnose")

#: Written in an instructions file where the level's escalation sentence goes.
ESCALATION_PLACEHOLDER = "{{escalation_sentence}}"


class LevelsError(ValueError):
    """A levels file that cannot be used; ``errors`` holds every problem as ``file:line: what``."""

    def __init__(self, errors: Sequence[str]):
        self.errors = list(errors)
        super().__init__("\n".join(self.errors))


@dataclass(frozen=True)
class Level:
    """One level setting, with its instructions already read (and the escalation sentence filled in)."""

    name: str
    instructions_text: str
    instructions_file: str
    tools: tuple[str, ...]
    max_tool_calls: int
    max_rounds: int
    max_output_tokens: int
    result_cap_chars: int
    context_window: int
    compact_at: float
    keep_last_rounds: int
    escalation_sentence: str
    answers: tuple[str, ...]


@dataclass(frozen=True)
class Levels:
    """All levels of a levels file, lowest first (the file's order), and the trust verdict's bars."""

    version: str
    levels: dict[str, Level] = field(default_factory=dict)
    trust: TrustBars = field(default_factory=TrustBars)

    @property
    def names(self) -> list[str]:
        return list(self.levels)

    def __getitem__(self, name: str) -> Level:
        return self.levels[name]

    def __iter__(self):
        return iter(self.levels.values())

    def higher(self, name: str) -> str | None:
        """The next level up, None for the highest."""
        names = self.names
        i = names.index(name)
        return names[i + 1] if i + 1 < len(names) else None


# ---------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------

_LEVEL_KEYS = {
    "instructions", "tools", "caps", "result_cap_chars", "context_window", "history",
    "escalation_sentence", "answers",
}  # fmt: skip
_CAP_KEYS = ("max_tool_calls", "max_rounds", "max_output_tokens")
_HISTORY_KEYS = ("compact_at", "keep_last_rounds")


class _Errors:
    def __init__(self, path: Path):
        self.path = path
        self.items: list[str] = []

    def add(self, node: yaml.Node | None, message: str) -> None:
        line = node.start_mark.line + 1 if node is not None else 1
        self.items.append(f"{self.path}:{line}: {message}")


def _construct(node: yaml.Node) -> Any:
    return yaml.SafeLoader("").construct_object(node, deep=True)


def _mapping(node: yaml.Node, what: str, errors: _Errors) -> dict[str, tuple[yaml.Node, yaml.Node]] | None:
    """A mapping node's entries by key (with the key node, for lines), or None after reporting."""
    if not isinstance(node, yaml.MappingNode):
        errors.add(node, f"{what} must be a mapping")
        return None
    out: dict[str, tuple[yaml.Node, yaml.Node]] = {}
    for key_node, value_node in node.value:
        key = str(_construct(key_node))
        if key in out:
            errors.add(key_node, f"{what}: duplicate key {key!r}")
            continue
        out[key] = (key_node, value_node)
    return out


def _child(node: yaml.Node, key: str) -> yaml.Node | None:
    """The value node of ``key`` in a mapping node (the first one), for its line."""
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == key:
                return value_node
    return None


def _positive_int(node: yaml.Node, what: str, errors: _Errors) -> int | None:
    value = _construct(node)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        errors.add(node, f"{what} must be a positive integer, got {value!r}")
        return None
    return value


def _string_list(node: yaml.Node, what: str, errors: _Errors) -> list[tuple[str, yaml.Node]] | None:
    if not isinstance(node, yaml.SequenceNode) or not node.value:
        errors.add(node, f"{what} must be a non-empty list")
        return None
    out = []
    seen: set[str] = set()
    for item in node.value:
        value = _construct(item)
        if not isinstance(value, str) or not value.strip():
            errors.add(item, f"{what}: every entry must be a name, got {value!r}")
            continue
        if value in seen:
            errors.add(item, f"{what}: {value!r} is listed twice")
            continue
        seen.add(value)
        out.append((value, item))
    return out


def load_levels(path: Path | str, known_tools: Iterable[str] | None = DEFAULT_TOOL_NAMES) -> Levels:
    """Read and check a levels file; raise ``LevelsError`` naming file, line and problem for every error.

    Instructions files are read from ``instructions/`` beside the levels file.
    ``known_tools`` is the world's tool names (None: any name is accepted).
    """
    path = Path(path)
    errors = _Errors(path)
    try:
        text = read_input_text(path)  # a regular file only (issue 31 J)
    except (OSError, UnicodeDecodeError) as exc:
        raise LevelsError([f"{path}:1: cannot read the levels file: {getattr(exc, 'strerror', None) or exc}"]) from exc
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        raise LevelsError([f"{path}:{line}: not valid YAML: {exc.problem or exc}"]) from exc
    if root is None:
        raise LevelsError([f"{path}:1: the levels file is empty"])
    merges = merge_keys(root)
    if merges:
        raise LevelsError([f"{path}:{line_of(n)}: a YAML merge key ('<<') is not supported here: write the keys out"
                           for n in merges])

    top = _mapping(root, "the levels file", errors)
    if top is None:
        raise LevelsError(errors.items)
    for key, (key_node, _) in top.items():
        if key not in ("levels_version", "levels", "trust"):
            errors.add(key_node, f"unknown key {key!r} (expected levels_version, levels, trust)")
    trust = _trust(top["trust"][1], errors) if "trust" in top else TrustBars()

    version = ""
    if "levels_version" not in top:
        errors.add(root, "levels_version is missing")
    else:
        vnode = top["levels_version"][1]
        raw = _construct(vnode)
        if isinstance(raw, (str, int)) and not isinstance(raw, bool) and str(raw).strip():
            version = str(raw)
        else:
            errors.add(vnode, f"levels_version must be a string or a number, got {raw!r}")

    known = set(known_tools) if known_tools is not None else None
    levels: dict[str, Level] = {}
    entries: dict[str, tuple[yaml.Node, yaml.Node]] | None = None
    if "levels" not in top:
        errors.add(root, "levels is missing")
    else:
        levels_node = top["levels"][1]
        entries = _mapping(levels_node, "levels", errors)
        if entries is not None and not entries:
            errors.add(levels_node, "levels must define at least one level")
        for name, (key_node, node) in (entries or {}).items():
            level = _load_level(name, key_node, node, path.parent / "instructions", known, errors)
            if level is not None:
                levels[name] = level

    sentences: dict[str, str] = {}
    for level in levels.values():
        if level.escalation_sentence in sentences:
            node = _child(entries[level.name][1], "escalation_sentence")  # type: ignore[index]
            errors.add(
                node,
                f"levels {sentences[level.escalation_sentence]!r} and {level.name!r} share one escalation sentence;"
                " each level needs its own",
            )
        sentences.setdefault(level.escalation_sentence, level.name)

    if errors.items:
        raise LevelsError(errors.items)
    return Levels(version=version, levels=levels, trust=trust)


def _trust(node: yaml.Node, errors: _Errors) -> TrustBars:
    """The optional ``trust:`` mapping: ``behaviour_bar`` (a share in (0, 1]) and ``min_runs`` (a whole number >= 1)."""
    entries = _mapping(node, "trust", errors)
    found: dict[str, Any] = {}
    for key, (knode, vnode) in (entries or {}).items():
        raw = _construct(vnode)
        if key == "behaviour_bar":
            if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not 0 < raw <= 1:
                errors.add(vnode, f"trust: behaviour_bar must be a share in (0, 1] (0.9 is 90%), got {raw!r}")
            else:
                found[key] = float(raw)
        elif key == "min_runs":
            found[key] = _positive_int(vnode, "trust: min_runs", errors)
        else:
            errors.add(knode, f"trust: unknown key {key!r} (expected behaviour_bar, min_runs)")
    return TrustBars(**{k: v for k, v in found.items() if v is not None})


def _load_level(
    name: str,
    key_node: yaml.Node,
    node: yaml.Node,
    instructions_dir: Path,
    known_tools: set[str] | None,
    errors: _Errors,
) -> Level | None:
    before = len(errors.items)
    entries = _mapping(node, f"level {name!r}", errors)
    if entries is None:
        return None
    for key, (knode, _) in entries.items():
        if key not in _LEVEL_KEYS:
            errors.add(knode, f"level {name!r}: unknown key {key!r}")
    for key in sorted(_LEVEL_KEYS - entries.keys()):
        errors.add(key_node, f"level {name!r}: {key} is missing")

    def get(key: str) -> yaml.Node | None:
        return entries[key][1] if key in entries else None

    values: dict[str, Any] = {}

    # escalation sentence first: the instructions are checked against it
    sentence = None
    if (n := get("escalation_sentence")) is not None:
        raw = _construct(n)
        if isinstance(raw, str) and raw.strip():
            sentence = " ".join(raw.split())
        else:
            errors.add(n, f"level {name!r}: escalation_sentence must be a non-empty sentence, got {raw!r}")

    if (n := get("instructions")) is not None:
        raw = _construct(n)
        if not isinstance(raw, str) or not raw.strip() or Path(raw).name != raw:
            errors.add(n, f"level {name!r}: instructions must be a file name under instructions/, got {raw!r}")
        else:
            file = instructions_dir / raw
            try:
                body = file.read_text(encoding="utf-8")
            except OSError:
                errors.add(n, f"level {name!r}: instructions file {raw!r} not found in {instructions_dir}")
            else:
                if not body.strip():
                    errors.add(n, f"level {name!r}: instructions file {raw!r} is empty")
                elif sentence is not None:
                    if ESCALATION_PLACEHOLDER in body:
                        body = body.replace(ESCALATION_PLACEHOLDER, sentence)
                    elif sentence not in " ".join(body.split()):
                        errors.add(
                            n,
                            f"level {name!r}: instructions file {raw!r} neither contains {ESCALATION_PLACEHOLDER}"
                            " nor the level's escalation sentence",
                        )
                values["instructions_file"] = raw
                values["instructions_text"] = body

    if (n := get("tools")) is not None:
        tools = _string_list(n, f"level {name!r}: tools", errors)
        if tools is not None:
            for tool, tnode in tools:
                if known_tools is not None and tool not in known_tools:
                    close = [t for t in sorted(known_tools) if t.split("_")[-1] == tool.split("_")[-1]]
                    hint = f" (did you mean {', '.join(close)}?)" if close else ""
                    errors.add(tnode, f"level {name!r}: unknown tool {tool!r}{hint}")
            values["tools"] = tuple(t for t, _ in tools)

    if (n := get("caps")) is not None:
        caps = _mapping(n, f"level {name!r}: caps", errors)
        if caps is not None:
            for key, (knode, _) in caps.items():
                if key not in _CAP_KEYS:
                    errors.add(knode, f"level {name!r}: caps: unknown key {key!r}")
            for key in _CAP_KEYS:
                if key not in caps:
                    errors.add(n, f"level {name!r}: caps: {key} is missing")
                else:
                    values[key] = _positive_int(caps[key][1], f"level {name!r}: caps: {key}", errors)

    for key in ("result_cap_chars", "context_window"):
        if (n := get(key)) is not None:
            values[key] = _positive_int(n, f"level {name!r}: {key}", errors)

    if (n := get("history")) is not None:
        history = _mapping(n, f"level {name!r}: history", errors)
        if history is not None:
            for key, (knode, _) in history.items():
                if key not in _HISTORY_KEYS:
                    errors.add(knode, f"level {name!r}: history: unknown key {key!r}")
            if "compact_at" not in history:
                errors.add(n, f"level {name!r}: history: compact_at is missing")
            else:
                cnode = history["compact_at"][1]
                raw = _construct(cnode)
                if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not 0 < raw <= 1:
                    errors.add(cnode, f"level {name!r}: history: compact_at must be a fraction in (0, 1], got {raw!r}")
                else:
                    values["compact_at"] = float(raw)
            if "keep_last_rounds" not in history:
                errors.add(n, f"level {name!r}: history: keep_last_rounds is missing")
            else:
                knode = history["keep_last_rounds"][1]
                raw = _construct(knode)
                if isinstance(raw, bool) or not isinstance(raw, int) or raw < 0:
                    errors.add(knode, f"level {name!r}: history: keep_last_rounds must be a whole number >= 0, got {raw!r}")
                else:
                    values["keep_last_rounds"] = raw

    if (n := get("answers")) is not None:
        answers = _string_list(n, f"level {name!r}: answers", errors)
        if answers is not None:
            for cls, anode in answers:
                if cls not in ANSWER_CLASSES:
                    errors.add(anode, f"level {name!r}: answers: unknown class {cls!r} (one of {', '.join(ANSWER_CLASSES)})")
            values["answers"] = tuple(c for c, _ in answers)

    window, out_tokens = values.get("context_window"), values.get("max_output_tokens")
    if window and out_tokens and out_tokens >= window:
        errors.add(
            _child(get("caps"), "max_output_tokens"), f"level {name!r}: caps: max_output_tokens ({out_tokens}) must be below context_window ({window})"
        )

    if len(errors.items) > before:
        return None
    return Level(name=name, escalation_sentence=sentence, **values)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# The setting key
# ---------------------------------------------------------------------------


def setting_key(level: Level, tool_definitions: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The level setting key a cell records (S3.4).

    ``tools_hash`` covers name, description and parameters of the level's tools in
    the level's order; other fields of a definition (flags used by the checks) and
    tools the level does not offer do not count. A tool of the level missing from
    ``tool_definitions`` is an error: a hash of fewer tools would be a lie.
    """
    by_name = {d["name"]: d for d in tool_definitions}
    missing = [t for t in level.tools if t not in by_name]
    if missing:
        raise ValueError(f"level {level.name!r}: no definition for tool(s) {', '.join(missing)}")
    tools = [
        {"name": by_name[t]["name"], "description": by_name[t].get("description", ""), "parameters": by_name[t].get("parameters", {})}
        for t in level.tools
    ]
    return {
        "level": level.name,
        "max_tool_calls": level.max_tool_calls,
        "max_rounds": level.max_rounds,
        "max_output_tokens": level.max_output_tokens,
        "result_cap_chars": level.result_cap_chars,
        "context_window": level.context_window,
        "history": {"compact_at": level.compact_at, "keep_last_rounds": level.keep_last_rounds},
        "system_hash": _sha256(level.instructions_text),
        "tools_hash": _sha256(canonical_json(tools)),
        "behaviour": BEHAVIOUR_VERSION,
    }


_SETTING_WORDS = {
    "max_tool_calls": "tool calls",
    "max_rounds": "rounds",
    "max_output_tokens": "output tokens",
    "result_cap_chars": "result cap",
    "context_window": "window",
    "history": "history policy",
    "level": "level",
}


def setting_change(old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
    """Why a checkpoint made under ``old`` cannot continue under ``new``, or None when they match.

    The wording is the one the resume line uses (S4.8).
    """
    if old.get("system_hash") != new.get("system_hash") or old.get("tools_hash") != new.get("tools_hash"):
        return "the instructions or tools changed"
    if old.get("behaviour") != new.get("behaviour"):
        return "the assistant's behaviour changed since this checkpoint"
    changed = [words for key, words in _SETTING_WORDS.items() if old.get(key) != new.get(key)]
    if changed:
        return "the level setting changed: " + ", ".join(changed)
    return None


# ---------------------------------------------------------------------------
# Placement
# ---------------------------------------------------------------------------

_FRONTIER = re.compile(
    r"claude[-\w.]*?(opus|sonnet)|\b(opus|sonnet)\b"
    r"|\bgpt-?(4(\.\d+|o)?|5(\.\d+)?)\b"
    r"|(^|[/:\s])o[134](-pro|-preview)?($|[-:\s])"
    r"|gemini[-\w.]*pro",
    re.IGNORECASE,
)
_SMALL_VARIANT = re.compile(r"(?<![a-z])(mini|nano|flash|lite|haiku)", re.IGNORECASE)  # not gemi-ni
_SIZE_IN_NAME = re.compile(r"(?<![\w.])(?:(\d+)x)?(\d+(?:\.\d+)?)b(?![a-z0-9])", re.IGNORECASE)
_RANK = {"basic": 0, "standard": 1, "advanced": 2}


def _size_from_name(name: str) -> float | None:
    m = _SIZE_IN_NAME.search(name.replace(":", " ").replace("-", " ").replace("_", " "))
    if not m:
        return None
    experts = int(m.group(1)) if m.group(1) else 1
    return experts * float(m.group(2))


def _is_frontier(name: str) -> bool:
    return bool(_FRONTIER.search(name)) and not _SMALL_VARIANT.search(name)


def placement(
    model_name: str,
    size_b: float | None,
    context_window: int | None,
    levels: Levels,
    *,
    provider: str | None = None,
) -> str:
    """The model's automatic level by the rules in the module doc."""
    if provider == "scripted" or model_name.lower().startswith("scripted:"):
        rule = "advanced"
    else:
        size = size_b if size_b is not None else _size_from_name(model_name)
        big_window = context_window is None or context_window >= 65536
        if (context_window is not None and context_window < 32768) or (size is not None and size < 8):
            rule = "basic"
        elif big_window and ((size is not None and size >= 70) or _is_frontier(model_name)):
            rule = "advanced"
        else:
            rule = "standard"
    names = levels.names
    if rule in names:
        return rule
    if not names:
        raise ValueError("no levels to place a model at")
    rank = _RANK[rule]
    return names[round(rank * (len(names) - 1) / 2)]
