"""Every form a key takes in text, found (issue 31, item A; S9.3).

A provider, a proxy or a model does not always echo a key whole: it masks it (``sk-atk-PL****…cdef``),
quotes its tail ("the key ending 1234567890abcdef"), upper-cases it, breaks it over two lines,
escapes it as JSON (``\\u0073k-…``) or as a URL (``%2D``). :class:`KeyFinder` finds all of these:

- any piece of :data:`PIECE` or more characters of a key, compared case-folded, in a view of the
  text where whitespace, zero-width characters and escaped line breaks are skipped and JSON, URL and
  XML escapes are decoded (a match is mapped back to the characters it came from);
- a masked form: a prefix and/or a suffix of a key around stars, an ellipsis or dots.

A piece made only of letters of one case (``transcri``) is a word, not a secret, and a piece found in
one of the run's own names (a model, an address) is that name: neither is looked for alone (issue
31, item B), though every longer piece that holds it still is. A key that is not
secret-shaped is never searched for at all (``providers/secret``). This module never writes a key.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

#: The shortest piece of a key that is looked for (the scan's bar: no 8 characters of a key survive).
PIECE = 8

# What the normalised view skips or decodes: whitespace, zero-width and bidi marks, escaped line breaks,
# JSON/Python escapes (\uXXXX, \xXX, any number of backslashes), URL escapes (%XX, %25XX) and XML entities.
_SPECIAL = re.compile(
    r"\s+|[\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]+"
    r"|\\+[nrt]"
    r"|\\+u([0-9a-fA-F]{4})|\\+x([0-9a-fA-F]{2})"
    r"|%(?:25)*([0-9a-fA-F]{2})"
    r"|&#(?:x([0-9a-fA-F]{1,6})|(\d{1,7}));"
)
# A masked key: a head and a tail around stars, an ellipsis, dots or bullets.
_MASKED = re.compile(r"([A-Za-z0-9_\-]*)((?:\*{2,}|…|\.{3,}|•{2,}|x{4,}|X{4,})+)([A-Za-z0-9_\-]*)")
_WORD = re.compile(r"[a-z]+|[A-Z]+")
_SPACE = re.compile(r"\s+")


def _fold(text: str) -> str:
    """Lower-cased and, beyond ASCII, NFKC (full-width letters), one character for one (so positions map back).

    Only the distinct non-ASCII characters are looked at (``str.translate`` does the rest): a record
    of a world with accented names is mostly ASCII, and folding it one character at a time in Python
    was most of the cost of redacting it (issue 32)."""
    if not text.isascii():
        for char in _non_ascii_chars(text):
            folded = _one(char)
            if folded != char:
                # one ``replace`` per distinct character: ``translate`` with a table walks the text a
                # character at a time; NFKC is idempotent, so no replaced character is replaced again
                text = text.replace(char, folded)
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)


_ASCII_BYTES = bytes(range(128))


def _non_ascii_chars(text: str) -> set[str]:
    """The distinct non-ASCII characters of ``text``: its UTF-8 bytes without the ASCII ones (no
    byte of a multi-byte sequence is ASCII) decoded back, in C passes (a character class tried at
    every position took three times as long on a record). Lone surrogates pass through as they are."""
    rest = text.encode("utf-8", "surrogatepass").translate(None, _ASCII_BYTES)
    return set(rest.decode("utf-8", "surrogatepass"))


@lru_cache(maxsize=4096)
def _one(char: str) -> str:
    if char.isascii():
        return char
    folded = unicodedata.normalize("NFKC", char)
    return folded if len(folded) == 1 else char


class _View:
    """The text as keys are compared with it, and the way back to the text's own positions."""

    __slots__ = ("norm", "_norm_starts", "_orig_starts", "_orig_ends", "_verbatim")

    def __init__(self, text: str) -> None:
        parts: list[str] = []
        self._norm_starts: list[int] = []
        self._orig_starts: list[int] = []
        self._orig_ends: list[int] = []
        self._verbatim: list[bool] = []
        at = 0
        size = 0
        for match in _SPECIAL.finditer(text):
            if match.start() > at:
                self._segment(size, at, match.start(), True)
                parts.append(text[at:match.start()])
                size += match.start() - at
            decoded = _decode(match)
            if decoded:
                self._segment(size, match.start(), match.end(), False)
                parts.append(decoded)
                size += 1
            at = match.end()
        if at < len(text):
            self._segment(size, at, len(text), True)
            parts.append(text[at:])
        self.norm = _fold("".join(parts))

    def _segment(self, norm_at: int, start: int, end: int, verbatim: bool) -> None:
        self._norm_starts.append(norm_at)
        self._orig_starts.append(start)
        self._orig_ends.append(end)
        self._verbatim.append(verbatim)

    def origin(self, start: int, end: int) -> tuple[int, int]:
        """The span of the text that view positions ``start..end`` came from."""
        return self._position(start, False), self._position(end - 1, True)

    def _position(self, at: int, end: bool) -> int:
        index = bisect.bisect_right(self._norm_starts, at) - 1
        if not self._verbatim[index]:
            return self._orig_ends[index] if end else self._orig_starts[index]
        position = self._orig_starts[index] + at - self._norm_starts[index]
        return position + 1 if end else position


def _decode(match: re.Match[str]) -> str:
    """The one character an escape stands for ('' for what is skipped)."""
    for group in (1, 2, 3, 4):
        if match.group(group):
            try:
                return chr(int(match.group(group), 16))
            except (ValueError, OverflowError):
                return ""
    if match.group(5):
        try:
            return chr(int(match.group(5)))
        except (ValueError, OverflowError):
            return ""
    return ""


def _is_word(piece: str) -> bool:
    return _WORD.fullmatch(piece) is not None


class KeyFinder:
    """Finds every form of a set of keys in a text (see the module's docstring)."""

    def __init__(self, keys: Iterable[str], names: Iterable[str] = ()) -> None:
        self.keys = tuple(dict.fromkeys(k for k in keys if len(k) >= PIECE))
        folded_names = [_fold(n) for n in names if n]
        grams: set[str] = set()
        for key in self.keys:
            for at in range(len(key) - PIECE + 1):
                piece = key[at:at + PIECE]
                folded = _fold(piece)
                if not _is_word(piece) and not any(folded in name for name in folded_names):
                    grams.add(folded)
        self._folded = tuple(_fold(k) for k in self.keys)
        self._grams = frozenset(grams)
        self._anchors = _anchors(self._folded, self._grams)
        self._pattern = re.compile("|".join(re.escape(g) for g in sorted(grams))) if grams else None
        quick = {g[:4] for g in grams} | {g[4:] for g in grams}
        self._quick = re.compile("|".join(re.escape(q) for q in sorted(quick))) if quick else None

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The spans of ``text`` that are (part of) a key, merged and sorted."""
        if self._pattern is None or not text:
            return []
        found = self._masked(text)
        if self._quick is not None and not _has_escapes(text):  # (a JSON text has escapes: no fold for it)
            folded = _fold(text)
            spaced = _SPACE.search(folded) is not None
            if not self._quick.search(folded) and not (spaced and self._quick.search(_SPACE.sub("", folded))):
                return _merge(found)  # no 4 characters of any piece, spaced or not, and nothing escaped: none
        if not self._in_view(_norm(text)):
            return _merge(found)  # no piece in the compared view: the positions need not be mapped back
        view = _View(text)
        norm = view.norm
        covered: list[tuple[int, int]] = []
        for key in self._folded:  # a whole key goes whole, even the parts of it that are names or words
            at = norm.find(key)
            while at >= 0:
                covered.append((at, at + len(key)))
                at = norm.find(key, at + 1)
        at = 0
        while True:
            match = self._pattern.search(norm, at)
            if match is None:
                break
            start, end = match.start(), match.end()
            while end < len(norm) and norm[end - PIECE + 1:end + 1] in self._grams:
                end += 1
            covered.append((start, end))
            at = end
        for start, end in _merge(covered):
            found.append(view.origin(start, end))
        return _merge(found)

    def _in_view(self, norm: str) -> bool:
        """Whether the view ``norm`` holds a whole key or a piece of one (what ``spans`` then maps back).

        ``in`` per piece, not ``self._pattern``: the alternation is tried at every position of the
        view, each piece's ``in`` runs at C speed (a record's view: 0.25 ms, not 0.55). Every key and
        piece holds one of the anchors, so a view without any holds none (a quarter of the searches)."""
        if self._anchors is None:
            return any(key in norm for key in self._folded) or any(gram in norm for gram in self._grams)
        # a key or piece in the view has its anchors in it: only those holding an anchor found are looked for
        return any(text in norm for anchor, holding in self._anchors.items() if anchor in norm for text in holding)

    def _masked(self, text: str) -> list[tuple[int, int]]:
        marks = _MarkFinder(text)
        if marks.first(0) < 0:
            return []
        out = []
        for match in _masked_forms(text, marks):
            head, tail = _fold(match.group(1)), _fold(match.group(3))
            if self._masks_a_key(head, tail):
                out.append((match.start(), match.end()))
        return out

    def _masks_a_key(self, head: str, tail: str) -> bool:
        for key in self._folded:
            starts = bool(head) and key.startswith(head)
            ends = bool(tail) and key.endswith(tail)
            if (starts and len(head) >= 4) or (ends and len(tail) >= 4) or (starts and ends):
                return True
        return False


def _anchors(keys: tuple[str, ...], grams: frozenset[str]) -> dict[str, tuple[str, ...]] | None:
    """Few short strings of which every key and every piece holds one, each with the keys and pieces
    that hold it: each key's 4-character blocks at multiples of 4 (any 8 characters in a row hold a
    whole one). None when some key or piece holds none of them (a key whose folding changed its
    length): then every piece is searched for."""
    anchors = dict.fromkeys(key[at:at + 4] for key in keys for at in range(0, len(key) - 3, 4))
    texts = (*keys, *sorted(grams))
    if not all(any(anchor in text for anchor in anchors) for text in texts):
        return None
    return {anchor: tuple(text for text in texts if anchor in text) for anchor in anchors}


def _masked_forms(text: str, marks: _MarkFinder | None = None) -> Iterable[re.Match[str]]:
    """``_MASKED.finditer(text)``, match for match, without scanning the text between marks.

    Every match holds a mark, and its head is the run of name characters just before that mark:
    so the next match begins no earlier than the start of the run before the next mark, and the
    search starts there (a plain ``finditer`` tries each position of every long word, which made
    it the slowest part of redacting a large record, issue 32)."""
    marks = marks or _MarkFinder(text)
    at = 0
    while True:
        start = marks.first(at)
        if start < 0:
            return
        while start > at and _NAME_CHAR.match(text, start - 1):
            start -= 1
        match = _MASKED.search(text, start)
        if match is None:
            return
        yield match
        at = match.end() if match.end() > match.start() else match.end() + 1


#: The mark alternatives of ``_MASKED`` (its group 2, one repetition) and its name characters.
_MARK = re.compile(r"\*{2,}|…|\.{3,}|•{2,}|x{4,}|X{4,}")
#: The shortest text each alternative of ``_MARK`` matches: a match of it starts where one of these does.
_MARK_LITERALS = ("**", "…", "...", "••", "xxxx", "XXXX")


class _MarkFinder:
    """Where ``_MARK.search(text, at)`` would match (-1: nowhere), for ``at`` that only grow: each
    mark's next place is found by ``str.find`` (C speed; the alternation tried at every position was
    most of a masked scan's cost) and looked for again only once ``at`` has passed it."""

    __slots__ = ("text", "_next")

    def __init__(self, text: str) -> None:
        self.text = text
        self._next = {mark: (-1, text.find(mark)) for mark in _MARK_LITERALS}  # mark: (searched from, found)

    def first(self, at: int) -> int:
        best = -1
        for mark, (searched, found) in self._next.items():
            if searched > at or 0 <= found < at:
                found = self.text.find(mark, at)
                self._next[mark] = (at, found)
            if found >= 0 and (best < 0 or found < best):
                best = found
        return best
_NAME_CHAR = re.compile(r"[A-Za-z0-9_\-]")
#: The escapes the view decodes (the decoding alternatives of ``_SPECIAL``): a text without any has a
#: view that is the text with the skipped characters left out.
_DECODABLE = re.compile(r"\\+u[0-9a-fA-F]{4}|\\+x[0-9a-fA-F]{2}|%(?:25)*[0-9a-fA-F]{2}|&#(?:x[0-9a-fA-F]{1,6}|\d{1,7});")


#: ``_SPECIAL``'s skipped characters alone: on a text where ``_DECODABLE`` finds nothing no decoding
#: alternative of ``_SPECIAL`` can match, so both remove the same characters (this one faster).
_SKIPPED = re.compile(r"[\s\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]+|\\+[nrt]")


#: ``_DECODABLE``'s alternatives, each found on its own: each starts with a literal, which the regex
#: engine looks for at C speed, where the alternation is tried at every position (1 ms on a record).
#: A run of backslashes before ``u`` or ``x`` matches where its last backslash does.
_DECODABLE_EACH = (re.compile(r"\\u[0-9a-fA-F]{4}"), re.compile(r"\\x[0-9a-fA-F]{2}"),
                   re.compile(r"%[0-9a-fA-F]{2}"), re.compile(r"&#(?:x[0-9a-fA-F]{1,6}|\d{1,7});"))
#: ``_SKIPPED``'s two other alternatives: escaped line breaks and the zero-width and bidi marks.
_ESCAPED_BREAK = re.compile(r"\\\\*[nrt]")  # ``\\+[nrt]``: a leading literal is searched for at C speed
_ZERO_WIDTH = re.compile(r"[\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]+")
_ZERO_WIDTH_CHARS = tuple(chr(c) for c in (0xad, *range(0x200b, 0x2010), *range(0x202a, 0x202f),
                                           *range(0x2060, 0x2065), 0xfeff))


def _decodable(text: str) -> bool:
    """``_DECODABLE.search(text) is not None``, each alternative searched for alone."""
    return any(pattern.search(text) is not None for pattern in _DECODABLE_EACH)


def _skipped_removed(text: str) -> str:
    """``_SKIPPED.sub("", text)`` in three passes: escaped line breaks, zero-width marks (only in a
    text that holds one), then whitespace (``str.split``: the same ``isspace`` characters as ``\\s``).
    The three classes share no character and no removal makes a new escaped break that the single
    substitution would have removed, so the result is the same (checked by tests/test_secret_forms.py)."""
    if "\\n" in text or "\\r" in text or "\\t" in text:
        text = _ESCAPED_BREAK.sub("", text)
    if not text.isascii() and any(char in text for char in _ZERO_WIDTH_CHARS):
        text = _ZERO_WIDTH.sub("", text)
    return _without_whitespace(text)


#: The ASCII characters ``str.isspace`` holds, and the others (tests check both against ``\s``).
_ASCII_SPACE = bytes(c for c in range(128) if chr(c).isspace())
_OTHER_SPACE = tuple(chr(c) for c in (0x85, 0xa0, 0x1680, *range(0x2000, 0x200b), 0x2028, 0x2029, 0x202f,
                                      0x205f, 0x3000))


def _without_whitespace(text: str) -> str:
    """``"".join(text.split())``: the ASCII whitespace deleted from the UTF-8 bytes in one C pass (no
    byte of a multi-byte sequence is ASCII), then the few other whitespace characters a text holds
    (a third of the time of splitting a record into words and joining them)."""
    out = text.encode("utf-8", "surrogatepass").translate(None, _ASCII_SPACE).decode("utf-8", "surrogatepass")
    if not out.isascii():
        for char in _OTHER_SPACE:
            if char in out:
                out = out.replace(char, "")
    return out


def _norm(text: str) -> str:
    """``_View(text).norm``, made without the map back to the text's positions."""
    if not _decodable(text):
        return _fold(_skipped_removed(text))
    return _fold(_SPECIAL.sub(_decode, text))


def _has_escapes(text: str) -> bool:
    return "\\" in text or "%" in text or "&#" in text


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


@lru_cache(maxsize=64)
def finder(keys: tuple[str, ...], names: tuple[str, ...] = ()) -> KeyFinder:
    """The finder of one set of keys (built once: records are redacted before every write)."""
    return KeyFinder(keys, names)


#: What joins the texts :func:`replace_keys_each` scans as one: kept in the view as it is, in no key,
#: no name character and no escape, so no find crosses it; JSON never writes it raw.
_JOIN = "\x00"


def replace_keys_each(texts: list[str], keys: tuple[str, ...], mark: str, names: tuple[str, ...] = ()) -> list[str]:
    """``[replace_keys(t, keys, mark, names) for t in texts]``, the texts scanned as one joined by
    :data:`_JOIN` (a journal line's changes are many short texts; each scan has a fixed cost).
    Texts or keys that hold the joining character are scanned one by one."""
    if len(texts) < 2 or any(_JOIN in text for text in texts) or any(_JOIN in key for key in keys) or _JOIN in mark:
        return [replace_keys(text, keys, mark, names) for text in texts]
    return replace_keys(_JOIN.join(texts), keys, mark, names).split(_JOIN)


def replace_keys(text: str, keys: tuple[str, ...], mark: str, names: tuple[str, ...] = ()) -> str:
    """``text`` with every form of ``keys`` replaced by ``mark`` (no piece found in ``names`` alone)."""
    spans = finder(keys, names).spans(text)
    if not spans:
        return text
    pieces: list[str] = []
    at = 0
    for start, end in spans:
        pieces.append(text[at:start])
        pieces.append(mark)
        at = end
    pieces.append(text[at:])
    return "".join(pieces)
