"""A cell's setting key as the tables compare it (S3.4): its short id and what differs among keys.

Every record of every suite carries the ``setting_key`` its cell was asked under (the session
keeps it, S4.8). The tables name a setting by ``setting_id`` when one model's cells at one level
were asked under more than one, and warn with ``setting_mix``. Nothing here knows a suite: the
calibration's levels make their keys (``suites/calibration/levels.py``, which re-exports these)
and the tables read them (issue 32: the tables no longer reach the calibration's levels by name).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["canonical_json", "sha256_hex", "setting_id", "setting_mix"]


def canonical_json(obj: Any) -> str:
    """The one JSON spelling hashed everywhere: sorted keys, no spaces, UTF-8 kept."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def setting_id(key: Mapping[str, Any] | None) -> str | None:
    """A short name for one whole setting key (12 hex digits of its hash); None for an unknown key.

    Tables show a level setting by this when one model's cells at one level were asked under
    more than one setting, so the rows are never merged.
    """
    if not key:
        return None
    return sha256_hex(canonical_json(dict(key)))[:12]


_MIX_PARTS = (("system_hash", "instructions (system_hash)"), ("tools_hash", "tools (tools_hash)"),
              ("behaviour", "behaviour versions"))


def setting_mix(keys: Iterable[Mapping[str, Any] | None]) -> list[str]:
    """What differs among the setting keys of one model's cells at one level (S3.4); empty when one setting.

    Each part names how many values it has and which (hashes shortened to 8 digits). A cell
    without a key or without the field (written before it was recorded) is "unknown", which
    counts only beside a known value: cells that all predate the key are not mixed, as far
    as anyone can tell.
    """
    keys = list(keys)
    found: list[str] = []
    for field_name, words in _MIX_PARTS:
        known = sorted({str(k[field_name]) for k in keys if k and k.get(field_name)})
        unknown = any(not k or not k.get(field_name) for k in keys)
        if len(known) > 1 or (unknown and known):
            shown = [v[:8] if field_name != "behaviour" else v for v in known] + (["unknown"] if unknown else [])
            found.append(f"{len(shown)} {words}: {', '.join(shown)}")
    return found
