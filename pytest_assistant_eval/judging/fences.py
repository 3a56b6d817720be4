"""Fences around data (S6.6): what a model or a tool wrote is shown to a judge as data only.

Every such text is wrapped in ``<<<DATA tag>>>`` ... ``<<<END tag>>>``. The tag is an HMAC of
the request's unfenced material under a secret kept beside the saved judgments: the assistant
that wrote the answer never saw the secret, so it cannot close a fence early, yet the same
material gives the same tag (and the same request bytes) on every run, which is what lets a
saved judgment be found again (S6.8). Material that holds its own tag is refused, never
escaped: an escaped fence would be a fence the judge cannot tell from ours.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Iterable

TAG_HEX = 16  # 64 bits: no text of a model holds it by chance


class FenceCollision(Exception):
    """A text to be fenced holds the fence's own tag; the cell is named and nothing is sent."""


def derive_tag(secret: bytes, material: str) -> str:
    """The fence tag of one request's material."""
    return hmac.new(secret, material.encode("utf-8"), hashlib.sha256).hexdigest()[:TAG_HEX]


def opening(tag: str) -> str:
    return f"<<<DATA {tag}>>>"


def closing(tag: str) -> str:
    return f"<<<END {tag}>>>"


def fence(text: str, tag: str) -> str:
    """``text`` inside the fence (the caller has checked it with :func:`check_texts`)."""
    return f"{opening(tag)}\n{text}\n{closing(tag)}"


def check_texts(texts: Iterable[str], tag: str, where: str) -> None:
    """Refuse material that holds its own tag: such a text could end its fence and speak as us."""
    for text in texts:
        if tag in text:
            raise FenceCollision(f"{where}: the material holds its own fence tag; it is not sent "
                                 "(grade it by hand, or change the saved judgments' secret)")
