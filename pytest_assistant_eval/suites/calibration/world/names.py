"""The names people use for the world's records (S5.2, S6.1).

A careful assistant rarely writes ``card-visa-4821``; it writes "the Visa ending 4821",
"your main business card", "the Miragaia river room (L-103)" or "João". The simulated user
reads proposals and the checks read reports through this one index, built from a state
of the world (table name -> rows), so both understand the same surface forms.

It only reads a state; it never opens a database and never decides a verdict.
"""

from __future__ import annotations

import contextlib
import functools
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["Mention", "Names", "fold", "fold_keeping_offsets"]

# Words too common to name a record on their own ("the room", "the card").
_COMMON = {
    "the", "a", "an", "and", "of", "with", "in", "at", "on", "to", "for", "from", "room", "studio", "apartment",
    "flat", "loft", "house", "office", "card", "main", "business", "old", "new", "personal", "river", "view",
    "online", "shopping", "expenses", "two", "bedroom", "workspace", "terrace", "beach", "cellar", "shop",
    "workshop", "call", "review", "meeting", "session", "talk", "dinner", "weekly", "porto", "lisbon",
}
# Cities are in titles but name no single record ("the Porto flat").
_CARD_WORDS = r"(?:card|visa|mastercard|master\s*card|mc|amex|american\s+express|ending|ends|last\s+four|\*{2,}|•{2,}|x{2,})"


@functools.lru_cache(maxsize=4096)
def _fold_char(c: str) -> str:
    if c.isspace():
        return " "
    base = unicodedata.normalize("NFKD", c)[:1] or c
    low = base.casefold()
    return low if len(low) == 1 else base.lower()


_ASCII_SPACES = str.maketrans({"\t": " ", "\n": " ", "\r": " ", "\f": " ", "\v": " "})


def fold_keeping_offsets(text: str) -> str:
    """Lower case, accents removed, one character for one: offsets stay those of ``text``."""
    if text.isascii():
        return text.lower().translate(_ASCII_SPACES)
    return "".join(map(_fold_char, text))


def fold(text: str) -> str:
    """Casefolded, accents removed, whitespace collapsed: 'João' and 'joao' are one name."""
    return " ".join(fold_keeping_offsets(text).split())


@dataclass(frozen=True)
class Mention:
    """One record named in a text: which record, how it was written and where."""

    id: str
    kind: str  # contact | listing | card | event
    form: str
    start: int
    end: int


def _word_pattern(form: str) -> re.Pattern[str]:
    words = r"\s+".join(re.escape(w) for w in fold(form).split())
    return re.compile(rf"(?<![\w@.-]){words}(?![\w@-]|\.\w)")


@functools.lru_cache(maxsize=64)
def _title_word_counts(titles: tuple[str, ...]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for title in titles:
        for word in set(fold(title).split()):
            counts[word] = counts.get(word, 0) + 1
    return counts


class Names:
    """Surface forms of the records of one world state, and the records a text names."""

    @classmethod
    def of(cls, state: dict[str, list[dict[str, Any]]]) -> Names:
        """The index of a state, shared by every state with the same named records (grading
        reads thousands of cells over a handful of world variants)."""
        memo = _READING[-1] if _READING else None
        if memo is not None:
            held = memo.get(id(state))
            if held is not None and held[0] is state:
                return held[1]
        key = tuple(  # (map, not a generator: it is built five times a cell)
            (table, tuple(tuple(map(str, map(row.get, _NAME_FIELDS))) for row in state.get(table, [])))
            for table in ("contacts", "listings", "cards", "events"))
        names = _cached_names(key, state)
        if memo is not None:
            memo[id(state)] = (state, names)  # the state is held: its id is no other's while the memo lives
        return names

    @staticmethod
    @contextlib.contextmanager
    def reading() -> Iterator[None]:
        """Within it, ``Names.of`` the same state object is the index it gave before, without
        reading the state again: the checks of one record ask for it five times (issue 32), and
        they only read the record. Leave it before anything changes a state it was given."""
        _READING.append({})
        try:
            yield
        finally:
            _READING.pop()

    def __init__(self, state: dict[str, list[dict[str, Any]]]) -> None:
        self.kinds: dict[str, str] = {}
        self.rows: dict[str, dict[str, Any]] = {}
        forms: list[tuple[str, str, str]] = []  # (form, id, kind)
        for row in state.get("contacts", []):
            forms += [(f, row["id"], "contact") for f in self._contact_forms(row, state.get("contacts", []))]
        for row in state.get("listings", []):
            forms += [(f, row["id"], "listing") for f in self._title_forms(row["id"], row.get("title"),
                                                                        state.get("listings", []))]
        for row in state.get("events", []):
            forms += [(f, row["id"], "event") for f in self._title_forms(row["id"], row.get("title"),
                                                                      state.get("events", []))]
        for table, kind in (("contacts", "contact"), ("listings", "listing"), ("cards", "card"), ("events", "event")):
            for row in state.get(table, []):
                self.kinds[row["id"]] = kind
                self.rows[row["id"]] = row
        self._forms = sorted({(fold(f), i, k) for f, i, k in forms if len(f.strip()) >= 3},
                             key=lambda t: -len(t[0]))
        self._patterns = [(_word_pattern(f), f, i, k) for f, i, k in self._forms]
        self._cards = [row for row in state.get("cards", [])]

    # -- building the forms ---------------------------------------------------------------
    @staticmethod
    def _contact_forms(row: dict[str, Any], everyone: list[dict[str, Any]]) -> list[str]:
        forms = [row["id"]]
        if row.get("email"):
            forms.append(row["email"])
        name = row.get("name") or ""
        if name:
            forms.append(name)
            parts = name.split()
            for part in (parts[0], parts[-1]) if len(parts) > 1 else ():
                # A first or last name names a contact only when no one else shares it.
                if sum(1 for other in everyone if part in (other.get("name") or "").split()) == 1:
                    forms.append(part)
        return forms

    @staticmethod
    def _title_forms(rid: str, title: str | None, rows: list[dict[str, Any]]) -> list[str]:
        forms = [rid]
        if not title:
            return forms
        forms.append(title)
        # A distinctive word of the title names the record when no other title has it
        # ("the Miragaia room", "the Boavista loft").
        counts = _title_word_counts(tuple(r.get("title") or "" for r in rows))
        for word in re.findall(r"[\w'-]+", title):
            if fold(word) in _COMMON or len(word) < 4:
                continue
            if counts.get(fold(word)) == 1:
                forms.append(word)
        return forms

    # -- reading a text -------------------------------------------------------------------
    def mentions(self, text: str) -> list[Mention]:
        """Every record the text names, in order of appearance (longest form wins a span);
        offsets are those of ``text``."""
        return list(self._mentions(text))

    # Grading reads the same texts again and again (a tool result, the user's message, a
    # claim's clause, in every cell of a case): the last texts' mentions are kept (issue 32).
    @functools.lru_cache(maxsize=2048)  # noqa: B019 - bounded; a held index is one of _CACHE's few
    def _mentions(self, text: str) -> tuple[Mention, ...]:
        return tuple(self._read_mentions(text))

    def _read_mentions(self, text: str) -> list[Mention]:
        folded = fold_keeping_offsets(text)
        found: list[Mention] = []
        taken: list[tuple[int, int]] = []
        for pattern, form, rid, kind in self._patterns:
            for m in pattern.finditer(folded):
                if any(m.start() < e and s < m.end() for s, e in taken):
                    continue
                taken.append(m.span())
                found.append(Mention(rid, kind, form, m.start(), m.end()))
        found += self._card_mentions(folded, taken)
        found.sort(key=lambda x: x.start)
        return found

    def _card_mentions(self, folded: str, taken: list[tuple[int, int]]) -> list[Mention]:
        out: list[Mention] = []
        for card in self._cards:
            forms = [card["id"]]
            for pattern in (rf"(?<![\w-]){re.escape(fold(card['id']))}(?![\w-])",):
                for m in re.finditer(pattern, folded):
                    if not any(m.start() < e and s < m.end() for s, e in taken):
                        out.append(Mention(card["id"], "card", forms[0], m.start(), m.end()))
                        taken.append(m.span())
            last4 = str(card.get("last4") or "")
            if last4:
                # Four digits name a card when card words stand near them: "Visa ending 4821",
                # "card •••• 4821", "the 4821 Visa", "Mastercard (0932)".
                for m in re.finditer(rf"(?<![\d.,]){re.escape(last4)}(?![\d])", folded):
                    window = folded[max(0, m.start() - 40): m.end() + 25]
                    if re.search(_CARD_WORDS, window) and not any(m.start() < e and s < m.end() for s, e in taken):
                        out.append(Mention(card["id"], "card", last4, m.start(), m.end()))
                        taken.append(m.span())
            label = card.get("label") or ""
            core = label.split("(")[0].strip()
            if core:
                words = r"\s+".join(re.escape(w) for w in fold(core).split())
                for m in re.finditer(rf"(?<![\w]){words}(?![\w])", folded):
                    if not any(m.start() < e and s < m.end() for s, e in taken):
                        out.append(Mention(card["id"], "card", core, m.start(), m.end()))
                        taken.append(m.span())
        return out

    def kind_of(self, value: Any) -> str | None:
        return self.kinds.get(value) if isinstance(value, str) else None

    def forms_of(self, rid: str) -> list[str]:
        """The forms a text may use for a record (its id first)."""
        out = [rid] + [f for f, i, _ in self._forms if i == rid and f != fold(rid)]
        row = self.rows.get(rid)
        if row is not None and self.kinds.get(rid) == "card":
            out += [str(row.get("last4") or ""), (row.get("label") or "").split("(")[0].strip()]
        return [f for f in out if f]

    def names(self, text: str, rid: str) -> bool:
        """Whether the text names the record ``rid`` in any of its forms."""
        return any(m.id == rid for m in self.mentions(text))


_NAME_FIELDS = ("id", "name", "email", "title", "last4", "label", "brand")
_CACHE: dict[Any, Names] = {}
#: ``Names.reading`` memos, innermost last: id(state) -> (state, its index).
_READING: list[dict[int, tuple[Any, Names]]] = []


def _cached_names(key: Any, state: dict[str, list[dict[str, Any]]]) -> Names:
    names = _CACHE.get(key)
    if names is None:
        if len(_CACHE) > 256:
            _CACHE.clear()
        names = _CACHE[key] = Names(state)
    return names
