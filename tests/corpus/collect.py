"""Gather the played conversations into the regression corpus (S6.10).

Each source folder holds a relay folder (``relay/``: the requests the player answered, their
replies and the player's labels, written before any grading) and the harness's results folder
(``results/``). Runs with the relay are sequential (one worker), so the relay's requests fall
into one block per conversation, in the order the records were started; a block starts with a
request that holds no assistant message yet.

    python tests/corpus/collect.py SOURCE_DIR... --out tests/corpus/cells

writes ``<source>-<cell>.json`` per record (the record without its provider-format ``messages``
and without world states that grading does not read) and ``played.json``: how the
player meant to play each conversation (good, or the fault planted), as labelled before grading.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def _blocks(relay: Path) -> list[list[int]]:
    """Requests grouped by conversation: a request continues the block before it when its
    messages extend that block's last request (a conversation only ever grows)."""
    blocks: list[list[int]] = []
    previous: list[dict[str, Any]] = []
    for path in sorted((relay / "requests").glob("*.json")):
        record = json.loads(path.read_text())
        msgs = record["body"].get("messages") or []
        continues = bool(blocks) and len(msgs) > len(previous) and msgs[:len(previous)] == previous
        if continues:
            blocks[-1].append(record["n"])
        else:
            blocks.append([record["n"]])
        previous = msgs
    return blocks


def _first_user(relay: Path, n: int) -> str:
    body = json.loads((relay / "requests" / f"{n:04d}.json").read_text())["body"]
    return next((m.get("content") or "") for m in body["messages"] if m.get("role") == "user")


def collect(source: Path) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    relay = source / "relay"
    labels = [json.loads(line) for line in (relay / "labels.jsonl").read_text().splitlines() if line.strip()]
    records = [json.loads(p.read_text()) for p in (source / "results" / "cells").glob("*.json")]
    records.sort(key=lambda r: r["started_at"])
    blocks = [b for b in _blocks(relay)]
    out = []
    paired: list[tuple[list[int], dict[str, Any]]] = []
    j = 0
    for i, record in enumerate(records):
        first = " ".join(next(e["text"] for e in record["transcript"] if e["type"] == "user").split())
        if j < len(blocks) and " ".join(_first_user(relay, blocks[j][0]).split()) == first:
            paired.append((blocks[j], record))
            j += 1
        elif (reused := next((b for b, r in paired if len(b) == 1 and len(record.get("requests") or []) == 1
                              and r["requests"][0]["request_sha256"] == record["requests"][0]["request_sha256"]),
                             None)) is not None:
            # A repeat whose one request was identical to an earlier one: the relay answered it
            # with the same reply (a retry reuses its answer), so both records share that block
            # (repeats started in the same second may come in either order).
            paired.append((reused, record))
        else:
            raise SystemExit(f"{source}: {record['cell']} matches no relay conversation")
    if j != len(blocks):
        raise SystemExit(f"{source}: {len(blocks)} conversations in the relay but {j} matched a record")
    for block, record in paired:
        # The player's last label of a conversation stands (a plan refined after the first look).
        label = next((lab for lab in reversed(labels) if lab["at_request"] in block), None)
        played = {"played": label["label"] if label else "unlabelled", "note": label["note"] if label else "",
                  "requests": [block[0], block[-1]]}
        slim = {k: v for k, v in record.items() if k != "messages"}
        # Question grading reads no state; task grading reads the final state.
        keep_final = record["kind"] == "task"
        slim["state"] = {k: v for k, v in (record.get("state") or {}).items()
                         if k != "start" and (keep_final or k != "final")}
        out.append((f"{source.name}-{record['cell']}", slim, played))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    played_path = args.out / "played.json"
    played_all = json.loads(played_path.read_text()) if played_path.exists() else {}
    for source in args.sources:
        for name, record, played in collect(source):
            (args.out / f"{name}.json").write_text(json.dumps(record, ensure_ascii=False, indent=1) + "\n")
            played_all[name] = played
    played_path.write_text(json.dumps(played_all, ensure_ascii=False, indent=1, sort_keys=True) + "\n")
    print(f"{len(played_all)} conversations in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
