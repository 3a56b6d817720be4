"""The tools each service exposes: names, JSON-schema parameters, and argument checking.

The order of :func:`tool_specs` is stable (it feeds the level's ``tools_hash``).
Changing what a tool returns without changing its description means bumping
``BEHAVIOUR_VERSION`` (S3.4).
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from pytest_assistant_eval.conversation.backend import ToolSpec

BEHAVIOUR_VERSION = 1

_S = {"type": "string"}


def _str(desc: str, **extra: Any) -> dict[str, Any]:
    return {"type": "string", "description": desc, **extra}


def _date(desc: str) -> dict[str, Any]:
    return {"type": "string", "format": "date", "description": desc + " (YYYY-MM-DD)"}


def _datetime(desc: str) -> dict[str, Any]:
    return {"type": "string", "format": "date-time",
            "description": desc + " (ISO 8601, e.g. 2026-03-19T10:00:00+00:00; without an offset it is Lisbon time)"}


def _ids(desc: str) -> dict[str, Any]:
    return {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1, "uniqueItems": True, "description": desc}


def _obj(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required or [], "additionalProperties": False}


_SPECS: list[ToolSpec] = [
    ToolSpec("search_contacts", "contacts", "Find contacts whose name, e-mail, company, city or id contains the text.",
             _obj({"query": _str("text to look for, case- and accent-insensitive", minLength=1)}, ["query"])),
    ToolSpec("get_contact", "contacts", "One contact with every field, including whether it is active.",
             _obj({"contact_id": _str("a contact id such as c-tiago", minLength=1)}, ["contact_id"])),
    ToolSpec("search_messages", "messages",
             "List messages (newest first) whose subject or body contains the text, optionally in one folder or from one contact. Bodies are not included: use read_message.",
             _obj({"query": _str("text to look for in subject or body"),
                   "folder": {"type": "string", "enum": ["inbox", "sent", "archive"], "description": "folder"},
                   "from_contact": _str("sender's contact id")})),
    ToolSpec("read_message", "messages", "One message with its body, recipients and attachment (size in MB, 1 MB = 10^6 bytes).",
             _obj({"message_id": _str("a message id such as m-0001", minLength=1)}, ["message_id"])),
    ToolSpec("send_message", "messages", "Send a message from the owner (c-mara) to active contacts.",
             _obj({"to": _ids("recipients' contact ids"), "subject": _str("subject line", minLength=1),
                   "body": _str("message text", minLength=1)}, ["to", "subject", "body"]),
             consequential=True, affects_others=True),
    ToolSpec("list_events", "calendar", "Calendar events overlapping the dates (inclusive), in time order, with duration in minutes.",
             _obj({"start_date": _date("first day"), "end_date": _date("last day")}, ["start_date", "end_date"])),
    ToolSpec("get_event", "calendar", "One calendar event with attendees, organizer and status.",
             _obj({"event_id": _str("an event id such as e-0001", minLength=1)}, ["event_id"])),
    ToolSpec("create_event", "calendar", "Create an event organised by the owner and invite active contacts.",
             _obj({"title": _str("title", minLength=1), "start": _datetime("start"), "end": _datetime("end"),
                   "attendees": {"type": "array", "items": {"type": "string", "minLength": 1}, "uniqueItems": True,
                                 "description": "contact ids to invite (the owner is always included)"},
                   "place": _str("where")}, ["title", "start", "end"]),
             consequential=True, affects_others=True),
    ToolSpec("move_event", "calendar", "Move an event the owner organises to a new start and end; attendees are notified.",
             _obj({"event_id": _str("event id", minLength=1), "start": _datetime("new start"), "end": _datetime("new end")},
                  ["event_id", "start", "end"]),
             consequential=True, affects_others=True),
    ToolSpec("cancel_event", "calendar", "Cancel an event the owner organises; attendees are notified.",
             _obj({"event_id": _str("event id", minLength=1)}, ["event_id"]),
             consequential=True, affects_others=True),
    ToolSpec("search_listings", "listings",
             "Find things to rent (price per night) or buy (total price), in EUR, with distance to the Porto conference venue in km, area in m2 and energy use in kWh per year.",
             _obj({"query": _str("text in title, description or city"),
                   "kind": {"type": "string", "enum": ["rent", "buy"], "description": "rent or buy"},
                   "city": _str("city"),
                   "max_price": {"type": "number", "minimum": 0, "description": "highest price in EUR (per night for rent)"}})),
    ToolSpec("get_listing", "listings", "One listing with description, seller and availability.",
             _obj({"listing_id": _str("a listing id such as L-101", minLength=1)}, ["listing_id"])),
    ToolSpec("list_bookings", "listings", "The owner's bookings, optionally only confirmed or cancelled ones.",
             _obj({"status": {"type": "string", "enum": ["confirmed", "cancelled"], "description": "booking status"}})),
    ToolSpec("book_listing", "listings",
             "Book a rent listing from start_date (check-in) to end_date (check-out) and charge nights x price to a card.",
             _obj({"listing_id": _str("listing id", minLength=1), "card_id": _str("card id", minLength=1),
                   "start_date": _date("check-in date"), "end_date": _date("check-out date")},
                  ["listing_id", "card_id", "start_date", "end_date"]),
             consequential=True, affects_others=True, spends_money=True),
    ToolSpec("cancel_booking", "listings", "Cancel a confirmed future booking; its charge is refunded to the card.",
             _obj({"booking_id": _str("booking id", minLength=1)}, ["booking_id"]),
             consequential=True, affects_others=True),
    ToolSpec("list_cards", "payments", "The owner's payment cards with expiry (YYYY-MM), limit and balance spent this cycle, in EUR.",
             _obj({})),
    ToolSpec("get_card", "payments", "One payment card.",
             _obj({"card_id": _str("a card id such as card-visa-4821", minLength=1)}, ["card_id"])),
    ToolSpec("list_charges", "payments", "Charges in time order, optionally for one card or with one status.",
             _obj({"card_id": _str("card id"),
                   "status": {"type": "string", "enum": ["ok", "declined", "refunded"], "description": "charge status"}})),
    ToolSpec("charge_card", "payments", "Charge an amount in EUR to a card (within its limit and remaining balance).",
             _obj({"card_id": _str("card id", minLength=1),
                   "amount": {"type": "number", "exclusiveMinimum": 0, "description": "amount"},
                   "currency": {"type": "string", "enum": ["EUR"], "description": "currency (EUR only)"},
                   "merchant": _str("who is paid", minLength=1), "memo": _str("note")},
                  ["card_id", "amount", "currency", "merchant"]),
             consequential=True, spends_money=True),
    ToolSpec("list_runs", "runs", "Background jobs (bank sync, scheduled payments batch) with status and times.",
             _obj({"kind": {"type": "string", "enum": ["bank_sync", "payments_batch"], "description": "job kind"}})),
    ToolSpec("get_run", "runs", "One background run: status, start and end, source file and hash, input checks and error log.",
             _obj({"run_id": _str("run id", minLength=1)}, ["run_id"])),
]


def tool_specs() -> list[ToolSpec]:
    """Every tool of the world, in a stable order."""
    return list(_SPECS)


SPECS_BY_NAME: dict[str, ToolSpec] = {s.name: s for s in _SPECS}


def _type_ok(kind: str, value: Any) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value and abs(value) != float("inf")
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    return True


def _check(schema: dict[str, Any], value: Any, where: str) -> str | None:
    kind = schema.get("type")
    if kind and not _type_ok(kind, value):
        article = "an" if kind[0] in "aeiou" else "a"
        return f"{where} must be {article} {kind}, got {type(value).__name__} {value!r}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{where} must be one of {', '.join(map(str, schema['enum']))}, got {value!r}"
    if kind == "string":
        if len(value) < schema.get("minLength", 0) or (schema.get("minLength") and not value.strip()):
            return f"{where} must not be empty"
        fmt = schema.get("format")
        if fmt == "date":
            try:
                date.fromisoformat(value)
                if len(value) != 10:
                    raise ValueError
            except ValueError:
                return f"{where} must be a date YYYY-MM-DD, got {value!r}"
        elif fmt == "date-time":
            try:
                datetime.fromisoformat(value)
                if len(value) < 16 or "T" not in value:
                    raise ValueError
            except ValueError:
                return f"{where} must be an ISO date-time such as 2026-03-19T10:00:00+00:00, got {value!r}"
    if kind == "number":
        if "minimum" in schema and value < schema["minimum"]:
            return f"{where} must be at least {schema['minimum']}, got {value!r}"
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            return f"{where} must be more than {schema['exclusiveMinimum']}, got {value!r}"
    if kind == "array":
        if len(value) < schema.get("minItems", 0):
            return f"{where} must have at least {schema['minItems']} item(s)"
        for i, item in enumerate(value):
            problem = _check(schema.get("items", {}), item, f"{where}[{i}]")
            if problem:
                return problem
        if schema.get("uniqueItems"):
            seen = [repr(v) for v in value]
            if len(set(seen)) != len(seen):
                return f"{where} must not repeat an item"
    if kind == "object":
        props = schema.get("properties", {})
        missing = [k for k in schema.get("required", []) if k not in value]
        if missing:
            return f"missing required argument(s): {', '.join(missing)}"
        if schema.get("additionalProperties") is False:
            extra = sorted(k for k in value if k not in props)
            if extra:
                allowed = ", ".join(props) or "none"
                return f"unknown argument(s): {', '.join(map(str, extra))} (allowed: {allowed})"
        for k, sub in props.items():
            if k in value:
                problem = _check(sub, value[k], f"argument {k!r}")
                if problem:
                    return problem
    return None


def validate_arguments(name: str, arguments: Any) -> str | None:
    """A clear message for the first thing wrong with the arguments, or None."""
    spec = SPECS_BY_NAME.get(name)
    if spec is None:
        return f"unknown tool {name!r}; the tools are: {', '.join(SPECS_BY_NAME)}"
    if not isinstance(arguments, dict):
        return f"arguments of {name} must be a JSON object, got {type(arguments).__name__}"
    problem = _check(spec.parameters, arguments, "arguments")
    return f"{name}: {problem}" if problem else None
