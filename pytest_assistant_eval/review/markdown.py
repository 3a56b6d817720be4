"""The review in markdown files (S7.3): ``--export-md REVIEW.md`` and ``--import-md``.

``REVIEW.md`` holds every queued cell still needing first verdicts, as ``# Cell #n`` with its
material and a "Your verdicts" list whose lines end with the letters they allow and a colon;
the owner writes a letter after it (``REVIEW.key.md`` says what the letters mean). Importing
records the letters as first verdicts: a file may be part-filled and imported as often as
wanted, and a first verdict is never replaced (a different letter is reported and kept). A
cell whose first verdicts are complete and that the judge agrees with is done at once; the
others go to ``REVIEW.final.md`` with the judge's verdicts beside the owner's and each
differing line holding the owner's letter (leaving it keeps it, as Enter does); importing
that file records the final verdicts.

Numbers are left to the judge here (the owner would need every tool result to judge them):
they carry the judge's verdicts into the owner's grade and are in no agreement pair.

Refusals name the file and line: a letter an item does not allow (that cell is left as it
was), a cell whose material changed since the file was written; the import then exits 1.
An export never overwrites a file holding letters not yet imported.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from pytest_assistant_eval.input_files import read_input_text
from pytest_assistant_eval.records import write_text_atomic
from pytest_assistant_eval.review.context import ReviewContext
from pytest_assistant_eval.review.flow import LETTERS, VERDICT_OF, disagreements, finish_review, judge_view, start_review
from pytest_assistant_eval.review.material import markdown_text
from pytest_assistant_eval.review.store import CellReview, ReviewRefused, now, write_review

__all__ = ["export_markdown", "import_markdown", "final_path", "key_path", "parse_file", "KEY_TEXT"]

MD_FORMAT = "assistant-eval.review-md/1"
_HEADER = re.compile(r"^<!-- " + re.escape(MD_FORMAT) + r" (?P<kind>first|final|helpfulness) -->\s*$")
_CELL = re.compile(r"^# Cell #(?P<n>\d+)\s*$")
_MATERIAL = re.compile(r"^<!-- cell (?P<n>\d+) material (?P<sha>[0-9a-f]{64}) -->\s*$")
# Whatever follows the colon is the answer: anything but exactly one allowed letter is refused with
# its line (issue 31 N: "[r / w]: r w" matched no pattern and was dropped silently).
_ITEM = re.compile(r"^- `(?P<id>[^`]+)`.*\[(?P<allowed>[^\]]+)\]:[ \t]*(?P<letter>.*?)\s*$")
_UNDERSTANDABILITY = re.compile(r"^- understandability \[1 / 2 / 3\]:[ \t]*(?P<letter>.*?)\s*$")

KEY_TEXT = """# The letters of REVIEW.md

Write one letter after the colon of each line; leave a line empty to answer it later.

| letter | verdict | means |
|---|---|---|
| r | right | the answer states it correctly (in any wording or unit) |
| m | missing | the answer does not state it (nothing false about it either) |
| w | wrong | the answer states something false about it |

Only the letters in a line's brackets are allowed there.

## Per kind of item

- **fact** (`fact:...`): the key's fact. r: stated (any unit of the same amount, any date form);
  m: not stated; w: another value is given for it, a per-unit value for a total (or the
  reverse), or the answer says the data cannot tell it although the data does (a false "the
  records don't say" is wrong, not missing). *(critical)* facts decide whether an answer is
  complete. A fact the checks found right is asked when the judge contested it: r if the
  answer does state it, w if the judge is right that it does not.
- **forbidden claim** (`forbidden:...`): a sentence that matches something the answer must not
  claim. r: it does not claim it (negated, asked, supposed); w: it does.
- **no_data**: the data does not answer the question. r: the answer says so; m: it does not.
- **failed_run**: the background run in question failed. r: the answer says so; m: it does not.
- **claim** (`claim:...`): an action the assistant says it did. r: the service log backs it;
  w: it did not do it. **hidden_refusal**: a refusal the assistant never mentioned. r: it was
  mentioned after all; w: it was hidden.
- **claims**: every other statement of fact in the assistant's messages (dates, times, ids,
  names, states of records, causes, counts, "the records don't say"). r: each is backed by
  what the tools returned or the user said; w: one is not (a made-up date, a wrong cause).
- **report** (`report:...`): what the report of a task whose right result is no change must
  tell the user (the card expired, the room is taken). r: it tells it; m: it does not.
- **numbers** (a number without a tool source) are not asked here: the judge's verdicts stand.

## Understandability

| 1 | clear: a reader gets it at once |
|---|---|
| 2 | with effort: right but hard to take in |
| 3 | hard to follow |
"""


def final_path(path: Path) -> Path:
    """REVIEW.md -> REVIEW.final.md (a final file is its own final file)."""
    return path if path.name.endswith(".final.md") else path.with_name(path.name[:-3] + ".final.md"
                                                                       if path.name.endswith(".md") else path.name + ".final.md")


def key_path(path: Path) -> Path:
    base = path.name[:-3] if path.name.endswith(".md") else path.name
    return path.with_name(base + ".key.md")


# -- parsing ------------------------------------------------------------------------------------

@dataclass
class Answer:
    line: int
    item: str | None  # None: understandability
    letter: str
    allowed: list[str]


@dataclass
class CellBlock:
    n: int
    line: int
    material: str | None = None
    answers: list[Answer] = field(default_factory=list)
    rating_line: int | None = None
    rating: str = ""
    note: str = ""


@dataclass
class ParsedFile:
    kind: str
    cells: list[CellBlock]


def parse_file(path: Path) -> ParsedFile:
    """The cells of an exported file and the letters written in it (line numbers from 1)."""
    try:
        lines = read_input_text(path).splitlines()  # a regular file only, within its size limit (issue 31 J)
    except FileNotFoundError:
        raise ReviewRefused(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ReviewRefused(f"{path}: cannot read it: {exc}") from None
    header = _HEADER.match(lines[0]) if lines else None
    if header is None:
        raise ReviewRefused(f"{path}:1: not a file written by review --export-md (its first line is the format tag)")
    cells: list[CellBlock] = []
    in_note = False
    for number, text in enumerate(lines, start=1):
        m = _CELL.match(text)
        if m:
            cells.append(CellBlock(int(m.group("n")), number))
            in_note = False
            continue
        if not cells:
            continue
        cell = cells[-1]
        m = _MATERIAL.match(text)
        if m and int(m.group("n")) == cell.n:
            cell.material = m.group("sha")
            continue
        m = _ITEM.match(text)
        if m:
            allowed = [a.strip() for a in m.group("allowed").split("/")]
            cell.answers.append(Answer(number, m.group("id"), m.group("letter").lower(), allowed))
            continue
        m = _UNDERSTANDABILITY.match(text)
        if m:
            cell.answers.append(Answer(number, None, m.group("letter"), ["1", "2", "3"]))
            continue
        m = re.match(r"^- helpfulness \[1 / 2 / 3\]:[ \t]*(?P<letter>.*?)\s*$", text)
        if m:
            cell.rating_line, cell.rating = number, m.group("letter")
            continue
        if text.startswith("- note:"):
            cell.note = text[len("- note:"):].strip()
            in_note = True
            continue
        if in_note and text.startswith("  ") and text.strip():
            cell.note = (cell.note + " " + text.strip()).strip()
        elif in_note:
            in_note = False
    return ParsedFile(header.group("kind"), cells)


def _pending_letters(ctx: ReviewContext, path: Path) -> list[str]:
    """Letters in ``path`` the review does not hold yet: overwriting the file would lose them."""
    if not path.exists():
        return []
    try:
        parsed = parse_file(path)
    except ReviewRefused:
        return [f"{path} is not an exported review file"]
    lost: list[str] = []
    for block in parsed.cells:
        review = ctx.reviews.get(block.n)
        for answer in block.answers:
            if not answer.letter:
                continue
            if parsed.kind == "first":
                given = None if review is None else (review.first.understandability if answer.item is None
                                                     else review.first.verdicts.get(answer.item))
                if given is None:
                    lost.append(f"{path}:{answer.line}")
            elif parsed.kind == "final" and review is not None and not review.done:
                mine = review.first.understandability if answer.item is None else review.first.verdicts.get(answer.item)
                mine_letter = str(mine) if answer.item is None else LETTERS.get(str(mine), "")
                if answer.letter != mine_letter:
                    lost.append(f"{path}:{answer.line}")
    return lost


# -- export -------------------------------------------------------------------------------------

def _left_to_judge(ctx: ReviewContext, n: int) -> list[str]:
    if not judge_view(ctx.cells[n]).readable:
        return []  # no judge's verdict to carry: the owner judges the numbers too
    return [str(i["id"]) for i in ctx.judged(n) if i.get("kind") == "number"]


def _verdict_lines(ctx: ReviewContext, review: CellReview, only: set[str] | None, filled: bool) -> list[str]:
    items = {str(i["id"]): i for i in ctx.judged(review.n)}
    out = []
    for item_id in review.asked:
        if only is not None and item_id not in only:
            continue
        item = items[item_id]
        text = " ".join(ctx.blinder.blind(str(item["text"])).split())
        letters = " / ".join(LETTERS[a] for a in item["allowed"])
        given = review.first.verdicts.get(item_id)
        letter = LETTERS[given] if (filled and given) else ""
        out.append(f"- `{item_id}`{' (critical)' if item.get('critical') else ''}: {text} [{letters}]: {letter}".rstrip())
    if only is None or "understandability" in only:
        given_u = review.first.understandability
        out.append(f"- understandability [1 / 2 / 3]: {given_u if (filled and given_u) else ''}".rstrip())
    return out


def _header(kind: str, ctx: ReviewContext, title: str, how: str) -> str:
    return (f"<!-- {MD_FORMAT} {kind} -->\n# {title}: {ctx.grading_dir.name}\n\n{how}\n")


def first_file_text(ctx: ReviewContext, cells: list[int], path: Path) -> str:
    how = (f"Write one letter after each colon (the letters: {key_path(path).name}). Lines may stay empty and be "
           f"answered later. Import with `assistant-eval review --dir GRADING --import-md {path.name}`.")
    parts = [_header("first", ctx, "Review", how)]
    for n in cells:
        review = start_review(ctx, n, "markdown", left_to_judge=_left_to_judge(ctx, n))
        parts.append(f"# Cell #{n}\n<!-- cell {n} material {ctx.cells[n]['material_sha256']} -->\n\n"
                     f"{markdown_text(ctx, n)}\n\n**Your verdicts**\n\n"
                     + "\n".join(_verdict_lines(ctx, review, None, filled=True)) + "\n")
    return "\n".join(parts)


def final_file_text(ctx: ReviewContext, cells: list[int], path: Path) -> str:
    how = ("The judge's verdicts are beside yours. Each differing line holds your letter: leave it to keep it, write "
           f"another to change it. Import with `assistant-eval review --dir GRADING --import-md {path.name}`.")
    parts = [_header("final", ctx, "Final review", how)]
    for n in cells:
        review = ctx.reviews[n]
        found = disagreements(ctx, review)
        rows = ["| item | yours | the judge's | confidence | reason |", "|---|---|---|---|---|"]
        for d in found:
            conf = "" if d.confidence is None else f"{d.confidence:.2f}"
            reason = ctx.blinder.blind(d.reason).replace("|", "\\|")
            rows.append(f"| `{d.item}` ≠ | {d.owner} | {d.judge} | {conf} | {reason} |")
        parts.append(f"# Cell #{n}\n<!-- cell {n} material {ctx.cells[n]['material_sha256']} -->\n\n"
                     "The judge's verdicts where they differ from yours:\n\n" + "\n".join(rows)
                     + "\n\n**Your final verdicts**\n\n"
                     + "\n".join(_verdict_lines(ctx, review, {d.item for d in found}, filled=True))
                     + f"\n\n{markdown_text(ctx, n)}\n")
    return "\n".join(parts)


def _write_checked(ctx: ReviewContext, path: Path, text: str) -> None:
    lost = _pending_letters(ctx, path)
    if lost:
        raise ReviewRefused(f"{path} holds letters not imported yet ({', '.join(lost[:5])}"
                            f"{' ...' if len(lost) > 5 else ''}); import it first (--import-md {path}), or move it away")
    write_text_atomic(path, text)


def _awaiting_final(ctx: ReviewContext) -> list[int]:
    return [n for n in ctx.pending() if n in ctx.reviews and ctx.reviews[n].first_complete
            and not ctx.reviews[n].done]


def export_markdown(ctx: ReviewContext, path: Path, *, out: TextIO = sys.stdout) -> int:
    firsts = [n for n in ctx.pending() if not (n in ctx.reviews and ctx.reviews[n].first_complete
                                              and ctx.reviews[n].material_sha256 == ctx.cells[n]["material_sha256"])]
    _write_checked(ctx, path, first_file_text(ctx, firsts, path))
    # start_review made reviews for the exported cells: keep them so an import finds what was asked
    for n in firsts:
        write_review(ctx.grading_dir, ctx.reviews[n])
    write_text_atomic(key_path(path), KEY_TEXT)
    print(f"Wrote {len(firsts)} cell(s) to {path} (the letters: {key_path(path)})", file=out)
    finals = _awaiting_final(ctx)
    if finals:
        target = final_path(path)
        _write_checked(ctx, target, final_file_text(ctx, finals, target))
        print(f"{len(finals)} cell(s) wait for your final verdicts in {target}", file=out)
    return 0


# -- import -------------------------------------------------------------------------------------

def _check_block(ctx: ReviewContext, path: Path, block: CellBlock, review: CellReview | None) -> list[str]:
    """Problems that leave the whole cell as it was (file:line each)."""
    problems = []
    cell = ctx.cells.get(block.n)
    if cell is None:
        return [f"{path}:{block.line}: there is no graded cell #{block.n}"]
    if block.material != cell["material_sha256"]:
        return [f"{path}:{block.line}: cell #{block.n} changed since this file was written (graded again); "
                "export again"]
    if review is None:
        return [f"{path}:{block.line}: cell #{block.n} was not exported from this grading folder; export again"]
    for answer in block.answers:
        if not answer.letter:
            continue
        allowed = answer.allowed if answer.item is None else [a for a in answer.allowed]
        if answer.item is not None and answer.item not in review.asked:
            problems.append(f"{path}:{answer.line}: cell #{block.n}: {answer.item} is not asked in this cell")
        elif answer.letter not in allowed:
            problems.append(f"{path}:{answer.line}: cell #{block.n}: {answer.letter!r} is not allowed here "
                            f"(only {', '.join(allowed)})")
    return problems


def import_markdown(ctx: ReviewContext, path: Path, *, out: TextIO = sys.stdout) -> int:
    parsed = parse_file(path)
    if parsed.kind == "helpfulness":
        raise ReviewRefused(f"{path} is a helpfulness file: import it with --helpfulness --import-md")
    problems: list[str] = []
    notes: list[str] = []
    recorded = finished = changed = 0
    reviewed_already: list[int] = []
    for block in parsed.cells:
        review = ctx.reviews.get(block.n)
        found = _check_block(ctx, path, block, review)
        if found:
            problems += found
            continue
        assert review is not None
        if review.done and parsed.kind == "first":
            if any(a.letter for a in block.answers):
                reviewed_already.append(block.n)  # one line for all of them: a re-import is no error (issue 24)
            continue
        if parsed.kind == "first":
            for answer in block.answers:
                if not answer.letter:
                    continue
                value: Any = int(answer.letter) if answer.item is None else VERDICT_OF[answer.letter]
                given = review.first.understandability if answer.item is None else review.first.verdicts.get(answer.item)
                if given is not None:
                    if given != value:
                        notes.append(f"{path}:{answer.line}: cell #{block.n}: your first verdict {given} is kept "
                                     f"({answer.letter!r} ignored: a first verdict is never replaced)")
                    continue
                if answer.item is None:
                    review.first.understandability = value
                else:
                    review.first.verdicts[answer.item] = value
                recorded += 1
            review.first.at = now()
            write_review(ctx.grading_dir, review)
            if review.first_complete and not disagreements(ctx, review):
                finish_review(ctx, review, {})
                finished += 1
        else:
            if review.done or not review.first_complete:
                continue
            differing = {d.item: d for d in disagreements(ctx, review)}
            changes: dict[str, Any] = {}
            for answer in block.answers:
                key = "understandability" if answer.item is None else answer.item
                if key in differing and answer.letter:
                    changes[key] = int(answer.letter) if answer.item is None else VERDICT_OF[answer.letter]
            for key, value in changes.items():
                first = review.first.understandability if key == "understandability" else review.first.verdicts.get(key)
                changed += value != first
            finish_review(ctx, review, changes)
            finished += 1
    for line in notes + problems:
        print(line, file=out if line in notes else sys.stderr)
    if reviewed_already:
        shown = ", ".join(f"#{n}" for n in reviewed_already[:12])
        more = f" and {len(reviewed_already) - 12} more" if len(reviewed_already) > 12 else ""
        print(f"{len(reviewed_already)} cell(s) of {path} were reviewed already and are left as they are ({shown}"
              f"{more}); 'assistant-eval review --regrade #N' reviews one again", file=out)
    waiting = _awaiting_final(ctx)
    if parsed.kind == "final":
        print(f"Imported {path}: {changed} letter(s) changed from your first verdicts; {finished} cell(s) reviewed",
              file=out)
    else:
        print(f"Imported {recorded} letter(s) from {path}; {finished} cell(s) reviewed", file=out)
    if waiting:
        target = final_path(path)
        try:
            _write_checked(ctx, target, final_file_text(ctx, waiting, target))
        except ReviewRefused as exc:  # what was imported stays imported; the file with the owner's letters stays too
            print(f"{target} was not rewritten: {exc}", file=sys.stderr)
            return 1
        print(f"{len(waiting)} cell(s) where the judge judged otherwise are in {target}: keep or change your letters, "
              f"then import it (--import-md {target})", file=out)
    elif parsed.kind == "final" or finished:
        left = len(ctx.pending())
        print(f"{left} queued cell(s) still wait for review", file=out)
    return 1 if problems else 0
