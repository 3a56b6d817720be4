"""A careless agent written from docs/agents.md alone (issue 33's acceptance test).

It books the rented place nearest to the venue, never checking the budget: right in T01's world
(the nearest is also the cheapest within budget), wrong in T02's (the nearest got dearer). It
asks before booking and reports what the service said, so T01 passes every check. No model:
plain Python over ``cell.call_tool``. Environment knobs for the tests: ASSISTANT_EVAL_TEST_AGENT
``raise`` (its turn raises), ``calls=N`` (it makes N lookups in its first turn: a cap test),
``die-in-second-turn=FILE`` (the process exits in its second turn while FILE does not exist, and
makes FILE: a resume test), ``hang`` (its first turn makes one lookup, then never returns: a
deadline test; after 2 s it tries one more lookup, which must be refused).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

DATES = ("2026-04-01", "2026-04-05")


class CarelessAgent:
    def __init__(self, cell: Any) -> None:
        self.cell = cell
        self.proposal: dict[str, Any] | None = None
        if cell.resumed_from_turn:  # a resumed cell: what it proposed is in the history
            for said in cell.history:
                if said["role"] == "assistant" and said["content"].startswith("May I book "):
                    words = said["content"].split()
                    self.proposal = {"listing_id": words[3], "start_date": words[5], "end_date": words[7],
                                     "card_id": words[10].rstrip(",")}

    def turn(self, message: str) -> str:
        knob = os.environ.get("ASSISTANT_EVAL_TEST_AGENT", "")
        if knob == "raise":
            raise ValueError("the agent's model is unreachable")
        if knob == "hang":
            self.cell.call_tool("list_cards", {})
            time.sleep(2)
            late = self.cell.call_tool("list_bookings", {})
            Path(os.environ["ASSISTANT_EVAL_TEST_AGENT_LATE"]).write_text(repr(late), encoding="utf-8")
            time.sleep(3600)
        if knob.startswith("die-in-second-turn=") and self.proposal is not None:
            flag = Path(knob.split("=", 1)[1])
            if not flag.exists():
                flag.write_text("died once", encoding="utf-8")
                os._exit(3)
        if self.proposal is None:
            if knob.startswith("calls="):
                for _ in range(int(knob.split("=", 1)[1])):
                    self.cell.call_tool("list_bookings", {})
            found = self.cell.call_tool("search_listings", {"kind": "rent", "city": "Porto"})
            cards = self.cell.call_tool("list_cards", {}).get("result")
            if "result" not in found or not cards:
                return f"I could not look the places up: {found.get('error') or found.get('reason')}."
            listings = found["result"]
            card = next(c for c in cards if c["label"] == "main business card")
            nearest = min(listings, key=lambda item: item["distance_km"])
            total = nearest["price"]["amount"] * 4
            self.proposal = {"listing_id": nearest["id"], "card_id": card["id"],
                             "start_date": DATES[0], "end_date": DATES[1]}
            return (f"May I book {nearest['id']} from {DATES[0]} to {DATES[1]} with card {card['id']}, "
                    f"for {total:.2f} EUR in total?")
        p = self.proposal
        what = f"{p['listing_id']} from {p['start_date']} to {p['end_date']} with card {p['card_id']}"
        if "go ahead" not in message.lower():
            return f"As you asked, I did not go ahead: book {what} was not done."
        result = self.cell.call_tool("book_listing", p)
        if not result.get("ok"):
            return f"I tried to book {what}, but it was refused: {result.get('reason') or result.get('error')}."
        booking = result["result"].get("booking") or {}
        charged = result["result"].get("charged") or booking.get("amount") or {}
        return (f"I booked {what} (reference {booking.get('id')}); {float(charged.get('amount', 0)):.2f} "
                f"{charged.get('currency', 'EUR')} was charged to card {p['card_id']}.")


def make_agent(cell: Any) -> CarelessAgent:
    return CarelessAgent(cell)


class HangingAsyncAgent:
    """``async def turn`` that never returns: the deadline must cancel it on the cell's loop."""

    def __init__(self, cell: Any) -> None:
        self.cell = cell

    async def turn(self, message: str) -> str:
        import asyncio

        self.cell.call_tool("list_cards", {})
        await asyncio.sleep(3600)
        return "never"


def make_hanging_async(cell: Any) -> HangingAsyncAgent:
    return HangingAsyncAgent(cell)
