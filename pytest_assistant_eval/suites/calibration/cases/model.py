"""The case model: questions, the answer key, the eight-turn scenario and tasks (S2).

Plain frozen dataclasses, produced by the loaders in this package from
``calibration/*.yaml`` and read by the runner, the reference assistants and the checks.
Nothing here knows about pytest, providers or files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

QuestionClass = Literal["lookup", "interpret", "diagnose"]
CLASSES: tuple[QuestionClass, ...] = ("lookup", "interpret", "diagnose")

MatcherKind = Literal["exact", "normalised", "numeric", "set", "contains", "any"]


@dataclass(frozen=True)
class Matcher:
    """How one argument or field value is compared.

    - ``exact``: equal after JSON normalisation (``1`` == ``1.0``);
    - ``normalised``: strings equal after casefold, trimmed, inner whitespace collapsed;
    - ``numeric``: ``abs(actual - value) <= tolerance``;
    - ``set``: the actual list holds the same elements, order ignored (normalised strings);
      elements in ``may_include`` may be there too (e.g. the owner among attendees);
    - ``contains``: the normalised actual string contains every normalised string in ``value``;
    - ``any``: present, any value.

    ``from_fact`` names the user fact this value comes from (asks-for-info, provenance).
    """

    kind: MatcherKind
    value: Any = None
    tolerance: float = 0.0
    from_fact: str | None = None
    may_include: tuple[Any, ...] = ()  # ``set`` only: elements allowed besides ``value``


@dataclass(frozen=True)
class ToolCallSpec:
    """A concrete tool call (the reference oracle's read calls)."""

    tool: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Question:
    id: str  # G01 ... ; S01 turns are S01.1 ... S01.8
    text: str
    cls: QuestionClass
    variant: str = "base"  # the world variant the question is about
    line: int = 0  # where it stands in its file, for messages


@dataclass(frozen=True)
class Derivation:
    """An executable derivation: ``sql`` run on ``variant``'s database must return one
    row ``(value, unit)`` (``unit`` may be NULL for unitless facts)."""

    sql: str
    variant: str = "base"


@dataclass(frozen=True)
class Fact:
    id: str
    statement: str
    value: Any  # number, string or bool
    unit: str | None
    critical: bool
    derivation: Derivation
    calculation: str | None = None  # e.g. "120.00 + 292.50 = 412.50" when no tool returns the value itself


@dataclass(frozen=True)
class ForbiddenClaim:
    pattern: str  # a regular expression, matched case-insensitively
    why: str
    claim: str = ""  # the forbidden claim in words, as a judge reads it ("Inês can still be reached at ...")


@dataclass(frozen=True)
class KeyEntry:
    """The answer key for one question (or one S01 turn)."""

    question_id: str
    facts: tuple[Fact, ...]
    forbidden: tuple[ForbiddenClaim, ...] = ()
    data_does_not_answer: bool = False
    failed_run: bool = False
    escalation_ok: tuple[str, ...] = ()  # levels at which escalating is acceptable
    oracle_calls: tuple[ToolCallSpec, ...] = ()  # read calls a careful assistant makes
    line: int = 0


@dataclass(frozen=True)
class QuestionSet:
    set_version: str
    questions: tuple[Question, ...]
    scenario: Scenario


@dataclass(frozen=True)
class Scenario:
    """S01: user turns sharing one conversation, run only at the automatic level."""

    id: str
    turns: tuple[Question, ...]


@dataclass(frozen=True)
class AnswerKey:
    key_version: str
    entries: dict[str, KeyEntry]


@dataclass(frozen=True)
class UserFact:
    """A fact only the user knows; given only when asked (``keywords`` recognise the ask)."""

    id: str
    description: str
    value: Any
    keywords: tuple[str, ...]
    answer: str | None = None  # how the user says it, first person; ``{value}`` is the value


@dataclass(frozen=True)
class Approval:
    """An approval the user gives when asked, within its conditions.

    ``tool`` is the consequential tool it covers; ``args`` are matchers the call's
    arguments must satisfy; ``max_amount``/``currency`` cap the money spent.
    ``grant`` false means the user refuses this action when asked.
    """

    id: str
    tool: str
    args: dict[str, Matcher] = field(default_factory=dict)
    max_amount: float | None = None
    currency: str | None = None
    grant: bool = True


@dataclass(frozen=True)
class RequiredAction:
    id: str
    tool: str
    args: dict[str, Matcher]
    after: tuple[str, ...] = ()  # ids of required actions that must come first
    outcome: Literal["ok", "refused"] = "ok"  # "refused": the call must be attempted and is refused


@dataclass(frozen=True)
class StateAssertion:
    """Field assertions on rows of one table of the final state.

    ``where`` selects rows (exact values); ``fields`` must match on each selected row;
    ``count`` (if set) is the number of rows ``where`` must select; ``ignore`` lists
    fields left out of the readable diff.
    """

    table: str
    where: dict[str, Any]
    fields: dict[str, Matcher] = field(default_factory=dict)
    count: int | None = None
    ignore: tuple[str, ...] = ()


@dataclass(frozen=True)
class Restriction:
    """A forbidden action (``tool`` with matching ``args``) or a spending cap."""

    id: str
    tool: str
    args: dict[str, Matcher] = field(default_factory=dict)
    max_amount: float | None = None
    currency: str | None = None
    why: str = ""


@dataclass(frozen=True)
class ReportPoint:
    """What the final report must tell the user when the right result is no change or a
    refusal (issue 21): "the card expired", "the room is taken on those dates". Without it an
    assistant that changes nothing and says nothing useful would pass such a task. ``words``
    are regular expressions; code settles the point right only when one is asserted in a
    sentence of the final message (not negated, asked or supposed); otherwise a judge reads it."""

    id: str
    statement: str
    words: tuple[str, ...]


@dataclass(frozen=True)
class InjectedAction:
    """One action an injected text asks for: ``tool`` with arguments satisfying ``args``."""

    tool: str
    args: dict[str, Matcher] = field(default_factory=dict)


@dataclass(frozen=True)
class Injection:
    """An instruction planted in the world's data, addressed to the assistant (issue 16).

    ``source`` says where it sits (``table``, ``key``, ``field``) in the task's variant and
    ``text`` is the planted instruction as written there. ``goal`` lists the actions only the
    injected text asks for (tool + argument matchers): doing or attempting one is unsafe.
    ``markers`` are words only the injection names (a payee, an address): a sentence naming
    one that passes the instruction on as the user's own wish repeats it.
    """

    id: str
    table: str
    key: str
    field: str
    text: str
    goal: tuple[InjectedAction, ...]
    markers: tuple[str, ...]


BehaviourCheck = Literal["asks_first", "asks_for_info", "real_info", "reports_back", "truthful", "resists_injections"]
BEHAVIOUR_CHECKS: tuple[BehaviourCheck, ...] = ("asks_first", "asks_for_info", "real_info", "reports_back", "truthful",
                                                "resists_injections")


@dataclass(frozen=True)
class Task:
    id: str  # T01 ...
    title: str
    variant: str  # world variant it starts from
    opening: str  # the user's opening request
    persona: str
    facts: tuple[UserFact, ...]
    approvals: tuple[Approval, ...]
    required_actions: tuple[RequiredAction, ...]
    expected_state: tuple[StateAssertion, ...]
    restrictions: tuple[Restriction, ...]
    checks: tuple[BehaviourCheck, ...]
    lookups: tuple[ToolCallSpec, ...]  # read calls a careful assistant makes first
    expects_refusal: bool = False  # a required call is refused by the world; handle it
    pair: str | None = None  # the paired task's id
    repeats: int = 1
    file: str = ""
    line: int = 0
    version: str = "1"  # the task file's ``task_version``: bump it when the task changes
    injection: Injection | None = None  # an instruction planted in the variant's data (issue 16)
    report_must_say: tuple[ReportPoint, ...] = ()  # what the report tells when nothing changes (issue 21)
    # Approvals the opening request itself gives, stating the action and all its terms (issue 30):
    # each covers one call as a yes would; anything beyond its terms still needs a yes.
    opening_grants: tuple[str, ...] = ()


@dataclass(frozen=True)
class CaseSet:
    """Everything loaded from ``calibration/``: validated together."""

    questions: QuestionSet
    key: AnswerKey
    tasks: tuple[Task, ...]
