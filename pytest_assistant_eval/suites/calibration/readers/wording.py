"""Natural wording the answer checks read (S6.1): a key's date or time stated in any common
form, the many ways of saying that the data does not answer or that a run failed, and whether
a matched claim is negated, asked or only supposed.

Assistants do not write ISO dates or the key's phrasing: they write "Friday 20 March 2026,
15:00–16:30", "14:30 Lisbon time (WEST, UTC+1)", "I can't find it in your records", "so that
address won't reach her any more". This module reads such wording and reports what it found;
it never decides a verdict (a check may only settle right, S6.1). The task checks and the
simulated user may read dates through the same functions:

- ``moment_of_value(value, unit)``: a key value that is a date, month, time or date-time;
- ``read_moment(text, moment)``: whether a text states it, and the other values of its kind;
- ``says_no_data(text)`` / ``says_failed(text)``: the phrase found, None when none is;
- ``claim_stance(text, start, end, pattern)``: negated, question, conditional, and its sentence.

Size: two readers share the sentence helpers: moments (`read_moment` and its helpers) and
stances and phrasings (`claim_stance`, `says_no_data`, `says_failed`); the moments would
split off.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from pytest_assistant_eval.suites.calibration.readers.dates import DateMention, find_dates, zone_offset
from pytest_assistant_eval.suites.calibration.readers.negation import ZERO_COUNT

__all__ = [
    "negated_just_before",
    "split_sentences",
    "subject_anchors",
    "mentions_subject",
    "clause_around",
    "denial_in_clause",
    "Moment",
    "MomentReading",
    "Stance",
    "moment_of_value",
    "read_moment",
    "says_no_data",
    "says_failed",
    "claim_stance",
    "sentence_around",
    "plain",
]

#: How far apart (characters) a date and a time may stand and still be one date-time:
#: "Friday 20 March 2026, 15:00–16:30", "at 3 pm on 20 March", "**Date:** 20 March\n**Time:** 15:00".
NEAR = 80


def plain(text: str) -> str:
    """The text with typographic apostrophes and odd spaces made plain, same length (offsets hold)."""
    return text.translate(_PLAIN)


_PLAIN = str.maketrans({"\u2019": "'", "\u2018": "'", "\u00a0": " ", "\u202f": " ", "\u2009": " "})


# ---------------------------------------------------------------------------
# Dates and times of the key
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Moment:
    """A key value that is a date, month, time or date-time, as the checks compare it.

    ``date`` is ``YYYY-MM-DD`` (or ``--MM-DD`` for a key written without a year), ``month``
    ``YYYY-MM``, ``time`` ``HH:MM``; ``offset`` is the zone of the key's clock time in minutes
    east of UTC (``13:30`` with unit ``UTC`` -> 0), None for a local wall-clock time.
    """

    kind: Literal["date", "month", "time", "datetime"]
    date: str | None = None
    month: str | None = None
    time: str | None = None
    offset: int | None = None


@dataclass
class MomentReading:
    """What a text says about a moment: the mention that states it (the date's, for a
    date-time), a form note when only its zone is missing, and the other values of its kind."""

    matched: DateMention | None = None
    form_missing: str | None = None
    others: list[str] = field(default_factory=list)


_ISO_DATE = re.compile(r"^(?P<d>[0-9]{4}-[0-9]{2}-[0-9]{2})$")
_ISO_DATETIME = re.compile(
    r"^(?P<d>[0-9]{4}-[0-9]{2}-[0-9]{2})[T ](?P<t>[0-9]{2}:[0-9]{2})(?::[0-9]{2}(?:\.[0-9]+)?)?(?P<z>Z|[+-][0-9]{2}:?[0-9]{2})?$"
)
_ISO_MONTH = re.compile(r"^(?P<m>[0-9]{4}-(?:0[1-9]|1[0-2]))$")
_CLOCK = re.compile(r"^(?P<t>[0-9]{1,2}:[0-9]{2})$")


def moment_of_value(value: Any, unit: str | None = None) -> Moment | None:
    """The moment a key value names, or None when it is no date or time.

    ISO forms (``2026-02-27``, ``2026-03-20T15:00``, ``2029-02``, ``13:30``) and a date in
    words (``23 March``) are read; the unit may name the zone of a time (``UTC``, ``+01:00``).
    A unit that is no zone makes the value something else (None).
    """
    if not isinstance(value, str) or isinstance(value, bool):
        return None
    text = value.strip()
    offset = zone_offset(unit) if unit else None
    if unit and offset is None:
        return None
    if m := _ISO_DATE.match(text):
        return Moment("date", date=m["d"]) if not unit else None
    if m := _ISO_DATETIME.match(text):
        z = m["z"]
        if z:
            offset = 0 if z == "Z" else zone_offset(z)
        return Moment("datetime", date=m["d"], time=m["t"], offset=offset)
    if m := _ISO_MONTH.match(text):
        return Moment("month", month=m["m"]) if not unit else None
    if m := _CLOCK.match(text):
        return Moment("time", time=f"{int(m['t'].split(':')[0]):02d}:{m['t'].split(':')[1]}", offset=offset)
    found = find_dates(text)
    if len(found) == 1 and found[0].text.strip() == text and not unit:
        d = found[0]
        if d.kind == "date":
            return Moment("date", date=d.value)
        if d.kind == "month":
            return Moment("month", month=d.value)
    return None


def _minutes(clock: str) -> int:
    h, m = clock.split(":")[:2]
    return int(h) * 60 + int(m)


def _date_of(d: DateMention) -> str | None:
    return d.value[:10] if d.kind == "datetime" else d.value if d.kind == "date" else None


def _time_of(d: DateMention) -> str | None:
    return d.value[11:16] if d.kind == "datetime" else d.value[:5] if d.kind == "time" else None


def _same_day(stated: str, key: str) -> bool:
    """A day written without a year ("20 March") is the key's day when month and day agree."""
    if stated.startswith("--") or key.startswith("--"):
        return stated[-5:] == key[-5:]
    return stated == key


def _time_verdict(d: DateMention, moment: Moment) -> str:
    """``same``, ``same_without_zone``, ``other`` or ``unknown`` (zones that cannot be compared)."""
    clock = _time_of(d)
    assert clock is not None and moment.time is not None
    stated, key = _minutes(clock), _minutes(moment.time)
    if d.open_meridiem and stated < 720 and (stated + 720) % 1440 == key % 1440:
        stated = key  # "half past five" says 17:30 as well as 05:30
    if moment.offset is None:
        if d.offset is not None:
            return "unknown"  # "13:30 UTC" against a local wall-clock time: the local offset is not known here
        return "same" if stated == key else "other"
    if d.offset is None:
        return "same_without_zone" if stated == key else "unknown"
    return "same" if (stated - d.offset) % 1440 == (key - moment.offset) % 1440 else "other"


def read_moment(text: str, moment: Moment, mentions: list[DateMention] | None = None) -> MomentReading:
    """Whether ``text`` states ``moment`` in any form ``find_dates`` reads, and the other
    values of its kind it states (a wrong date, 15:30 UTC for 13:30 UTC)."""
    found = mentions if mentions is not None else find_dates(text)
    if moment.kind == "date":
        return _read_date(found, moment)
    if moment.kind == "month":
        return _read_month(found, moment)
    if moment.kind == "time":
        return _read_time(found, moment)
    return _read_datetime(found, moment)


def _read_date(found: list[DateMention], moment: Moment) -> MomentReading:
    assert moment.date is not None
    reading = MomentReading()
    for d in found:
        day = _date_of(d)
        if day is None:
            continue
        if _same_day(day, moment.date):
            reading.matched = reading.matched or d
        else:
            reading.others.append(d.text)
    return reading


def _read_month(found: list[DateMention], moment: Moment) -> MomentReading:
    assert moment.month is not None
    reading = MomentReading()
    for d in found:
        day = _date_of(d)
        if d.kind == "month":
            if d.value == moment.month:
                reading.matched = reading.matched or d
            else:
                reading.others.append(d.text)
        elif day and not day.startswith("--") and day[:7] == moment.month:
            reading.matched = reading.matched or d  # "expired on 28 February 2026" names the month
    return reading


def _read_time(found: list[DateMention], moment: Moment) -> MomentReading:
    reading = MomentReading()
    unzoned: DateMention | None = None
    for d in found:
        if _time_of(d) is None:
            continue
        verdict = _time_verdict(d, moment)
        if verdict == "same":
            reading.matched = reading.matched or d
        elif verdict == "same_without_zone":
            unzoned = unzoned or d
        elif verdict == "other":
            reading.others.append(d.text)
    if reading.matched is None and unzoned is not None:
        reading.matched = unzoned
        reading.form_missing = f"the time {unzoned.text.strip()} has no time zone"
    return reading


def _read_datetime(found: list[DateMention], moment: Moment) -> MomentReading:
    assert moment.date is not None
    reading = MomentReading()
    days = [d for d in found if d.kind == "date" and _same_day(d.value, moment.date)]
    times = [d for d in found if d.kind == "time"]
    for d in found:
        if d.kind == "datetime" and _same_day(d.value[:10], moment.date):
            if _time_verdict(d, moment) in ("same", "same_without_zone"):
                reading.matched = d
                return reading
            reading.others.append(d.text)
    starts = [t.start for t in times]
    near_others: list[str] = []
    for day in days:
        lo = bisect_left(starts, day.start - NEAR - 40)
        hi = bisect_right(starts, day.end + NEAR)
        for t in times[lo:hi]:
            gap = t.start - day.end if t.start >= day.end else day.start - t.end
            if gap > NEAR:
                continue
            verdict = _time_verdict(t, moment)
            if verdict in ("same", "same_without_zone"):
                reading.matched = day
                reading.others = []
                return reading
            if verdict == "other":
                near_others.append(t.text)
    if days:
        reading.others.extend(near_others)  # the day is right; a time beside it is not
    else:
        reading.others.extend(d.text for d in found if d.kind == "date" and not _same_day(d.value, moment.date))
    return reading


# ---------------------------------------------------------------------------
# Sentences, clauses and the stance of a claim
# ---------------------------------------------------------------------------

# A sentence ends at . ! ? followed by a space, a quote, markdown or the end, or at a line break
# (so "ines.costa@lindstudio.pt" and "1.5 GB" do not end one).
_SENTENCE_END = re.compile(r"[.!?]+(?=[\s\"')\]*_]|$)|\n")
_CLAUSE_BREAK = re.compile(
    r";|:\s|\s[—–]\s|—|,\s*(?:but|however|although|though|whereas|while)\b|\b(?:but|however|although|whereas)\b",
    re.I,
)
_NEGATION = re.compile(
    r"\b(?:not(?!\s+only)|no|never|nothing|none|neither|nor|without|cannot|no\s+longer|any\s*more|"
    r"instead\s+of|rather\s+than|zero)\b|\b\w+n't\b"
    # a count of nought before its noun denies as "no" does: "0 payments were applied"
    rf"|{ZERO_COUNT}(?=\s+(?:\(zero\)\s+)?[^\W\d_])",
    re.I,
)
_CONDITIONAL = re.compile(r"\b(?:if|unless|whether|in\s+case|suppose|assuming)\b", re.I)


@dataclass(frozen=True)
class Stance:
    """How a matched claim stands in its text: negated ("won't reach her any more"), asked
    ("Was it refunded?") or supposed ("if it was refunded"); ``asserted`` when none holds."""

    sentence: str
    negated: bool
    question: bool
    conditional: bool

    @property
    def asserted(self) -> bool:
        return not (self.negated or self.question or self.conditional)


def _sentence_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    left = 0
    for m in _SENTENCE_END.finditer(text, 0, start):
        left = m.end()
    right_m = _SENTENCE_END.search(text, end)
    right = right_m.end() if right_m else len(text)
    return left, right


def sentence_around(text: str, start: int, end: int) -> str:
    """The sentence that holds ``text[start:end]``, trimmed."""
    left, right = _sentence_bounds(text, start, end)
    return text[left:right].strip()


def claim_stance(text: str, start: int, end: int, pattern: str = "") -> Stance:
    """The stance of the claim ``text[start:end]`` (a match of ``pattern``).

    Negation counts in the claim's clause up to the claim's end (a clause ends at ; : — or
    "but"), so "The card hasn't expired, but it was refunded" asserts the refund. A negation
    word inside the match counts too ("so that address won't reach her"), unless the pattern
    itself asks for it (a pattern for "no clash" matches a claim made with "no").
    """
    text = plain(text)
    left, right = _sentence_bounds(text, start, end)
    clause_start = left
    for m in _CLAUSE_BREAK.finditer(text, left, start):
        clause_start = m.end()
    sentence = text[left:right].strip()
    negated = False
    for m in _NEGATION.finditer(text, clause_start, end):
        inside = start <= m.start() < end
        if inside and pattern and re.search(rf"\b{re.escape(m.group().lower())}\b", pattern, re.I):
            continue  # the claim is made with this word
        negated = True
        break
    conditional = _CONDITIONAL.search(text, clause_start, start) is not None
    question = sentence.rstrip("*_ )\"'").endswith("?")
    return Stance(sentence=sentence, negated=negated, question=question, conditional=conditional)


# ---------------------------------------------------------------------------
# "The data does not answer" and "the run failed"
# ---------------------------------------------------------------------------

_NOT = r"(?:does\s+not|doesn't|do\s+not|don't|did\s+not|didn't|cannot|can't|could\s+not|couldn't|will\s+not|won't|never)"
_BE_NOT = r"(?:is\s+not|isn't|are\s+not|aren't|was\s+not|wasn't|were\s+not|weren't|has\s+not\s+been|hasn't\s+been|have\s+not\s+been|haven't\s+been|'s\s+not|'re\s+not|not)"
_SOURCE = (r"(?:data|records?|listings?|services?|tools?|calendar|events?|messages?|e-?mails?|inbox|charges?|logs?|runs?|files?|"
           r"statements?|cards?|contacts?|bookings?|results?|details|description|system|information|entry|entries|"
           r"account|history|database|it|they|this|that|there|nothing|none\s+of\s+them)")
_SHOW = (r"(?:show|say|state|mention|include|contain|list|give|specify|record|answer|provide|indicate|have|hold|"
         r"tell|reveal|note|cover|return|report|reference|disclose|carry|store|expose)s?")
_PAST = (r"(?:stated|mentioned|listed|recorded|specified|given|shown|included|provided|documented|noted|stored|"
         r"indicated|disclosed|captured|logged|reported|tracked|available\s+in|found|known|there|present)")
_NOUN = (r"(?:record|records|data|information|info|entry|entries|mention|details?|trace|sign|indication|evidence|"
         r"figure|value|number|bill|invoice|speed|such\s+\w+)")
_PLACE = (r"(?:data|records?|services?|listings?|calendar|messages?|inbox|e-?mails?|charges?|tools?|system|"
          r"results?|account|files?|history|transactions?|statements?|database)")
_NO_DATA_PATTERNS = (
    # "the data doesn't show it", "the listing doesn't mention a speed", "the tools don't return it"
    rf"\b{_SOURCE}\s+{_NOT}\s+(?:\w+ly\s+)?(?:actually\s+)?{_SHOW}\b",
    # with the reader's own clause between (issue 30): "the records I can reach do not show it"
    rf"\b{_SOURCE}\s+(?:that\s+|which\s+)?(?:I|we)\s+(?:(?:can|could|have|had)\s+)?(?:\w+\s+)?"
    rf"(?:reach|see|access|search|check|read|looked\s+at|searched|checked)\s+{_NOT}\s+(?:\w+ly\s+)?{_SHOW}\b",
    # "it isn't stated in the listing", "isn't recorded anywhere", "is not specified"
    rf"\b{_BE_NOT}\s+(?:\w+ly\s+)?(?:stated|mentioned|listed|recorded|specified|given|shown|included|provided|"
    rf"documented|noted|stored|indicated|disclosed|captured|logged|reported|tracked)\b",
    # "I can't find it in your records", "I couldn't determine", "I was unable to find", "I don't see"
    r"\b(?:I|we)\s+(?:\w+ly\s+)?(?:can't|cannot|can\s+not|couldn't|could\s+not|am\s+unable\s+to|was\s+unable\s+to|"
    r"wasn't\s+able\s+to|was\s+not\s+able\s+to|am\s+not\s+able\s+to|'m\s+not\s+able\s+to|'m\s+unable\s+to|"
    r"did\s+not|didn't|do\s+not|don't|have\s+not|haven't)\s+(?:\w+ly\s+)?"
    r"(?:find|found|locate|located|see|determine|tell|confirm|answer|identify|work\s+out|establish|know|spot)\b",
    # "I don't have that information", "I have no information", "I found no record"
    rf"\b(?:I|we)\s+(?:don't|do\s+not)\s+have\s+(?:that|this|any|the|such|enough)\s+(?:\w+\s+)?{_NOUN}\b",
    rf"\b(?:I|we)\s+(?:have|found|see|could\s+find|can\s+find)\s+no\b",
    # "there's no record of", "no information about", "no electricity bill"
    rf"\bno\s+(?:\w+\s+){{0,2}}?{_NOUN}\b",
    # "the listing gives no speed", "the search returned no results"
    r"\b(?:gives?|gave|lists?|listed|shows?|showed|states?|mentions?|has|have|had|includes?|contains?|returns?|"
    r"returned|provides?|specif(?:y|ies|ied)|records?)\s+no\b",
    # "none of the tools return it", "nothing in your records"
    rf"\bnone\s+of\s+(?:the|your|my|these|those)\s+(?:\w+\s+){{0,2}}?{_PLACE}\b",
    rf"\b(?:not|nothing|isn't\s+anything|is\s+nothing|there's\s+nothing)\s+(?:\w+\s+)?(?:in|on|from|among)\s+"
    rf"(?:the|your|any|my|these|those)\s+(?:\w+\s+)?{_PLACE}\b",
    # "there is no way to tell", "impossible to say", "unable to determine", "unknown"
    r"\b(?:no\s+way|impossible|not\s+possible|unable)\s+to\s+(?:tell|say|know|determine|find|confirm|answer|establish|see)\b",
    r"\b(?:unspecified|unstated|unrecorded|unknown|not\s+known)\b",
    # "it says nothing about whether", "isn't something the address book can tell me"
    r"\b(?:says?|shows?|tells?|gives?)\s+nothing\s+(?:about|on|of|as\s+to)\b",
    r"\b(?:isn't|is\s+not)\s+something\s+(?:\w+\s+){0,4}?(?:can|could)\s+(?:tell|say|show|confirm)\b",
    # the key's own words
    r"\bdata\s+does\s+not\s+answer\b",
)
_NO_DATA = re.compile("|".join(f"(?:{p})" for p in _NO_DATA_PATTERNS), re.I)
_DOUBLE_NEGATION = re.compile(r"\b(?:not\s+true|untrue|wrong|incorrect|false)\s+(?:to\s+say\s+)?that\b", re.I)


def says_no_data(text: str) -> str | None:
    """The phrase by which ``text`` says the data does not answer, or None.

    Every phrase is a negative one ("doesn't show", "no record", "can't find", "isn't
    stated"), so "the data does show it" says nothing of the kind; a phrase in a question,
    under "if", or after "it is not true that" does not count. Kept for the last texts read: an
    answer is read by its turn's check and again by its claims item (issue 32).
    """
    return _says_no_data(text)


@lru_cache(maxsize=256)
def _says_no_data(text: str) -> str | None:
    text = plain(text)
    for m in _NO_DATA.finditer(text):
        left, right = _sentence_bounds(text, m.start(), m.end())
        sentence = text[left:right].rstrip(" *_)\"'\n")
        if sentence.endswith("?"):
            continue
        before = text[left:m.start()]
        if _CONDITIONAL.search(before) or _DOUBLE_NEGATION.search(before):
            continue
        return m.group()
    return None


_FAILED = re.compile(
    r"\b(?:did\s+not|didn't|has\s+not|hasn't|was\s+not|wasn't|never)\s+(?:\w+\s+)?"
    r"(?:succeed(?:ed)?|complete(?:d)?|run|finish(?:ed)?|go\s+through|went\s+through|get\s+applied|apply|applied|process(?:ed)?)\b"
    r"|\b(?:fail(?:ed|s|ure|ing)?|unsuccessful|error(?:ed|s)?|abort(?:ed)?|crash(?:ed)?|rejected|broke\s+off|halted)\b",
    re.I,
)
_BEFORE_NEGATED = re.compile(r"\b(?:not|never|no|without|nor|n't)\s+(?:\w+\s+)?$|n't\s+(?:\w+\s+)?$", re.I)


def negated_just_before(text: str, start: int) -> bool:
    """Whether a negation stands right before ``text[start:]`` (at most one word between):
    "did not fail", "the card is not blocked". Read next to the words, not in the whole clause."""
    return bool(_BEFORE_NEGATED.search(text[max(0, start - 24): start]))


def says_failed(text: str) -> str | None:
    """The words by which ``text`` says a run failed ("failed", "did not complete",
    "didn't go through", "errored"), or None; "did not fail" and "without errors" do not count."""
    text = plain(text)
    for m in _FAILED.finditer(text):
        word = m.group().lower()
        if word.split()[0] in ("did", "didn't", "has", "hasn't", "was", "wasn't", "never"):
            return m.group()  # a negated success is itself a failure
        if negated_just_before(text, m.start()):
            continue
        return m.group()
    return None


def states_value(text: str, value: Any) -> bool:
    """Whether a text states a fact's value: a number by value in any format ("150", "150.00 EUR"),
    text as text with case and accents ignored; a yes/no cannot be read from a value alone.
    The user's check (a fact said but not recorded) and asks for info (a value written before
    the user gave it) read it the same way."""
    from pytest_assistant_eval.suites.calibration.readers.numbers import find_quantities
    from pytest_assistant_eval.suites.calibration.world.names import fold

    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, (int, float)):
        return any(abs(q.value - float(value)) < 1e-9 for q in find_quantities(text))
    return fold(str(value)) in fold(text)


# ---------------------------------------------------------------------------
# Precision: the subject of a statement, and a value denied in its own clause (issue 21)
# ---------------------------------------------------------------------------

_STOP = frozenset("""
about above after again against also although among another because been before being below between both
cannot could does doing down during each either else every from further have having here into itself just
less made make many more most much must only other ought over same shall should since some such than that
their them then there these they this those though through under until upon very want well were what when
where which while whom whose will with within without would your yours costs cost left away stored least
""".split())
_WORD = re.compile(r"[^\W\d_][^\W_]*(?:['’][^\W\d_]+)?")


def _stem(word: str) -> str:
    from pytest_assistant_eval.suites.calibration.world.names import fold

    return fold(word)[:5]


# Words for the same relation, so a sentence about it is found in either ("conflicts with" for
# "clashes with"; "attending" for "invited"): stems, each mapped to its group's first stem.
_SAME = [("clash", "confl", "overl", "colli", "doubl"), ("invit", "atten", "guest", "parti"),
         ("insid", "durin", "withi", "overl"), ("cance", "calle", "dropp"), ("block", "froze", "suspe"),
         ("reaso", "becau", "cause", "after", "due")]
_GROUP = {stem: group[0] for group in _SAME for stem in group}


def subject_anchors(statement: str, value: Any = None) -> frozenset[str]:
    """The words a sentence about this statement's subject is likely to hold: its lower-case
    content words (names are left out: a name is the value of one fact and the subject of
    another), as five-letter stems ("invited" -> "invit", "clashes" -> "clash")."""
    from pytest_assistant_eval.suites.calibration.readers.units import canonical_unit

    own = {_stem(w) for w in _WORD.findall(str(value))} if isinstance(value, str) else set()
    out = set()
    for w in _WORD.findall(statement):
        if len(w) < 4 or not w.islower() or w in _STOP or canonical_unit(w) is not None:
            continue  # unit words ("minutes") go with every quantity, not with one subject
        stem = _stem(w)
        if stem not in own:
            out.add(_GROUP.get(stem, stem))
    return frozenset(out)


def mentions_subject(sentence: str, anchors: frozenset[str]) -> bool:
    """Whether a sentence holds one of a statement's anchors (see ``subject_anchors``); a
    statement without any (a bare label) cannot be checked this way and passes."""
    if not anchors:
        return True
    return any(_GROUP.get(_stem(w), _stem(w)) in anchors for w in _WORD.findall(sentence) if len(w) >= 4)


_COMMA_CLAUSE = re.compile(_CLAUSE_BREAK.pattern + r"|,\s", re.I)


def clause_around(text: str, start: int, end: int) -> tuple[int, int]:
    """The bounds of the clause that holds ``text[start:end]``: its sentence cut at ; : — ,
    and "but"."""
    left, right = _sentence_bounds(text, start, end)
    clause_start, clause_end = left, right
    for m in _COMMA_CLAUSE.finditer(text, left, start):
        clause_start = m.end()
    m = _COMMA_CLAUSE.search(text, end, right)
    if m is not None:
        clause_end = m.start()
    return clause_start, clause_end


def denial_in_clause(text: str, start: int, end: int, *, after_too: bool = False) -> str | None:
    """A negation in the value's own clause, or None. Before the value it denies a number or a
    date ("not 72 EUR", "isn't at 14:30"); with ``after_too`` (names and words, which a clause
    can say are *not* so: "the 10:00 slot has nothing booked against it") after it as well.
    A negation of the pattern's own words inside the value does not count."""
    lo, hi = clause_around(text, start, end)
    for m in _NEGATION.finditer(text, lo, hi if after_too else start):
        if start <= m.start() < end:
            continue
        return text[lo:hi].strip()
    return None


def split_sentences(text: str) -> list[str]:
    """The sentences (and list lines) of a text, trimmed, empty ones left out."""
    out, left = [], 0
    for m in _SENTENCE_END.finditer(text):
        piece = text[left:m.end()].strip()
        if piece:
            out.append(piece)
        left = m.end()
    if text[left:].strip():
        out.append(text[left:].strip())
    return out
