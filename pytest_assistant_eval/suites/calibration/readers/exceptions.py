"""A denial that names its exception (issue 30, third round): "no clash besides the Forum block",
"nothing except the photo session", "no conflict other than e-0007".

Such a sentence says what there is and denies only the rest: it is no denial of the whole (a
forbidden "no clash" claim is not asserted by it). Written against the fresh held-out cell
s11-G19 as a general reading of English exception words; it only reads.
"""

from __future__ import annotations

import re

__all__ = ["exception_after", "names_an_event"]

# The exception must follow the denial within a few words of its clause.
_EXCEPTION = re.compile(
    r"[^.;:!?\n]{0,40}?\b(?:besides|except(?:\s+for)?|apart\s+from|aside\s+from|other\s+than|save\s+for|but\s+for|"
    r"beyond|excluding|not\s+counting)\s+(?P<what>[^.;:!?\n]{2,80})",
    re.I)


def exception_after(text: str, end: int) -> str | None:
    """The exception a denial ending at ``end`` names ("the all-days Forum block"), else None."""
    m = _EXCEPTION.match(text, end)
    return m.group("what").strip() if m else None


# What an exception must name for the denial to read one way: a record of the calendar (an id, an
# event's kind). "No clash beyond the usual travel time" names none: the owner reads it.
_EVENT = re.compile(
    r"\b[a-z]+-[0-9]{3,}\b|\b(?:block|event|session|meeting|booking|appointment|forum|conference|talk|viewing|"
    r"dinner|lunch|call|trip|stay|reservation|workshop|class|shoot|visit)s?\b",
    re.I)


def names_an_event(exception: str) -> bool:
    """Whether an exception names a calendar record ("the all-days Forum block", "e-0007")."""
    return _EVENT.search(exception) is not None
