"""``assistant-eval review --dir GRADING``: the review in the terminal (S7.2).

Per queued cell the owner reads the material and gives, blind, a verdict per judged item
(only the letters the item allows) and the understandability; only then are the judge's
verdicts, confidences and reasons shown, each disagreement marked, and for each one Enter
keeps the owner's verdict and a letter changes it. Every answer is written at once
(``store.write_review``): q, Ctrl-C, a closed terminal or a killed process keep everything
given, and the next review continues where it stopped. Why a cell was queued is never shown.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TextIO

from pytest_assistant_eval.console import visible
from pytest_assistant_eval.review.context import ReviewContext
from pytest_assistant_eval.review.flow import (
    LETTERS,
    VERDICT_OF,
    disagreements,
    finish_review,
    judge_view,
    save_first,
    start_review,
)
from pytest_assistant_eval.review.material import item_line, terminal_text
from pytest_assistant_eval.review.store import CellReview

__all__ = ["Quit", "TerminalReview", "DEFAULT_SITTING"]

DEFAULT_SITTING = 37
UNDERSTANDABILITY = "understandability: 1 clear, 2 with effort, 3 hard to follow"


class Quit(Exception):
    """The owner typed q (or closed the input): stop, keeping every answer already written."""


class TerminalReview:
    """One sitting in the terminal. ``read`` is ``input`` (a test may give another line source)."""

    def __init__(self, ctx: ReviewContext, *, out: TextIO = sys.stdout, read: Callable[[str], str] = input) -> None:
        self.ctx = ctx
        self.out = out
        self._read = read

    def say(self, text: str = "") -> None:
        # A model's answer is shown with its line breaks, every other control visible (issue 31 C).
        print(visible(text), file=self.out, flush=True)

    def ask(self, prompt: str) -> str:
        try:
            answer = self._read(prompt)
        except EOFError:
            raise Quit() from None
        answer = answer.strip().lower()
        if answer == "q":
            raise Quit()
        return answer

    # -- one cell ------------------------------------------------------------------------------
    def _ask_letter(self, prompt: str, allowed: list[str], keep: str | None = None) -> str:
        letters = [LETTERS[a] for a in allowed]
        while True:
            answer = self.ask(prompt)
            if answer == "" and keep is not None:
                return keep
            if answer in letters:
                return VERDICT_OF[answer]
            self.say(f"      only {', '.join(letters)} here" + (" (Enter keeps yours)" if keep else "") + "; q stops")

    def _ask_understandability(self, prompt: str, keep: int | None = None) -> int:
        while True:
            answer = self.ask(prompt)
            if answer == "" and keep is not None:
                return keep
            if answer in ("1", "2", "3"):
                return int(answer)
            self.say("      only 1, 2 or 3 here" + (" (Enter keeps yours)" if keep else "") + "; q stops")

    def first_verdicts(self, review: CellReview) -> None:
        items = {str(i["id"]): i for i in self.ctx.judged(review.n)}
        todo = [i for i in review.asked if i not in review.first.verdicts]
        if review.asked:
            self.say(f"\nYour verdicts ({len(review.asked)} item(s); r right, m missing, w wrong; q stops):")
        for k, item_id in enumerate(review.asked, start=1):
            item = items[item_id]
            allowed = list(item["allowed"])
            if item_id not in todo:
                self.say(f"  {k}. {item_id}: {review.first.verdicts[item_id]} (given earlier)")
                continue
            self.say(f"  {k}. {item_line(item, self.ctx.blinder.blind)}")
            letters = " / ".join(f"{LETTERS[a]} {a}" for a in allowed)
            verdict = self._ask_letter(f"     [{letters}]: ", allowed)
            save_first(self.ctx, review, item_id, verdict)
        if review.first.understandability is None:
            value = self._ask_understandability(f"  {UNDERSTANDABILITY} [1/2/3]: ")
            save_first(self.ctx, review, None, value)

    def compare(self, review: CellReview) -> None:
        """The judge's verdicts beside the owner's, disagreements marked; Enter keeps, a letter changes."""
        view = judge_view(self.ctx.cells[review.n])
        if not view.readable:
            self.say("\nThe judge's reply could not be read: your verdicts are the cell's.")
            finish_review(self.ctx, review, {})
            return
        found = {d.item: d for d in disagreements(self.ctx, review)}
        self.say("\nThe judge's verdicts (yours | the judge's, confidence, reason):")
        width = max([len(i) for i in review.asked] + [len("understandability")])
        for item_id in review.asked:
            judged = view.verdicts.get(item_id) or {}
            mark = "≠" if item_id in found else " "
            conf = judged.get("confidence")
            self.say(f"  {mark} {item_id:<{width}}  {review.first.verdicts[item_id]:<7} | "
                     f"{judged.get('verdict', '–'):<7} {'' if conf is None else f'{conf:.2f}'}  {judged.get('reason', '')}")
        mark = "≠" if "understandability" in found else " "
        self.say(f"  {mark} {'understandability':<{width}}  {review.first.understandability!s:<7} | "
                 f"{view.understandability if view.understandability is not None else '–'}")
        if not found:
            self.say("  The judge agrees with you.")
            finish_review(self.ctx, review, {})
            return
        self.say(f"  {len(found)} disagreement(s): Enter keeps yours, a letter changes it.")
        items = {str(i["id"]): i for i in self.ctx.judged(review.n)}
        changes: dict[str, Any] = {}
        for item_id, d in found.items():
            if item_id == "understandability":
                changes[item_id] = self._ask_understandability(
                    f"  ≠ understandability: yours {d.owner} [Enter keeps; 1/2/3 changes]: ", keep=d.owner)
            else:
                allowed = list(items[item_id]["allowed"])
                letters = "/".join(LETTERS[a] for a in allowed)
                changes[item_id] = self._ask_letter(
                    f"  ≠ {item_id}: yours {d.owner} [Enter keeps; {letters} changes]: ", allowed, keep=d.owner)
        finish_review(self.ctx, review, changes)

    def review_cell(self, n: int, position: str, *, again: bool = False) -> None:
        review = start_review(self.ctx, n, "terminal", again=again)
        self.say(f"\n═══ Cell #{n} ({position}) " + "═" * 60)
        self.say(terminal_text(self.ctx, n))
        self.first_verdicts(review)
        self.compare(review)
        self.say(f"Cell #{n} reviewed: {review.grade['outcome'] if review.grade else '–'}")

    # -- a sitting -----------------------------------------------------------------------------
    def run(self, sitting: int = DEFAULT_SITTING, regrade: int | None = None) -> int:
        """Review up to ``sitting`` cells (0: all); returns how many were finished."""
        done = 0
        try:
            if regrade is not None:
                self.review_cell(regrade, "reviewed again", again=True)
                return 1
            pending = self.ctx.pending()
            if not pending:
                self.say("Nothing waits for review in the queue.")
                return 0
            total = len(pending) if sitting == 0 else min(sitting, len(pending))
            for k, n in enumerate(pending[:total], start=1):
                self.review_cell(n, f"{k} of {total} in this sitting, {len(pending)} in the queue")
                done += 1
        except (Quit, KeyboardInterrupt):
            self.say(f"\nStopped: every answer given is kept ({done} cell(s) finished in this sitting). "
                     "Run review again to continue.")
            return done
        left = len(self.ctx.pending())
        self.say(f"\nSitting done: {done} cell(s) reviewed, {left} left in the queue"
                 + ("; run review again to continue." if left else "."))
        return done
