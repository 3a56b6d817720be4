"""The file route (S6.7): the same requests and the same strict check, carried by files.

``export`` writes ``OUT/<n>.request.txt`` (SYSTEM: and USER:, exactly the API request's
texts) for every cell a run would send now, the canary among them, and ``OUT/index.json``
(numbers, files and request hashes; no model, level or results folder). Nothing is written
to the grading folder. A reply left in OUT for a request that changed since is set aside as
``.stale``. ``import_replies`` reads ``OUT/<n>.reply.json`` (the raw reply text) through
the API's parser: a valid reply is recorded with route ``file``; an invalid one gets
``OUT/<n>.retry.request.txt`` (the request, the reply as ASSISTANT:, the problems as USER:),
whose reply ``OUT/<n>.retry.reply.json`` is read by a later import (invalid again: unparsed,
for the owner). So a person, a chat subscription or an agent can be the judge.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pytest_assistant_eval.judging.errors import GradingError
from pytest_assistant_eval.judging.judge import Judgment, from_parsed, retry_messages, reuse, save
from pytest_assistant_eval.judging.reply import parse_reply
from pytest_assistant_eval.judging.request import JudgeRequest
from pytest_assistant_eval.suites.calibration import levels as levels_mod
from pytest_assistant_eval.suites.calibration.cases.model import CaseSet
from pytest_assistant_eval.suites.calibration.grade.model_judge import (
    CANARY_FAILED,
    Context,
    Loaded,
    Prepared,
    canary_request,
    cells_to_grade,
    make_context,
    record_canary,
    record_cell,
    scan_all,
)
from pytest_assistant_eval.judging.options import JudgeOptions
from pytest_assistant_eval.records import RecordError, read_json, write_json_atomic, write_text_atomic

REQUESTS_FORMAT = "assistant-eval.judge-requests/1"
INSTRUCTIONS = (
    "Each <n>.request.txt is one grading request: a SYSTEM: section (the instructions) and a USER: section (the "
    "cell). Answer each as the judge, following the SYSTEM section, and save the raw reply text (the JSON object "
    "alone) as <n>.reply.json in this folder. A reply that fails the check gets <n>.retry.request.txt after the "
    "next import; answer it in <n>.retry.reply.json. Then run the same grade-ai command with --import-replies.")


def _requests(ctx: Context, loaded: Loaded, index: dict[str, Any], grading_dir: Path, changed: bool):
    """(request, prepared-or-None) for the canary and every cell a run would send now."""
    canary = canary_request(ctx, index)
    if reuse(ctx.saved, ctx.grader, canary) is None:
        yield canary, None
    for cell in cells_to_grade(ctx, loaded, index, grading_dir, changed):
        if isinstance(cell, Prepared) and cell.request is not None and reuse(ctx.saved, ctx.grader, cell.request) is None:
            yield cell.request, cell


def _set_aside(path: Path) -> None:
    if path.exists():
        os.replace(path, path.with_name(path.name + ".stale"))


def _old_hashes(out: Path) -> dict[int, str]:
    try:
        data = read_json(out / "index.json", REQUESTS_FORMAT)
    except RecordError:
        return {}
    return {int(e["n"]): e["request_sha256"] for e in data.get("requests", [])}


def export(ctx: Context, loaded: Loaded, index: dict[str, Any], grading_dir: Path, options: Any) -> dict[str, Any]:
    out: Path = options.export_requests
    out.mkdir(parents=True, exist_ok=True)
    old = _old_hashes(out)
    entries = []
    stale = 0
    for request, _ in _requests(ctx, loaded, index, grading_dir, options.changed):
        n = request.n
        if n in old and old[n] != request.request_sha256:
            for name in (f"{n}.reply.json", f"{n}.retry.request.txt", f"{n}.retry.reply.json"):
                if (out / name).exists():
                    stale += name.endswith("reply.json")
                    _set_aside(out / name)
        write_text_atomic(out / f"{n}.request.txt", request.text(), mode=0o600)
        entries.append({"n": n, "request": f"{n}.request.txt", "reply": f"{n}.reply.json",
                        "request_sha256": request.request_sha256})
    write_json_atomic(out / "index.json", {"format": REQUESTS_FORMAT, "instructions": INSTRUCTIONS,
                                           "requests": entries})
    lines = [f"Exported {len(entries)} request(s) to {out}" + (f"; {stale} reply(ies) to changed requests set "
                                                                 "aside as .stale" if stale else "")]
    return {"exported": len(entries), "stale": stale, "lines": lines}


def retry_text(request: JudgeRequest, reply: str, problems: list[str]) -> str:
    """The retry as the API would send it: the request, the reply as ASSISTANT:, the feedback as USER:."""
    added = retry_messages(reply, problems)
    return request.text() + f"\nASSISTANT:\n{added[0].content}\n\nUSER:\n{added[1].content}\n"


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def _judge_files(ctx: Context, request: JudgeRequest, out: Path, counts: dict[str, int]) -> Judgment | None:
    """The judgment the files in OUT give for one request, or None while a reply is missing."""
    n = request.n
    retry_request = out / f"{n}.retry.request.txt"
    first = _read(out / f"{n}.reply.json")
    if first is None:
        counts["missing"] += 1
        return None
    parsed = parse_reply(first, request)
    if parsed.ok:
        judgment = from_parsed(parsed, route="file", requests=0, retried=False)
        save(ctx.saved, ctx.grader, request, judgment, [first])
        counts["recorded"] += 1
        return judgment
    second = _read(out / f"{n}.retry.reply.json") if retry_request.exists() else None
    if second is None:
        write_text_atomic(retry_request, retry_text(request, first, parsed.problems), mode=0o600)
        counts["retry"] += 1
        return None
    again = parse_reply(second, request)
    if again.ok:
        judgment = from_parsed(again, route="file", requests=0, retried=True)
        save(ctx.saved, ctx.grader, request, judgment, [first, second])
        counts["recorded"] += 1
        return judgment
    counts["unparsed"] += 1
    return Judgment(route="file", retried=True, unparsed={"replies": [first, second],
                                                          "problems": [parsed.problems, again.problems]})


def import_replies(ctx: Context, loaded: Loaded, index: dict[str, Any], grading_dir: Path, options: Any
                   ) -> dict[str, Any]:
    out: Path = options.import_replies
    exported = _old_hashes(out)
    if not exported:
        raise_missing(out)
    counts = {"recorded": 0, "retry": 0, "missing": 0, "unparsed": 0, "stale": 0, "free": 0, "reused": 0}
    summary: dict[str, Any] = {"lines": []}
    canary = canary_request(ctx, index)
    for request, cell in [(canary, None), *_all(ctx, loaded, index, grading_dir, options.changed)]:
        if cell is not None and cell.request is None:
            record_cell(ctx, grading_dir, cell, None)  # nothing a judge could read: graded without one
            counts["free"] += 1
            continue
        found = reuse(ctx.saved, ctx.grader, request)
        if found is None:
            if request.n not in exported:
                counts["missing"] += 1  # not exported yet: export again
                continue
            if exported[request.n] != request.request_sha256:
                counts["stale"] += 1
                for name in (f"{request.n}.reply.json", f"{request.n}.retry.reply.json"):
                    _set_aside(out / name)
                continue
            found = _judge_files(ctx, request, out, counts)
            if found is None:
                continue
        else:
            counts["reused"] += 1
        if cell is None:
            if record_canary(ctx, grading_dir, request, found):
                summary["canary_failed"] = True
                summary["lines"].append("assistant-eval grade-ai: " + CANARY_FAILED.format(n=request.n))
        else:
            record_cell(ctx, grading_dir, cell, found)
    summary["recorded"] = counts["recorded"]
    summary["lines"].insert(0, (
        f"Imported replies from {out}: {counts['recorded']} recorded, {counts['retry']} needing a retry "
        f"(answer <n>.retry.request.txt in <n>.retry.reply.json), {counts['missing']} missing, "
        f"{counts['unparsed']} unparsed (for the owner), {counts['stale']} for changed requests (export again), "
        f"{counts['reused']} from saved judgments, {counts['free']} graded without a request"))
    summary["counts"] = counts
    return summary


def grade_with_files(loaded: Loaded, grading_dir: Path, index: dict[str, Any], cases: CaseSet,
                     levels: levels_mod.Levels, options: JudgeOptions) -> dict[str, Any]:
    """The file route's entry: every request is built and leak-scanned first, as on the API route."""
    ctx = make_context(loaded, index, cases, levels, options, grading_dir)
    scan_all(ctx, loaded, index, grading_dir, options.changed)
    if options.export_requests is not None:
        return export(ctx, loaded, index, grading_dir, options)
    return import_replies(ctx, loaded, index, grading_dir, options)


def _all(ctx: Context, loaded: Loaded, index: dict[str, Any], grading_dir: Path, changed: bool):
    for cell in cells_to_grade(ctx, loaded, index, grading_dir, changed):
        if isinstance(cell, Prepared):
            yield cell.request, cell


def raise_missing(out: Path) -> None:
    raise GradingError(f"{out} holds no exported requests (index.json); export them first with --export-requests")
