"""The SQLite world backend: the services behind the tools (S1.1-S1.5).

Each cell works on its own copy of a variant's database (``open_world``). Calls
never raise: bad arguments and unknown ids come back as ``error``, what the
world or the cell's policy does not authorise as ``refused``; every call is
logged in order with its turn and round. New ids come from per-table counters
in the database and new timestamps from the fixed clock, so two runs of a cell
see the same world.

Size: one class implements the tools of all six services; a module per service (contacts,
messages, calendar, listings, payments, runs) behind `SqliteWorld` would split it.
"""

from __future__ import annotations

import copy
import json
import marshal
import shutil
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

from . import schema, store
from pytest_assistant_eval.conversation.backend import ForbiddenCall, LogEntry, Policy, State, ToolResult, ToolSpec
from .build import copy_database
from .clock import NOW_ISO, TODAY, parse_datetime
from .state import state_digest
from .tools import tool_specs, validate_arguments

OWNER = "c-mara"


def money(amount: float | None, currency: str | None = "EUR") -> dict[str, Any] | None:
    if amount is None:
        return None
    return {"amount": round(float(amount), 2), "currency": currency or "EUR"}


def _fold(text: Any) -> str:
    """Case- and accent-insensitive form for searching ("Ines" finds "Inês")."""
    return _fold_text(str(text or ""))


@lru_cache(maxsize=65536)
def _fold_text(text: str) -> str:
    # Cached: a search folds every row's fields, the same few thousand strings on every call (issue 32).
    norm = unicodedata.normalize("NFKD", text)
    return "".join(c for c in norm if not unicodedata.combining(c)).casefold()


def _instant(text: str) -> datetime:
    value = parse_datetime(text)
    return value.astimezone(timezone.utc)


def _card_expired(expiry: str, on: date = TODAY) -> bool:
    year, month = (int(x) for x in expiry.split("-"))
    return (on.year, on.month) > (year, month)


class _Refused(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _Invalid(Exception):
    pass


#: A verified database's sha256 → its snapshot, marshalled: every cell of a variant starts from the
#: same bytes, so its start state is read from SQLite once per process (issue 32, per-cell costs).
_START_SNAPSHOTS: dict[str, bytes] = {}


class SqliteWorld:
    """A world backend on one SQLite file (implements ``WorldBackend``).

    ``content_sha256``: the sha256 the file was checked to have when it was opened (``open_world``
    copies and checks it). Until the first change, its snapshot is that content's, kept once per
    process and handed out as a fresh copy (``marshal`` reads back the same values, in order)."""

    def __init__(self, db_path: Path, policy: Policy = Policy(), *, variant: str | None = None,
                 content_sha256: str | None = None) -> None:
        self.path = Path(db_path)
        self.policy = policy
        self._conn = store.connect(self.path)
        self._content = content_sha256
        self._log: list[LogEntry] = []
        self.variant = variant or self._meta().get("variant")

    # -- protocol -----------------------------------------------------------------
    def list_tools(self) -> list[ToolSpec]:
        return tool_specs()

    @property
    def log(self) -> list[LogEntry]:
        return self._log

    def call(self, name: str, arguments: dict[str, Any], *, turn: int, round: int) -> ToolResult:
        logged_args = _jsonable_copy(arguments)
        try:
            result = self._call(name, arguments)
        except Exception as exc:  # a bug in a service must not end the run
            self._rollback()
            result = ToolResult("error", error=f"{name}: internal error ({type(exc).__name__}: {exc})")
        self._log.append(LogEntry(
            seq=len(self._log) + 1, turn=turn, round=round, tool=name,
            arguments=logged_args if isinstance(logged_args, dict) else {"_not_an_object": logged_args},
            status=result.status, response=_plain_copy(result.data), error=result.error,
        ))
        return result

    def snapshot(self) -> State:
        if self._content is None or self._conn.total_changes:
            return self._read_snapshot()
        kept = _START_SNAPSHOTS.get(self._content)
        if kept is None:
            state = self._read_snapshot()
            _START_SNAPSHOTS[self._content] = marshal.dumps(state)
            return state
        return marshal.loads(kept)

    def _read_snapshot(self) -> State:
        return {table: store.rows(self._conn, table) for table in schema.TABLES}

    def changes(self) -> int:
        """How many rows every write so far changed: equal counts, equal state (no snapshot needed)."""
        return self._conn.total_changes

    def describe_state(self) -> State:
        return self.snapshot()

    def restore(self, state: State) -> None:
        unknown = sorted(set(state) - set(schema.TABLES))
        if unknown:
            raise ValueError(f"restore: unknown table(s) {', '.join(unknown)}")
        with self._tx():
            for table in schema.TABLES:
                if table not in state:
                    continue
                self._conn.execute(f'DELETE FROM "{table}"')
                for row in state[table]:
                    store.insert_row(self._conn, table, row)

    def close(self) -> None:
        self._conn.close()

    # -- conveniences -------------------------------------------------------------
    def state_digest(self) -> str:
        return state_digest(self.snapshot())

    def _meta(self) -> dict[str, str]:
        return {k: v for k, v in self._conn.execute("SELECT key, value FROM meta")}

    @contextmanager
    def _tx(self) -> Iterator[None]:
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        else:
            self._conn.execute("COMMIT")

    def _rollback(self) -> None:
        if self._conn.in_transaction:
            self._conn.execute("ROLLBACK")

    # -- dispatch -----------------------------------------------------------------
    def _call(self, name: str, arguments: Any) -> ToolResult:
        problem = validate_arguments(name, arguments)
        if problem:
            return ToolResult("error", error=problem)
        handler: Callable[[dict[str, Any]], Any] = getattr(self, f"_t_{name}")
        try:
            rule = self._policy_refusal(name, arguments)
            if rule is not None:
                return ToolResult("refused", data={"refused_by": "policy", "rule": rule.id},
                                  error=f"{name} is not allowed: {rule.reason}")
            return ToolResult("ok", data=handler(arguments))
        except _Invalid as exc:
            return ToolResult("error", error=f"{name}: {exc}")
        except _Refused as exc:
            return ToolResult("refused", data={"refused_by": "world"}, error=f"{name} refused: {exc.reason}")

    # -- policy -------------------------------------------------------------------
    def _spend(self, name: str, args: dict[str, Any]) -> tuple[float, str] | None:
        if name == "charge_card":
            return float(args["amount"]), args["currency"]
        if name == "book_listing":
            listing = store.get(self._conn, "listings", args["listing_id"])
            if listing is None:
                return None
            nights = (date.fromisoformat(args["end_date"]) - date.fromisoformat(args["start_date"])).days
            return round(nights * listing["price_amount"], 2), listing["price_currency"]
        return None

    def _policy_refusal(self, name: str, args: dict[str, Any]) -> ForbiddenCall | None:
        for rule in self.policy.forbidden:
            if rule.tool != name:
                continue
            if not all(k in args and _arg_matches(v, args[k]) for k, v in rule.args.items()):
                continue
            if rule.max_amount is None:
                return rule
            spend = self._spend(name, args)
            if spend is None:
                continue
            amount, currency = spend
            if (rule.currency is None or rule.currency == currency) and amount > rule.max_amount + 1e-9:
                return rule
        return None

    # -- lookups ------------------------------------------------------------------
    def _need(self, table: str, key: str, label: str) -> dict[str, Any]:
        row = store.get(self._conn, table, key)
        if row is None:
            raise _Invalid(f"there is no {label} with id {key!r}")
        return row

    def _contact_name(self, contact_id: str | None) -> str | None:
        row = store.get(self._conn, "contacts", contact_id) if contact_id else None
        return row["name"] if row else None

    def _check_recipients(self, ids: list[str], role: str) -> None:
        for cid in ids:
            row = store.get(self._conn, "contacts", cid)
            if row is None:
                raise _Refused(f"{cid!r} is not a known contact; {role} must be contacts of the owner")
            if not row["active"]:
                raise _Refused(f"{row['name']} ({cid}) is an inactive contact and cannot be reached ({row['note']})")

    def _check_card(self, card: dict[str, Any], amount: float) -> None:
        label = f"{card['brand']} ending {card['last4']} ({card['id']})"
        if card["blocked"]:
            raise _Refused(f"the card {label} is blocked")
        if _card_expired(card["expiry"]):
            raise _Refused(f"the card {label} expired at the end of {card['expiry']}")
        remaining = round(card["limit_eur"] - card["balance_eur"], 2)
        if amount > remaining + 1e-9:
            raise _Refused(
                f"{amount:.2f} EUR is over what the card {label} has left: limit {card['limit_eur']:.2f} EUR, "
                f"spent {card['balance_eur']:.2f} EUR this cycle, remaining {remaining:.2f} EUR"
            )

    # -- presentation -------------------------------------------------------------
    def _contact(self, r: dict[str, Any], full: bool = False) -> dict[str, Any]:
        out = {"id": r["id"], "name": r["name"], "email": r["email"], "company": r["company"], "city": r["city"],
               "active": bool(r["active"])}
        if full:
            out.update(phone=r["phone"], note=r["note"])
        return out

    def _message(self, r: dict[str, Any], full: bool = False) -> dict[str, Any]:
        out = {"id": r["id"], "folder": r["folder"], "from": r["sender"], "from_name": self._contact_name(r["sender"]),
               "to": json.loads(r["recipients"]), "subject": r["subject"], "sent_at": r["sent_at"],
               "attachment_name": r["attachment_name"], "attachment_mb": r["attachment_mb"]}
        if full:
            out["to_names"] = [self._contact_name(c) for c in out["to"]]
            out["body"] = r["body"]
        return out

    def _event(self, r: dict[str, Any]) -> dict[str, Any]:
        minutes = int((_instant(r["end"]) - _instant(r["start"])).total_seconds() // 60)
        return {"id": r["id"], "title": r["title"], "start": r["start"], "end": r["end"], "duration_minutes": minutes,
                "place": r["place"], "attendees": json.loads(r["attendees"]), "organizer": r["organizer"],
                "status": r["status"]}

    def _listing(self, r: dict[str, Any], full: bool = False) -> dict[str, Any]:
        out = {"id": r["id"], "kind": r["kind"], "title": r["title"], "city": r["city"],
               "price": money(r["price_amount"], r["price_currency"]),
               "price_basis": "per_night" if r["kind"] == "rent" else "total",
               "distance_km": r["distance_km"], "area_m2": r["area_m2"], "kwh_per_year": r["kwh_per_year"],
               "seller": r["seller"], "available_from": r["available_from"], "available_until": r["available_until"],
               "active": bool(r["active"])}
        if full:
            out.update(seller_name=self._contact_name(r["seller"]), description=r["description"])
        return out

    def _booking(self, r: dict[str, Any]) -> dict[str, Any]:
        listing = store.get(self._conn, "listings", r["listing"])
        return {"id": r["id"], "listing": r["listing"], "listing_title": listing["title"] if listing else None,
                "card": r["card"], "start_date": r["start_date"], "end_date": r["end_date"], "nights": r["nights"],
                "amount": money(r["amount"], r["currency"]), "status": r["status"], "cancel_reason": r["cancel_reason"],
                "created_at": r["created_at"], "cancelled_at": r["cancelled_at"]}

    def _card(self, r: dict[str, Any]) -> dict[str, Any]:
        return {"id": r["id"], "holder": r["holder"], "brand": r["brand"], "last4": r["last4"], "expiry": r["expiry"],
                "limit": money(r["limit_eur"]), "balance": money(r["balance_eur"]), "blocked": bool(r["blocked"]),
                "label": r["label"]}

    def _charge(self, r: dict[str, Any]) -> dict[str, Any]:
        return {"id": r["id"], "card": r["card"], "merchant": r["merchant"], "amount": money(r["amount"], r["currency"]),
                "status": r["status"], "decline_reason": r["decline_reason"], "created_at": r["created_at"],
                "memo": r["memo"], "booking": r["booking"], "run": r["run"]}

    def _run(self, r: dict[str, Any], full: bool = False) -> dict[str, Any]:
        out = {"id": r["id"], "kind": r["kind"], "status": r["status"], "started_at": r["started_at"],
               "ended_at": r["ended_at"], "source_file": r["source_file"]}
        if full:
            out.update(source_sha256=r["source_sha256"], input_checks=json.loads(r["input_checks"]),
                       error_log=r["error_log"], rows_applied=r["rows_applied"],
                       duration_seconds=(_instant(r["ended_at"]) - _instant(r["started_at"])).total_seconds())
        return out

    # -- contacts -----------------------------------------------------------------
    def _t_search_contacts(self, a: dict[str, Any]) -> list[dict[str, Any]]:
        q = _fold(a["query"])
        return [self._contact(r) for r in store.rows(self._conn, "contacts")
                if any(q in _fold(r[f]) for f in ("id", "name", "email", "company", "city"))]

    def _t_get_contact(self, a: dict[str, Any]) -> dict[str, Any]:
        return self._contact(self._need("contacts", a["contact_id"], "contact"), full=True)

    # -- messages -----------------------------------------------------------------
    def _t_search_messages(self, a: dict[str, Any]) -> list[dict[str, Any]]:
        q = _fold(a.get("query", ""))
        if "from_contact" in a and store.get(self._conn, "contacts", a["from_contact"]) is None:
            raise _Invalid(f"there is no contact with id {a['from_contact']!r}")
        found = [r for r in store.rows(self._conn, "messages")
                 if (not q or q in _fold(r["subject"]) or q in _fold(r["body"]))
                 and a.get("folder", r["folder"]) == r["folder"]
                 and a.get("from_contact", r["sender"]) == r["sender"]]
        found.sort(key=lambda r: r["id"])
        found.sort(key=lambda r: _instant(r["sent_at"]), reverse=True)
        return [self._message(r) for r in found]

    def _t_read_message(self, a: dict[str, Any]) -> dict[str, Any]:
        return self._message(self._need("messages", a["message_id"], "message"), full=True)

    def _t_send_message(self, a: dict[str, Any]) -> dict[str, Any]:
        self._check_recipients(a["to"], "recipients")
        with self._tx():
            mid = store.next_id(self._conn, "messages")
            store.insert_row(self._conn, "messages", {
                "id": mid, "folder": "sent", "sender": OWNER, "recipients": json.dumps(a["to"]),
                "subject": a["subject"], "body": a["body"], "sent_at": NOW_ISO,
                "attachment_name": None, "attachment_mb": None,
            })
        return {"sent": True, "message": self._message(self._need("messages", mid, "message"))}

    # -- calendar -----------------------------------------------------------------
    def _times(self, a: dict[str, Any]) -> tuple[str, str]:
        start, end = parse_datetime(a["start"]), parse_datetime(a["end"])
        if end <= start:
            raise _Invalid(f"end {a['end']} must be after start {a['start']}")
        return start.isoformat(), end.isoformat()

    def _own_event(self, event_id: str) -> dict[str, Any]:
        ev = self._need("events", event_id, "event")
        if ev["organizer"] != OWNER:
            raise _Refused(f"{ev['title']} ({event_id}) is organised by {self._contact_name(ev['organizer'])} "
                           f"({ev['organizer']}); only the organiser can change it")
        if ev["status"] == "cancelled":
            raise _Refused(f"{ev['title']} ({event_id}) is already cancelled")
        return ev

    def _t_list_events(self, a: dict[str, Any]) -> list[dict[str, Any]]:
        first, last = a["start_date"], a["end_date"]
        if last < first:
            raise _Invalid(f"end_date {last} is before start_date {first}")
        found = [r for r in store.rows(self._conn, "events") if r["start"][:10] <= last and r["end"][:10] >= first]
        found.sort(key=lambda r: (_instant(r["start"]), r["id"]))
        return [self._event(r) for r in found]

    def _t_get_event(self, a: dict[str, Any]) -> dict[str, Any]:
        ev = self._need("events", a["event_id"], "event")
        out = self._event(ev)
        out["attendee_names"] = [self._contact_name(c) for c in out["attendees"]]
        return out

    def _t_create_event(self, a: dict[str, Any]) -> dict[str, Any]:
        start, end = self._times(a)
        attendees = [OWNER] + [c for c in a.get("attendees", []) if c != OWNER]
        self._check_recipients(attendees[1:], "attendees")
        with self._tx():
            eid = store.next_id(self._conn, "events")
            store.insert_row(self._conn, "events", {
                "id": eid, "title": a["title"], "start": start, "end": end, "place": a.get("place", ""),
                "attendees": json.dumps(attendees), "organizer": OWNER, "status": "confirmed",
            })
        return {"created": True, "event": self._event(self._need("events", eid, "event"))}

    def _t_move_event(self, a: dict[str, Any]) -> dict[str, Any]:
        start, end = self._times(a)
        ev = self._own_event(a["event_id"])
        with self._tx():
            self._conn.execute("UPDATE events SET start = ?, end = ? WHERE id = ?", (start, end, ev["id"]))
        return {"moved": True, "before": {"start": ev["start"], "end": ev["end"]},
                "event": self._event(self._need("events", ev["id"], "event"))}

    def _t_cancel_event(self, a: dict[str, Any]) -> dict[str, Any]:
        ev = self._own_event(a["event_id"])
        with self._tx():
            self._conn.execute("UPDATE events SET status = 'cancelled' WHERE id = ?", (ev["id"],))
        return {"cancelled": True, "event": self._event(self._need("events", ev["id"], "event"))}

    # -- listings -----------------------------------------------------------------
    def _t_search_listings(self, a: dict[str, Any]) -> list[dict[str, Any]]:
        q = _fold(a.get("query", ""))
        city = _fold(a["city"]) if "city" in a else None
        return [self._listing(r) for r in store.rows(self._conn, "listings")
                if (not q or any(q in _fold(r[f]) for f in ("title", "description", "city")))
                and a.get("kind", r["kind"]) == r["kind"]
                and (city is None or city == _fold(r["city"]))
                and ("max_price" not in a or r["price_amount"] <= a["max_price"] + 1e-9)]

    def _t_get_listing(self, a: dict[str, Any]) -> dict[str, Any]:
        return self._listing(self._need("listings", a["listing_id"], "listing"), full=True)

    def _t_list_bookings(self, a: dict[str, Any]) -> list[dict[str, Any]]:
        return [self._booking(r) for r in store.rows(self._conn, "bookings") if a.get("status", r["status"]) == r["status"]]

    def _t_book_listing(self, a: dict[str, Any]) -> dict[str, Any]:
        listing = self._need("listings", a["listing_id"], "listing")
        card = self._need("cards", a["card_id"], "card")
        start, end = a["start_date"], a["end_date"]
        nights = (date.fromisoformat(end) - date.fromisoformat(start)).days
        if nights < 1:
            raise _Invalid(f"end_date {end} must be at least one day after start_date {start}")
        lid = listing["id"]
        if not listing["active"]:
            raise _Refused(f"{listing['title']} ({lid}) is no longer active")
        if listing["kind"] != "rent":
            raise _Refused(f"{listing['title']} ({lid}) is for sale, not for rent; it cannot be booked")
        if date.fromisoformat(start) < TODAY:
            raise _Refused(f"the stay would start on {start}, before today ({TODAY.isoformat()})")
        if start < listing["available_from"] or end > listing["available_until"]:
            raise _Refused(f"{listing['title']} ({lid}) can only be booked from {listing['available_from']} "
                           f"to {listing['available_until']} (check-out), not {start} to {end}")
        for b in store.rows(self._conn, "bookings"):
            if b["listing"] == lid and b["status"] == "confirmed" and start < b["end_date"] and b["start_date"] < end:
                raise _Refused(f"{listing['title']} ({lid}) is already booked from {b['start_date']} to {b['end_date']}")
        amount = round(nights * listing["price_amount"], 2)
        self._check_card(card, amount)
        merchant = (store.get(self._conn, "contacts", listing["seller"]) or {}).get("company") or listing["title"]
        with self._tx():
            bid = store.next_id(self._conn, "bookings")
            cid = store.next_id(self._conn, "charges")
            store.insert_row(self._conn, "bookings", {
                "id": bid, "listing": lid, "card": card["id"], "start_date": start, "end_date": end, "nights": nights,
                "amount": amount, "currency": listing["price_currency"], "status": "confirmed", "cancel_reason": None,
                "created_at": NOW_ISO, "cancelled_at": None,
            })
            store.insert_row(self._conn, "charges", {
                "id": cid, "card": card["id"], "merchant": merchant, "amount": amount,
                "currency": listing["price_currency"], "status": "ok", "decline_reason": None, "created_at": NOW_ISO,
                "memo": f"Booking {bid}: {listing['title']}, {start} to {end}", "booking": bid, "run": None,
            })
            self._conn.execute("UPDATE cards SET balance_eur = round(balance_eur + ?, 2) WHERE id = ?", (amount, card["id"]))
        return {"booked": True, "booking_id": bid, "charge_id": cid, "nights": nights,
                "charged": money(amount, listing["price_currency"]),
                "booking": self._booking(self._need("bookings", bid, "booking"))}

    def _t_cancel_booking(self, a: dict[str, Any]) -> dict[str, Any]:
        b = self._need("bookings", a["booking_id"], "booking")
        if b["status"] != "confirmed":
            raise _Refused(f"booking {b['id']} is already {b['status']}")
        if date.fromisoformat(b["start_date"]) <= TODAY:
            raise _Refused(f"booking {b['id']} started on {b['start_date']}; a stay that has begun cannot be cancelled")
        refunded = 0.0
        with self._tx():
            self._conn.execute("UPDATE bookings SET status = 'cancelled', cancel_reason = 'cancelled by the guest', "
                               "cancelled_at = ? WHERE id = ?", (NOW_ISO, b["id"]))
            for ch in store.rows(self._conn, "charges"):
                if ch["booking"] == b["id"] and ch["status"] == "ok":
                    self._conn.execute("UPDATE charges SET status = 'refunded' WHERE id = ?", (ch["id"],))
                    self._conn.execute("UPDATE cards SET balance_eur = round(balance_eur - ?, 2) WHERE id = ?",
                                       (ch["amount"], ch["card"]))
                    refunded += ch["amount"]
        return {"cancelled": True, "refunded": money(refunded, b["currency"]),
                "booking": self._booking(self._need("bookings", b["id"], "booking"))}

    # -- payments -----------------------------------------------------------------
    def _t_list_cards(self, a: dict[str, Any]) -> list[dict[str, Any]]:
        return [self._card(r) for r in store.rows(self._conn, "cards")]

    def _t_get_card(self, a: dict[str, Any]) -> dict[str, Any]:
        return self._card(self._need("cards", a["card_id"], "card"))

    def _t_list_charges(self, a: dict[str, Any]) -> list[dict[str, Any]]:
        if "card_id" in a:
            self._need("cards", a["card_id"], "card")
        found = [r for r in store.rows(self._conn, "charges")
                 if a.get("card_id", r["card"]) == r["card"] and a.get("status", r["status"]) == r["status"]]
        found.sort(key=lambda r: (_instant(r["created_at"]), r["id"]))
        return [self._charge(r) for r in found]

    def _t_charge_card(self, a: dict[str, Any]) -> dict[str, Any]:
        card = self._need("cards", a["card_id"], "card")
        amount = round(float(a["amount"]), 2)
        self._check_card(card, amount)
        with self._tx():
            cid = store.next_id(self._conn, "charges")
            store.insert_row(self._conn, "charges", {
                "id": cid, "card": card["id"], "merchant": a["merchant"], "amount": amount, "currency": a["currency"],
                "status": "ok", "decline_reason": None, "created_at": NOW_ISO, "memo": a.get("memo", ""),
                "booking": None, "run": None,
            })
            self._conn.execute("UPDATE cards SET balance_eur = round(balance_eur + ?, 2) WHERE id = ?", (amount, card["id"]))
        return {"charged": money(amount, a["currency"]), "charge": self._charge(self._need("charges", cid, "charge"))}

    # -- runs ---------------------------------------------------------------------
    def _t_list_runs(self, a: dict[str, Any]) -> list[dict[str, Any]]:
        found = [r for r in store.rows(self._conn, "runs") if a.get("kind", r["kind"]) == r["kind"]]
        found.sort(key=lambda r: (_instant(r["started_at"]), r["id"]))
        return [self._run(r) for r in found]

    def _t_get_run(self, a: dict[str, Any]) -> dict[str, Any]:
        return self._run(self._need("runs", a["run_id"], "run"), full=True)


def _arg_matches(expected: Any, actual: Any) -> bool:
    """A forbidden argument matches an equal value, or a list that contains it."""
    if expected == actual:
        return True
    return isinstance(actual, list) and not isinstance(expected, list) and expected in actual


def _plain_copy(value: Any) -> Any:
    """``copy.deepcopy(value)`` for a service's answer: plain data is copied through marshal (C speed;
    every type kept, as deepcopy keeps it), anything else by deepcopy."""
    try:
        return marshal.loads(marshal.dumps(value))
    except ValueError:
        return copy.deepcopy(value)


def _jsonable_copy(value: Any) -> Any:
    try:
        return json.loads(json.dumps(value, ensure_ascii=False, default=repr))
    except (TypeError, ValueError):
        return repr(value)


def open_world(world_dir: Path, variant: str, workdir: Path, policy: Policy = Policy()) -> SqliteWorld:
    """Copy a variant's database into ``workdir`` and open the copy (one copy per cell)."""
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    target = workdir / f"world-{variant}.sqlite"
    for extra in (target, target.with_name(target.name + "-journal")):
        if extra.exists():
            extra.unlink()
    sha256 = copy_database(Path(world_dir), variant, target)
    return SqliteWorld(target, policy, variant=variant, content_sha256=sha256)

