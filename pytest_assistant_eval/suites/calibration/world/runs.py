"""The background job the build really executes: a scheduled payments batch (S1.6).

A run reads its source CSV, checks its inputs, and only when every check passes
applies the batch (one charge per row, added to the card's balance). Whatever
happens, it records itself in ``runs`` with a fresh uuid4 id, the source's name
and hash, every input check and an error log. A failed run applies nothing.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import sqlite3
import uuid
from datetime import date
from pathlib import Path
from typing import Any

from . import store

KIND = "payments_batch"


def write_source(path: Path, columns: list[str], rows: list[list[str]]) -> None:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
    path.write_text(buf.getvalue(), encoding="utf-8")


def _card_expired(expiry: str, on: date) -> bool:
    year, month = (int(x) for x in expiry.split("-"))
    return (on.year, on.month) > (year, month)


def run_payments_batch(
    conn: sqlite3.Connection, source: Path, *, columns: list[str], started_at: str, ended_at: str
) -> dict[str, Any]:
    """Run the batch on ``source``; return the run row written to ``runs``."""
    data = source.read_bytes()
    run_id = str(uuid.uuid4())
    checks: list[dict[str, Any]] = []

    def check(name: str, problems: list[str], ok_detail: str) -> None:
        checks.append({"name": name, "passed": not problems, "detail": "; ".join(problems) if problems else ok_detail})

    reader = list(csv.reader(io.StringIO(data.decode("utf-8"))))
    header, body = (reader[0], reader[1:]) if reader else ([], [])
    check("header", [] if header == columns else [f"expected columns {','.join(columns)}, found {','.join(header)}"],
          f"{len(columns)} expected columns")
    records = [dict(zip(header, r)) for r in body] if header == columns else []

    ids = [r["payment_id"] for r in records]
    dups = sorted({i for i in ids if ids.count(i) > 1})
    check("payment_ids_unique", [f"payment id {d} appears more than once" for d in dups], f"{len(ids)} distinct payment ids")

    bad_amounts = []
    amounts: dict[str, float] = {}
    for n, r in enumerate(records, start=1):
        try:
            value = float(r["amount_eur"])
        except ValueError:
            bad_amounts.append(f"row {n} ({r['payment_id']}): amount {r['amount_eur']!r} is not a number")
            continue
        amounts[r["payment_id"]] = value
        if value <= 0:
            bad_amounts.append(f"row {n} ({r['payment_id']}): amount {r['amount_eur']} EUR is not positive")
    check("amounts_positive", bad_amounts, "every amount is a positive number of EUR")

    cards = {c["id"]: c for c in store.rows(conn, "cards")}
    unknown = [f"row {n} ({r['payment_id']}): card {r['card_id']} does not exist"
               for n, r in enumerate(records, start=1) if r["card_id"] not in cards]
    check("cards_known", unknown, "every card exists")

    unusable = []
    per_card: dict[str, float] = {}
    for r in records:
        if r["card_id"] in cards:
            per_card[r["card_id"]] = per_card.get(r["card_id"], 0.0) + max(amounts.get(r["payment_id"], 0.0), 0.0)
    run_day = date.fromisoformat(started_at[:10])
    for card_id, total in sorted(per_card.items()):
        card = cards[card_id]
        remaining = round(card["limit_eur"] - card["balance_eur"], 2)
        if card["blocked"]:
            unusable.append(f"card {card_id} is blocked")
        elif _card_expired(card["expiry"], run_day):
            unusable.append(f"card {card_id} expired ({card['expiry']})")
        elif total > remaining + 1e-9:
            unusable.append(f"card {card_id}: batch total {total:.2f} EUR is over the remaining {remaining:.2f} EUR")
    check("cards_usable", unusable, "every known card is unblocked, valid and has room for its payments")

    failed = [c for c in checks if not c["passed"]]
    log: list[str] = []
    applied = 0
    if failed:
        log.append(f"{started_at} {KIND} started: source {source.name} (sha256 {hashlib.sha256(data).hexdigest()[:12]}), {len(records)} rows")
        for c in failed:
            log.append(f"{started_at} input check {c['name']} FAILED: {c['detail']}")
        log.append(f"{ended_at} aborted: {len(failed)} of {len(checks)} input checks failed; 0 of {len(records)} payments applied")
        status = "failed"
    else:
        for r in records:
            charge_id = store.next_id(conn, "charges")
            amount = round(amounts[r["payment_id"]], 2)
            store.insert_row(conn, "charges", {
                "id": charge_id, "card": r["card_id"], "merchant": r["merchant"], "amount": amount,
                "currency": "EUR", "status": "ok", "decline_reason": None, "created_at": started_at,
                "memo": f"{r['memo']} (scheduled payment {r['payment_id']})", "booking": None, "run": run_id,
            })
            conn.execute("UPDATE cards SET balance_eur = round(balance_eur + ?, 2) WHERE id = ?", (amount, r["card_id"]))
            applied += 1
        status = "succeeded"
    row = {
        "id": run_id, "kind": KIND, "status": status, "started_at": started_at, "ended_at": ended_at,
        "source_file": f"sources/{source.name}", "source_sha256": hashlib.sha256(data).hexdigest(),
        "input_checks": json.dumps(checks, ensure_ascii=False), "error_log": "\n".join(log), "rows_applied": applied,
    }
    store.insert_row(conn, "runs", row)
    return row
