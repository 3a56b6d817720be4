"""Whether a message reads as English, by a simple and general test (issue 30, fourth round).

The scripted user reads English only. When the assistant writes in another language (a French
proposal, "Dois-je la faire, oui ou non ?"), the user's generic "tell me exactly what ..." is the
simulated user's limitation, not the assistant's fault (checks/user_replies.py makes the run
``user_error``). The test is the share of the message's short lower-case words that are common
English function words (articles, pronouns, prepositions, auxiliaries). Measured on the corpus's
assistant messages: English prose, bullets, logs and JSON answers have 9% or more (most over 25%);
the French ones 0-2%; so below 6% of at least 8 short words a message is not English. Ids,
numbers and markup count for neither side. German ("ist", "das", "in") can pass as English: the
test errs towards the assistant's grade, never towards an excuse. No dictionary of any other language is needed, so the test is
the same for every language the user cannot read.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["ENGLISH_FUNCTION_WORDS", "english_share", "reads_as_english", "MIN_WORDS", "MIN_SHARE", "unread_parts",
           "MIN_PART_WORDS"]

#: Common English function words: present in any English prose, rare outside it. Words that are
#: also common in French, Portuguese or Spanish ("a", "on", "me", "do", "no", "se") are left out.
ENGLISH_FUNCTION_WORDS = frozenset("""the of and to in is it that for was with as be by this are or from at
have has had not but what which you your we our they their them he she his her its will would can could
should shall may might must been being were if then than there here about into over after before when
where who whom how why all any each every some no yes please i my am do does did just only also so
up out off these those such very until while because both either neither nor let us me him""".split()
                                   ) - {"a", "on", "me", "do", "no", "se", "as"}
#: A message with fewer short words than this is not judged (a bare "OK", a table or a list of ids).
MIN_WORDS = 8
#: Below this share of English function words among its short words, a message does not read as English.
MIN_SHARE = 0.06

_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")


def _words(text: str) -> list[str]:
    # Ids and codes ("L-101", "card-visa-4821") and markup are no words of any language.
    text = re.sub(r"\S*\d\S*", " ", text)
    return _WORD.findall(text)


@lru_cache(maxsize=2048)
def english_share(text: str) -> tuple[float, int]:
    """(share of the message's short lower-case words that are common English function words,
    number of such words). Every language's function words are short; a table, a JSON object or
    a bullet list of names has few short words in any language, so it is never judged.

    Kept per text: the checks of one answer ask for it three times and for its paragraphs twice
    (issue 32)."""
    words = [w for w in _words(text) if len(w) <= 4 and w == w.lower()]
    if not words:
        return 0.0, 0
    return sum(w in ENGLISH_FUNCTION_WORDS for w in words) / len(words), len(words)


def reads_as_english(text: str) -> bool:
    """False only for a message long enough to tell that is mostly not English."""
    share, count = english_share(text)
    return count < MIN_WORDS or share >= MIN_SHARE


#: A paragraph with at least this many short words is judged on its own by ``unread_parts``.
MIN_PART_WORDS = 4


def unread_parts(text: str) -> list[str]:
    """The paragraphs (lines) of a message the readers cannot read: at least ``MIN_PART_WORDS`` short
    words, below ``MIN_SHARE`` of them English function words. A fact code did not find in such a
    message may be there in words it cannot read, so "not stated" is no certain verdict (issue 30)."""
    return list(_unread_parts(text))


@lru_cache(maxsize=512)
def _unread_parts(text: str) -> tuple[str, ...]:
    """``unread_parts`` of a text, kept: an answer's are asked for by its check and by its claims item."""
    out = []
    for part in re.split(r"\n+", text):
        share, count = english_share(part)
        if count >= MIN_PART_WORDS and share < MIN_SHARE:
            out.append(part.strip())
    return tuple(out)
