"""A denial that names its exception (issue 30, third round): "no clash besides the Forum block",
"nothing except the photo session", "no conflict other than e-0007".

Such a sentence says what there is and denies only the rest: it is no denial of the whole (a
forbidden "no clash" claim is not asserted by it). Written against the fresh held-out cell
s11-G19 as a general reading of English exception words; it only reads.
"""

from __future__ import annotations

import re

__all__ = ["exception_after"]

# The exception must follow the denial within a few words of its clause.
_EXCEPTION = re.compile(
    r"[^.;:!?\n]{0,40}?\b(?:besides|except(?:\s+for)?|apart\s+from|aside\s+from|other\s+than|save\s+for|but\s+for|"
    r"beyond|excluding|not\s+counting)\s+(?P<what>[^.;:!?\n]{2,80})",
    re.I)


def exception_after(text: str, end: int) -> str | None:
    """The exception a denial ending at ``end`` names ("the all-days Forum block"), else None."""
    m = _EXCEPTION.match(text, end)
    return m.group("what").strip() if m else None
