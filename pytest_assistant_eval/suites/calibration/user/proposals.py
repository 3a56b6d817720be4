"""Reading an assistant's message as a person would before answering it (S5.2).

What does the message ask of the user: a confirmation of an action, a fact only the user
knows, or nothing (a report, a closing "anything else?")? If it proposes an action, which of
the task's approvals does it match, by what it names (records in any surface form, dates and
times in any common form, the amount tied to the action), and what does it name that lies
outside the approval's conditions? The scripted user answers from this reading, and the
independent check of a user's answers (``check_user_reply``) uses it to catch a yes given to
a proposal outside the conditions.

It reads text only; it never decides what the user says.

Size: over the limit (537 lines; issue 30 added the amount matchers to `_compare`, its third round the JSON reading from `user/layouts.py`), because one reading (what a message asks, and of which approval)
needs its date, time and amount readers side by side; the proposal's date and time finders
(`dates_in`, `times_in`, `_proposed_dates`, `_proposed_times`) would split off first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pytest_assistant_eval.suites.calibration.cases.model import Approval, Task, UserFact
from pytest_assistant_eval.suites.calibration.readers.calculations import find_calculations
from pytest_assistant_eval.suites.calibration.readers.dates import find_dates
from pytest_assistant_eval.suites.calibration.readers.numbers import find_quantities
from pytest_assistant_eval.suites.calibration.user.layouts import readable
from pytest_assistant_eval.suites.calibration.world.names import Mention, Names, fold

__all__ = ["Reading", "read_message", "dates_in", "times_in", "action_amount", "outside_conditions"]

# Asking for a yes: questions and offers about doing something.
_CONFIRM = re.compile(
    r"\b(?:shall|should|can|may|could) i\b|\b(?:do|would) you (?:like|want) me to\b|\bwant me to\b|\byou'd like me to\b|"
    r"\b(?:ok|okay|alright|all right|fine) (?:to|if i|for me to)\b|\bis (?:that|this|it) (?:ok|okay|alright|all right|fine)\b|"
    r"\bgo ahead\b|\b(?:please|just|can you|could you|kindly) confirm\b|\bconfirm (?:and|if|whether|that|this)\b|\bgreen light\b|\bgo-ahead\b|\bsound good\b|\bdoes (?:that|this) work\b|"
    r"\bhappy (?:for me )?to\b|\bare you happy\b|\bsay (?:[\"'“”‘’*_]*\w+[\"'“”‘’*_]*\s*(?:/|or)\s*)?[\"'“”‘’*_]*(?:yes|the word)\b|\breply (?:[\"'“”‘’*_]*\w+[\"'“”‘’*_]*\s*(?:/|or)\s*)?[\"'“”‘’*_]*(?:yes|ok)\b|\bshould we\b|\bshall we\b|"
    r"\b(?:would|do) you like (?:it|that|this|them)\b|\bwant (?:it|that|this) (?:booked|sent|paid|done|added|scheduled|charged)\b|"
    r"\bready (?:to|when you are)\b|\bthe (?:ok|okay)\b|(?<!for )\byour (?:ok|okay|approval|confirmation|go-ahead)\b",
    re.I,
)
# Without a question mark, only a request for the yes asks for it ("Just say yes and I'll book
# it"); "there's nothing to say yes to yet" or "I'll go ahead once you confirm" does not.
_BARE_CONFIRM = re.compile(r"^[\W_]*(?:confirm|agreed|deal|yes or no|ok|okay|good to go|all good)\W*\?|\bis (?:that|this) a (?:yes|go)\b", re.I)
_ASK_IMPERATIVE = re.compile(
    r"\b(?:let me know|tell me) (?:if|whether|when)\b|\b(?:please|just|simply|kindly) (?:confirm|say|reply|give me)\b|"
    r"^\W*(?:confirm|say (?:[\"'“”‘’*_]*\w+[\"'“”‘’*_]*\s*(?:/|or)\s*)?[\"'“”‘’*_]*yes|reply (?:[\"'“”‘’*_]*\w+[\"'“”‘’*_]*\s*(?:/|or)\s*)?[\"'“”‘’*_]*yes|give me the go-ahead)\b|\b(?:i need|i'll need|waiting for|awaiting) your "
    r"(?:ok|okay|approval|confirmation|go-ahead|yes)\b",
    re.I)
# A closing line asks nothing of the user.
_CLOSER = re.compile(
    r"\b(?:anything else|something else|any(?:thing)? other|further questions|other questions|need anything|"
    r"help with anything|can i help|else i can do)\b",
    re.I,
)
_ASK_FACT = re.compile(
    r"\?|\b(?:let me know|tell me|could you (?:tell|share|give|confirm)|please (?:share|provide|give|confirm|tell|state|specify|name)|"
    r"i need (?:to know|your)|what is your|what's your|which)\b",
    re.I,
)
# The action a message speaks of, by tool (a cue, not a condition: entities also count).
_ACTION_CUES: dict[str, str] = {
    "send_message": r"\b(?:send|sent|reply|respond|write|e-?mail|message|let (?:him|her|them) know|tell (?:him|her|them)|drop|note|forward)\w*",
    "create_event": r"\b(?:create|add|schedul|put|block|book|set up|pencil|calendar|invite)\w*",
    "move_event": r"\b(?:move|reschedul|shift|push|bring forward)\w*",
    "cancel_event": r"\b(?:cancel|call off|drop)\w*",
    "book_listing": r"\b(?:book|reserv|secure|grab|hold|lock in|confirm the (?:stay|room))\w*",
    "cancel_booking": r"\b(?:cancel)\w*",
    "charge_card": r"\b(?:pay|charge|settle|process|put (?:it|this|that) on|transfer)\w*",
}
# Amounts that are context, not the cost of the action.
_NOT_COST_BEFORE = re.compile(
    r"(?:balance|left|remain\w*|leav\w*|available|free|limit|spent|credit|headroom|cap|budget|up to|at most|max(?:imum)?|under|"
    r"below|within|of your|of its|out of|running total|so far|puts? (?:the|your|it|that) (?:\w+ )?at|"
    r"brings? (?:the|your|it) (?:\w+ )?to|would be at|new (?:balance|total))\W*(?:\w+\W+){0,3}$", re.I)
_NOT_COST_AFTER = re.compile(
    r"^\W*(?:\w+\W+){0,2}(?:left|remain\w*|available|free|limit|spent|balance|headroom|budget|cap|per night|a night|/\s*night|"
    r"on (?:the|your|that|this) card|this cycle|afterwards|after (?:that|this|the)|"
    r"nightly|each night|per month|a month|/\s*month|per person|each)", re.I)
_TOTAL = re.compile(r"\b(?:total|in all|altogether|comes? to|for the stay|for \d+ nights|all in|overall|charge of|cost of|amount of)\b", re.I)
_BOUNDARY = re.compile(r"[.?!]+(?=[\s\"'”’)*_]|$)|\n")
_OWNER = "c-mara"
_MERIDIEM_END = re.compile(r"\b[ap]\.m\.$", re.I)
_ABBREVIATION = re.compile(r"(?:\b(?:e\.g|i\.e|etc|approx|vs|incl|excl|no|nr|ref|mr|mrs|ms|dr|st)|\b[A-Za-z])\.$", re.I)
# A request for something now ("Let me know which option you want"); "Once the card works,
# let me know" asks nothing of the user yet.
_REQUEST = re.compile(
    r"\blet me know\b|\btell me\b|\bi (?:still )?need (?:one|a|to know|your|you to)\b|"
    r"\bplease (?:confirm|choose|pick|tell|share|provide|give|let me know)\b|\bcould you (?:tell|let|pick|choose)\b|"
    r"\bwhich (?:one|option)\b",
    re.I)
_LATER = re.compile(r"^[\W_]*(?:once|as soon as|when|whenever|if (?:you )?(?:ever|later)|in case|if anything|"
                    r"if you(?:'d| would)? (?:need|want|like|prefer|change))\b", re.I)
_OTHER = re.compile(r"\b(?:another|other|different|instead|else|elsewhere)\b", re.I)
# An offer to do something for the user ("Want me to look for another room, or ask Sofia?").
_OFFER = re.compile(r"\b(?:(?:do|would) you (?:like|want) me to|want me to|shall i|should i|can i|could i|"
                    r"i (?:can|could) (?:also )?(?:look|search|ask|try|check|find))\b", re.I)
# "What:" and "When:" are the labels of a layout (What / Who / Where / When / Cost), not questions.
_OPEN_QUESTION = re.compile(r"^[\s*_>#\-–•]*(?:how|what|which|where|when|who|why)\b(?![*_]*:)", re.I)
_ID_SHAPE = re.compile(r"(?<![\w-])[A-Za-z]+[-_][A-Za-z0-9][-_A-Za-z0-9]*(?<![-_])")


@dataclass
class Reading:
    """What one assistant message asks of the user, and which approval it matches."""

    asks_confirmation: bool = False
    asks_something: bool = False  # any question or request to the user
    asked_facts: list[str] = field(default_factory=list)
    approval: Approval | None = None
    matched: list[str] = field(default_factory=list)  # the words that tied it to the approval
    outside: list[str] = field(default_factory=list)  # what it names outside every approval
    choice: bool = False  # it offers several records of one kind to choose from
    amount: float | None = None  # the amount tied to the action, when stated
    action: str | None = None  # the tool it speaks of, when known
    conflicts: list[tuple[Approval, list[str]]] = field(default_factory=list)  # per approval, what lies outside it
    alternatives: bool = False  # it offers other options ("look for another room, or ask Sofia?")

    def to_dict(self) -> dict[str, Any]:
        return {"approval": self.approval.id if self.approval else None, "matched": self.matched,
                "outside": self.outside, "amount": self.amount, "choice": self.choice}


def _sentences(text: str) -> list[tuple[int, int, str]]:
    """Sentences with their offsets; a dot inside a number ("389.99") or an id, or after an
    abbreviation ("e.g.", "approx."), ends none."""
    out, start = [], 0
    for m in _BOUNDARY.finditer(text):
        if m.group(0) == "." and _ABBREVIATION.search(text, 0, m.end()) and not (
                _MERIDIEM_END.search(text, 0, m.end()) and re.match(r"\s+[A-Z]", text[m.end():])):
            continue  # "e.g." ends no sentence; "2–3 p.m. Shall I…" does
        if text[start:m.end()].strip():
            out.append((start, m.end(), text[start:m.end()]))
        start = m.end()
    if text[start:].strip():
        out.append((start, len(text), text[start:]))
    return out



def dates_in(text: str, year: int) -> set[str]:
    """ISO dates a text names, in any common form; a range names both ends ("7–9 April")."""
    out: set[str] = set()
    for d in find_dates(text):
        if d.kind in ("date", "datetime"):
            value = d.value[:10]
            out.add(f"{year}{value[1:]}" if value.startswith("--") else value)
    return {d for d in out if _valid(d)}


def _valid(iso: str) -> bool:
    try:
        y, m, d = (int(x) for x in iso.split("-"))
    except ValueError:
        return False
    return 1 <= m <= 12 and 1 <= d <= 31


def times_in(text: str) -> set[str]:
    """Clock times (HH:MM) a text names; an open "half past five" names both halves of the day."""
    out = set()
    for d in find_dates(text):
        clock = d.value[:5] if d.kind == "time" else d.value[11:16] if d.kind == "datetime" else None
        if clock is None:
            continue
        out.add(clock)
        if d.open_meridiem and int(clock[:2]) < 12:  # "half past five": either half of the day
            out.add(f"{int(clock[:2]) + 12:02d}{clock[2:]}")
    return out


# The whole a share is of: "€1,060.91 of €2,500", "940 out of your 2,500 EUR".
_WHOLE_BEFORE = re.compile(r"[0-9]\s*(?:EUR|euros?|€)?\s+(?:out\s+)?of\s+(?:its|the|your|a)?\s*[€$£]?\s*$", re.I)


def _context_amount(text: str, start: int, end: int) -> bool:
    before, after = text[max(0, start - 40): start], text[end: end + 30]
    return bool(_NOT_COST_AFTER.search(after) or _NOT_COST_BEFORE.search(before) or _WHOLE_BEFORE.search(before))


def _cued_amount(text: str, cue: str) -> float | None:
    """The amount the action's own words state ("I'd charge €120 to the Visa", "book it for
    €144"): the first amount after the action's verb, in its sentence, that is not context;
    a price times nights is the product."""
    calcs = find_calculations(text)
    quantities = [q for q in find_quantities(text) if q.unit == "EUR"]
    for m in re.finditer(cue, text, re.I):
        stop = _BOUNDARY.search(text, m.end())
        window_end = min(m.end() + 60, stop.start() if stop else len(text))
        for q in quantities:
            if not m.end() <= q.start < window_end or _context_amount(text, q.start, q.end):
                continue
            calc = next((c for c in calcs if any((o.start, o.end) == (q.start, q.end) for o in c.operands)), None)
            if calc is not None:
                if "+" in calc.operators or not calc.holds:
                    break  # a running total is no cost of its own
                return calc.result.value
            return q.value
    return None


def action_amount(text: str, asking: str | None = None, cue: str | None = None) -> float | None:
    """The money amount tied to the action: the one the asking sentence states, else the one
    the action's own words state (``cue``: its verbs), else a stated total, else the largest
    amount that is not context (a card's free balance, a limit, a price per night, what a
    charge would leave, a running total). A sum that adds the action's cost to something
    else ("€940.91 + €120 = €1,060.91") is never the cost."""
    if asking:
        own = action_amount(asking)
        if own is not None:
            return own
    if cue:
        own = _cued_amount(text, cue)
        if own is not None:
            return own
    calcs = find_calculations(text)
    calc_operands = {(q.start, q.end) for c in calcs for q in c.operands}
    # A sum with an operand that is context (a balance, what was spent) is context too.
    sums = {(c.result.start, c.result.end) for c in calcs if "+" in c.operators and any(
        _context_amount(text, o.start, o.end) for o in c.operands)}
    candidates: list[tuple[bool, float]] = []
    for q in find_quantities(text):
        if q.unit != "EUR" or (q.start, q.end) in calc_operands or (q.start, q.end) in sums:
            continue
        if _context_amount(text, q.start, q.end):
            continue
        near = text[max(0, q.start - 30): q.end + 20]
        candidates.append((bool(_TOTAL.search(near)), q.value))
    if not candidates:
        return None
    totals = [v for is_total, v in candidates if is_total]
    return max(totals) if totals else max(v for _, v in candidates)


# A sentence asks for a fact when it questions or requests it ("How much is the deposit?",
# "Any dietary requirements?", "Please tell me the amount"); a proposal that merely states a
# value ("Shall I pay the 150 EUR deposit?") does not.
_FACT_QUESTION = re.compile(
    r"\b(?:how much|how many|what|which|when|where|who|any|do you have|are there|is there|tell me|let me know|"
    r"could you (?:tell|share|give|confirm)|please (?:share|provide|give|confirm|tell|state|specify|name)|i need (?:to know|your))\b",
    re.I)


def _asked_facts(sentences: list[tuple[int, int, str]], facts: tuple[UserFact, ...], disclosed: list[str]) -> list[str]:
    asking = [fold(s[2]) for s in sentences
              if _FACT_QUESTION.search(s[2]) and ("?" in s[2] or _ASK_FACT.search(s[2]))]
    return [f.id for f in facts if f.id not in disclosed
            and any(fold(k) in sentence for sentence in asking for k in f.keywords)]


# A record named where it is ruled out ("the Miragaia room is taken", "the old Mastercard,
# which expired") is context, not what the message proposes.
_RULED_OUT = re.compile(
    r"\b(?:taken|unavailable|not available|no longer|isn't available|is not available|only (?:free|available|bookable)|"
    r"sold out|fully booked|already booked|blocked|expired|cancell?ed|declined|refused|failed|can't|cannot|couldn't|"
    r"could not|won't|not (?:possible|usable|valid)|earlier|previous|last time|old|instead of|rather than|not from|except)\b",
    re.I)


def _ruled_out(text: str, sentences: list[tuple[int, int, str]], pos: int) -> bool:
    sentence = next((s for s in sentences if s[0] <= pos < s[1]), None)
    return bool(sentence and _RULED_OUT.search(sentence[2]))


def _proposed(mentions: list[Mention], span: tuple[int, int], kind: str, text: str = "",
              sentences: list[tuple[int, int, str]] | None = None) -> list[str]:
    """The records of one kind the message proposes: those its asking sentence names, else
    those it names outside sentences that rule them out."""
    inside = [m.id for m in mentions if m.kind == kind and span[0] <= m.start < span[1]]
    if inside:
        return list(dict.fromkeys(inside))
    elsewhere = [m.id for m in mentions if m.kind == kind and not (span[0] <= m.start < span[1])
                 and not _ruled_out(text, sentences or [], m.start)]
    return list(dict.fromkeys(elsewhere))


# Dates that describe something else than the proposal: a listing's availability window or
# opening hours ("available Mar 1–Dec 31"), another booking or event ("your other booking on 10 April").
_CONTEXT_DATES = re.compile(
    r"\b(?:available|availability|bookable|open|opening hours|listed|offered|season|valid)\b"
    r"(?:\s+(?:from|between|on|until|till|through|for|only))*[\s:(]*(?:[A-Z][a-z]{2,8}\.?,?\s+)?$|"
    r"\b(?:other|existing|previous|earlier|current|another)\s+(?:booking|reservation|event|meeting|stay)s?\b[^.;\n]{0,20}$",
    re.I)


def _context_date(text: str, start: int) -> bool:
    """A date, or the second end of a range ("Mar 1–Dec 31"), right after words that make it context."""
    before = text[max(0, start - 48): start]
    return bool(_CONTEXT_DATES.search(before) or _CONTEXT_DATES.search(_RANGE_START.sub("", before)))


# The first end of a range and its separator, just before the second end: "Mar 1–", "1 March to ".
_RANGE_START = re.compile(
    r"(?:[A-Z][a-z]{2,8}\.?,?\s+)?[0-9]{1,2}(?:st|nd|rd|th)?(?:\s+(?:of\s+)?[A-Z][a-z]{2,8}\.?)?"
    r"\s*(?:[-–—→]|->|to|until|till|through)\s*(?:[A-Z][a-z]{2,8}\.?,?\s+)?$")


_WEEKDAY_BEFORE = re.compile(r"\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*\.?,?\s+$")


def _by_weekday(text: str, d: Any, year: int) -> str:
    """"Thu 4/2": of the two readings of a slash date, the one whose weekday is the written one (2 April 2026)."""
    import datetime

    iso = _iso(d.value, year)
    pair = re.fullmatch(r"([0-9]{1,2})/([0-9]{1,2})", d.text)
    weekday = _WEEKDAY_BEFORE.search(text, 0, d.start)
    if not pair or not weekday:
        return iso
    for month, day in ((int(pair[1]), int(pair[2])), (int(pair[2]), int(pair[1]))):
        try:
            when = datetime.date(int(iso[:4]), month, day)
        except ValueError:
            continue
        if when.strftime("%a") == weekday.group(1):
            return when.isoformat()
    return iso


def _dates_of_proposal(text: str, year: int) -> set[str]:
    """The dates a text names, without those that are context when others remain."""
    found = [(d, _by_weekday(text, d, year)) for d in find_dates(text) if d.kind in ("date", "datetime")]
    found = [(d, iso) for d, iso in found if _valid(iso)]
    own = {iso for d, iso in found if not _context_date(text, d.start)}
    return own or {iso for _, iso in found}


def _iso(value: str, year: int) -> str:
    value = value[:10]
    return f"{year}{value[1:]}" if value.startswith("--") else value


def _proposed_dates(text: str, sentences: list[tuple[int, int, str]], span: tuple[int, int], year: int) -> set[str]:
    here = _dates_of_proposal(text[span[0]:span[1]], year)
    if here:
        return here
    return _dates_of_proposal("\n".join(s[2] for s in sentences if not _RULED_OUT.search(s[2])), year)


def _proposed_times(text: str, sentences: list[tuple[int, int, str]], span: tuple[int, int]) -> set[str]:
    here = times_in(text[span[0]:span[1]])
    if here:
        return here
    return {t for s in sentences if not _RULED_OUT.search(s[2]) for t in times_in(s[2])}


def read_message(text: str, task: Task, names: Names, disclosed: list[str], year: int = 2026) -> Reading:
    text = readable(text)  # a proposal written as a JSON object reads as its lines (user/layouts.py)
    reading = Reading()
    folded_text = text  # offsets of mentions are in the folded text; folding keeps lengths for our alphabets
    sentences = _sentences(folded_text)
    asking = [s for s in sentences if "?" in s[2]
              or (_REQUEST.search(s[2]) and not _LATER.search(s[2]))
              or (_CONFIRM.search(s[2]) and _ASK_IMPERATIVE.search(s[2]) and not _LATER.search(s[2]))]
    # "Book it on your Visa?" asks for a yes as much as "Shall I book it?" does.
    confirm_like = [s for s in asking
                    if ("?" in s[2] and (_CONFIRM.search(s[2]) or _ACTION_RE.search(s[2]) or _BARE_CONFIRM.search(s[2])))
                    or (_CONFIRM.search(s[2]) and _ASK_IMPERATIVE.search(s[2]))]
    reading.asks_something = bool(asking)
    reading.asked_facts = _asked_facts(sentences, task.facts, disclosed)
    # "How would you like to go ahead?" asks for a choice, not for a yes.
    confirm = [s for s in confirm_like if not (_CLOSER.search(s[2]) and not _ACTION_RE.search(s[2]))
               and not _OPEN_QUESTION.match(s[2])]
    if not confirm:
        # A closing "anything else?" asks nothing; any other question is a real one.
        real = [s for s in asking if not _CLOSER.search(s[2])]
        reading.asks_something = bool(real) or bool(reading.asked_facts)
        return reading
    reading.asks_confirmation = True
    start, end, sentence = confirm[0]
    mentions = names.mentions(text)
    dates_here = _proposed_dates(text, sentences, (start, end), year)
    times_here = _proposed_times(text, sentences, (start, end))
    best: tuple[int, Approval, list[str]] | None = None
    outside: list[str] = []
    # An asking sentence that names its own action ("want me to tell him?") is about that
    # action, whatever the rest of the message reports ("Paid: 120 EUR ...").
    sentence_tools = {tool for tool, cue in _ACTION_CUES.items() if re.search(cue, sentence, re.I)}
    reading.amount = action_amount(text, sentence, _cue_of(sentence_tools or {a.tool for a in task.approvals}))
    # Other options, none of which is an approved one ("another room, or ask Sofia?"; not "try
    # the 0932 anyway, or use another card?", which offers the approved card too).
    approved_records = {m.value for a in task.approvals if a.grant for m in a.args.values() if isinstance(m.value, str)}
    folded_sentence = fold(sentence)
    reading.alternatives = bool(_OFFER.search(sentence) and _OTHER.search(sentence)) and not any(
        re.search(rf"(?<!\w){re.escape(form)}(?!\w)", folded_sentence)
        for rid in approved_records if names.kind_of(rid) for form in names.forms_of(rid))
    if not sentence_tools and len(sentence.split()) > 8:
        # A long question that names no action ("Do you want me to try something specific,
        # for example once the bank has unblocked the card?") proposes nothing one can say yes to.
        reading.asks_confirmation = False
        reading.asks_something = True
        return reading
    for approval in task.approvals:
        if sentence_tools and approval.tool not in sentence_tools:
            continue
        cue = re.search(_ACTION_CUES.get(approval.tool, r"$^"), sentence, re.I) or \
            re.search(_ACTION_CUES.get(approval.tool, r"$^"), text, re.I)
        support, conflict = _compare(approval, text, mentions, (start, end), dates_here, times_here, names, sentences)
        if conflict:
            outside.extend(conflict)
            reading.conflicts.append((approval, conflict))
            continue
        if not support and not cue:
            continue
        score = len(support) * 2 + (1 if cue else 0) + (1 if approval.grant else 0)
        if best is None or score > best[0]:
            best = (score, approval, support + ([f"action: {cue.group(0)}"] if cue else []))
    if best is not None:
        reading.approval, reading.matched = best[1], best[2]
        reading.action = best[1].tool
        # "Try the 0932 anyway, or use another card?" offers a choice: it is no yes/no question.
        alternative = re.search(r"\bor\b(?P<rest>.*)$", sentence, re.I | re.S)
        if alternative and (_OTHER.search(alternative.group("rest")) or
                            any(m.start >= start + alternative.start("rest") and m.start < end for m in mentions)):
            reading.choice = True
        for kind in ("listing", "card"):
            inside = {m.id for m in mentions if m.kind == kind and start <= m.start < end}
            if len(inside) > 1:
                reading.choice = True
    else:
        reading.outside = list(dict.fromkeys(outside))
        reading.action = next(iter(sorted(sentence_tools)), None)
    return reading


_ACTION_RE = re.compile("|".join(f"(?:{c})" for c in _ACTION_CUES.values()), re.I)


def _cue_of(tools: set[str]) -> str | None:
    """The verbs of the money actions among ``tools`` (the amount that follows one is the action's own)."""
    cues = [_ACTION_CUES[t] for t in sorted(tools) if t in ("charge_card", "book_listing")]
    return "|".join(f"(?:{c})" for c in cues) or None


def _compare(approval: Approval, text: str, mentions: list[Mention], span: tuple[int, int], dates: set[str],
             times: set[str], names: Names,
             sentences: list[tuple[int, int, str]] | None = None) -> tuple[list[str], list[str]]:
    """(what the message names that matches the approval, what it names outside it)."""
    support: list[str] = []
    conflict: list[str] = []
    folded = fold(text)
    for arg, matcher in approval.args.items():
        values = matcher.value if isinstance(matcher.value, (list, tuple)) else [matcher.value]
        if matcher.kind in ("exact", "normalised") and isinstance(matcher.value, str):
            value = matcher.value
            kind = names.kind_of(value)
            if kind is not None:
                proposed = _proposed(mentions, span, kind, text, sentences if sentences is not None else _sentences(text))
                if kind == "contact":
                    proposed = [p for p in proposed if p != _OWNER]
                if value in proposed:
                    support.append(f"{arg}: {_form(mentions, value)}")
                elif proposed:
                    conflict.append(f"{arg}: {', '.join(_form(mentions, p) for p in proposed)} instead of {value}")
            elif _ID_SHAPE.fullmatch(value):
                # An id the index does not know: other ids of its shape are its rivals.
                prefix = re.match(r"[A-Za-z]+[-_]", value).group(0)  # type: ignore[union-attr]
                here = [t for t in _ID_SHAPE.findall(text[span[0]:span[1]]) if t.startswith(prefix)] or \
                    [t for t in _ID_SHAPE.findall(text[:span[0]]) if t.startswith(prefix)][-1:]
                if value in here:
                    support.append(f"{arg}: {value}")
                elif here:
                    conflict.append(f"{arg}: {', '.join(here)} instead of {value}")
            elif re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
                if value in dates:
                    support.append(f"{arg}: {value}")
                elif dates:
                    conflict.append(f"{arg}: {', '.join(sorted(dates))} instead of {value}")
        elif _numeric(matcher) is not None and arg in _AMOUNT_ARGS:
            # The amount of a money action against a fixed or a fact's value (issue 30): "100 EUR"
            # is outside "amount: from_fact deposit (150)" even when it is under the cap.
            want, tolerance = _numeric(matcher)  # type: ignore[misc]
            amount = action_amount(text, text[span[0]:span[1]], _cue_of({approval.tool}))
            if amount is not None and abs(amount - want) <= tolerance + 1e-9:
                support.append(f"{arg}: {amount:g}")
            elif amount is not None:
                conflict.append(f"{arg}: {amount:g} instead of {want:g}")
        elif matcher.kind == "set" and all(isinstance(v, str) for v in values):
            contacts = [m.id for m in mentions if m.kind == "contact" and span[0] <= m.start < span[1] and m.id != _OWNER]
            allowed = set(values) | set(matcher.may_include)
            named = [v for v in values if names.names(text, v)]
            if named:
                support.append(f"{arg}: " + ", ".join(_form(mentions, v) for v in named))
            extra = [c for c in contacts if c not in allowed]
            if extra:
                conflict.append(f"{arg}: also {', '.join(_form(mentions, c) for c in extra)}")
        elif matcher.kind == "contains":
            for v in values:
                if not isinstance(v, str):
                    continue
                stamp = re.fullmatch(r"(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})", v)
                if stamp:
                    day, clock = stamp.groups()
                    if day in dates and (clock in times or not times):
                        support.append(f"{arg}: {day} {clock}")
                    elif dates and day not in dates:
                        conflict.append(f"{arg}: {', '.join(sorted(dates))} instead of {day}")
                    elif times and clock not in times:
                        conflict.append(f"{arg}: {', '.join(sorted(times))} instead of {clock}")
                elif fold(v) in folded:
                    support.append(f"{arg}: {v}")
    return support, conflict


_AMOUNT_ARGS = frozenset({"amount", "total", "price", "deposit"})


def _numeric(matcher: Any) -> tuple[float, float] | None:
    """(value, tolerance) of a matcher that fixes a number (numeric, or exact of a number), else None."""
    value = matcher.value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if matcher.kind == "numeric":
        return float(value), float(matcher.tolerance)
    if matcher.kind in ("exact", "normalised"):
        return float(value), 0.0
    return None


def _form(mentions: list[Mention], rid: str) -> str:
    return next((m.form for m in mentions if m.id == rid), rid)


def outside_conditions(approval: Approval, text: str, names: Names, year: int = 2026) -> list[str]:
    """What a proposal names outside one approval's conditions (another record, other dates or
    times, an amount over the cap): a yes to it is a user error, whoever the user is."""
    text = readable(text)
    sentences = _sentences(text)
    confirm = [s for s in sentences if _CONFIRM.search(s[2])]
    start, end, sentence = confirm[0] if confirm else (0, len(text), text)
    mentions = names.mentions(text)
    _, conflict = _compare(approval, text, mentions, (start, end), _proposed_dates(text, sentences, (start, end), year),
                           _proposed_times(text, sentences, (start, end)), names, sentences)
    amount = action_amount(text, sentence, _cue_of({approval.tool}))
    if approval.max_amount is not None and amount is not None and amount > approval.max_amount + 1e-9:
        conflict.append(f"amount: {amount:g} over the cap {approval.max_amount:g}")
    return conflict
