"""One identity per model, one name for it in every table (S8.7, issue 29 item 3).

A model is what its results folder's ``run.json`` identity says: ``PRESET:MODEL``, the address
it was asked at, and the settings the identity fixes (data collection, Ollama contexts, CPU
offload). The folder's name is only where the records are: two folders of one identity are one
model (one row), two identities are never one row, whatever their folders or models are called.
The world is no part of a model's identity: a world is one by its content (``world/content.py``),
and grading refuses folders of different worlds before any table reads them.

A table shows a model by its name as given to ``--model`` (``oracle``, ``llama3.1:8b``); a name
two identities share gets its preset (``scripted:oracle``, ``openai-compatible:oracle``), and one
still shared its address or, last, its settings. The leaderboard, summary, calibrate, compare and
the report all name models through this module, so a model has one name everywhere.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from pytest_assistant_eval.providers.generation import identity_words

__all__ = ["IDENTITY_FIELDS", "identity_key", "display_names", "line_identity", "relabel_lines"]

#: The identity fields that make a model (``suites/calibration/suite.py``'s ``identity``), in order;
#: ``route`` is the preset and address together, ``free_plan`` follows from the model's name.
IDENTITY_FIELDS = ("preset", "model", "address", "data_collection", "ollama_contexts", "cpu_offload", "generation")


def identity_key(identity: Mapping[str, Any]) -> str:
    """The model a results folder is of, as one string: ``PRESET:MODEL`` and, when set, the rest."""
    head = f"{identity.get('preset')}:{identity.get('model')}"
    rest = {k: identity.get(k) for k in IDENTITY_FIELDS[2:] if identity.get(k) is not None}
    return head if not rest else f"{head} {json.dumps(rest, sort_keys=True, separators=(',', ':'))}"


def _names(keys: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Per identity key (``keys``: key -> identity), its display name: unique among the keys."""
    by_model: dict[str, list[str]] = defaultdict(list)
    for key, ident in keys.items():
        # Generation settings (issue 33) are part of the name itself: one model at two temperatures
        # is two rows, ``gpt-4.1 (temperature=0.2)`` and ``gpt-4.1 (temperature=0.7)``.
        settings = identity_words(ident.get("generation"))
        by_model[f"{ident.get('model')} ({settings})" if settings else str(ident.get("model"))].append(key)
    out: dict[str, str] = {}
    for model, shared in by_model.items():
        if len(shared) == 1:
            out[shared[0]] = model
            continue
        by_route: dict[str, list[str]] = defaultdict(list)
        for key in shared:
            by_route[f"{keys[key].get('preset')}:{model}"].append(key)
        for route, same in by_route.items():
            if len(same) == 1:
                out[same[0]] = route
                continue
            addresses = {keys[k].get("address") for k in same}
            for key in same:
                address = keys[key].get("address")
                if len(addresses) == len(same) and address:
                    out[key] = f"{route} @ {address}"
                else:  # the same address, other settings: the key itself says which
                    out[key] = key
    return out


def display_names(identities: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Per results folder (``identities``: folder name -> run.json identity), its model's name in the tables."""
    keys = {identity_key(ident): ident for ident in identities.values()}
    names = _names(keys)
    return {folder: names[identity_key(ident)] for folder, ident in identities.items()}


def line_identity(line: Mapping[str, Any]) -> tuple[Any, Any]:
    """The model of a results line (``docs/results.md``): its route (preset and address) and model name."""
    return (line.get("route") or line.get("preset"), line.get("model_name"))


def relabel_lines(lines: Iterable[dict[str, Any]]) -> None:
    """Name the models of results lines from several gradings by the rule above, in place.

    Lines recorded from one grading are already named so; lines of several gradings may give
    two identities one name (``oracle`` scripted in one, behind a server in another): each line's
    ``model`` becomes the name of its identity (route and model name) among all of them.
    """
    lines = list(lines)
    keys: dict[str, dict[str, Any]] = {}
    of_line: list[str] = []
    for ln in lines:
        route, model = line_identity(ln)
        preset = ln.get("preset") or (str(route).split("@", 1)[0] if route else None)
        address = str(route).split("@", 1)[1] if route and "@" in str(route) else None
        ident = {"preset": preset, "model": model, "address": address}
        key = identity_key(ident)
        keys.setdefault(key, ident)
        of_line.append(key)
    names = _names(keys)
    for ln, key in zip(lines, of_line):
        ln["model"] = names[key]
