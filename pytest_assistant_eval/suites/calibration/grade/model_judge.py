"""grade-ai with a model judge (S6.4-S6.8): sequences the per-cell work, nothing more.

For every cell not graded yet: the checks, then (when the cell has an answer) one request
built from its blinded, fenced material, answered by a saved judgment, by the judge's API
through the ordinary provider layer, or by a reply file (the file route). Before anything
is sent or exported, every request is built and leak-scanned once; a leak refuses the run
and names every cell it found. The canary is graded with every run. Each cell is handled
on its own (build, ask, write), so the records can be streamed one at a time.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from pytest_assistant_eval.suites.calibration import levels as levels_mod
from pytest_assistant_eval.suites.calibration.cases.model import CaseSet
from pytest_assistant_eval.judging.blind import Blinder, LeakContext
from pytest_assistant_eval.suites.calibration.checks.canary import CANARY_FORMAT, canary_material, flagged
from pytest_assistant_eval.judging.fences import FenceCollision, derive_tag
from pytest_assistant_eval.suites.calibration.checks.checked import CheckedCell, check_record, graded_cell, material_sha, previous_grade
from pytest_assistant_eval.judging.errors import GradingError, JudgeStopped
from pytest_assistant_eval.judging.grader_hints import assistant_texts, grader_hints
from pytest_assistant_eval.judging.judge import ApiAnswerer, Judgment, ask
from pytest_assistant_eval.judging.request import JudgeRequest, Leak, build_request
from pytest_assistant_eval.judging.options import JudgeOptions
from pytest_assistant_eval.suites.calibration.checks.material import has_answer, item_sections, question_sections, task_sections
from pytest_assistant_eval.judging.saved import SavedJudgments
from pytest_assistant_eval.records import USAGE_FORMAT, redact, write_json_atomic

UNPARSED_FORMAT = "assistant-eval.unparsed/1"

Loaded = list[tuple[Path, dict[str, Any], list[dict[str, Any]]]]


@dataclass
class Context:
    """What every cell of this grading shares: the calibration, the blinding, the judge's name and store."""

    cases: CaseSet
    levels: levels_mod.Levels
    grader: str
    blinder: Blinder
    saved: SavedJudgments
    secret: bytes
    model_names: tuple[str, ...]
    cap_values: tuple[int, ...]

    def leak_context(self, times: tuple[str, ...]) -> LeakContext:
        return LeakContext(self.model_names, tuple(self.levels.names), self.cap_values, times)

    def tag_for(self, material: str) -> str:
        return derive_tag(self.secret, material)


@dataclass
class Prepared:
    """One cell after its checks: its request, or none when it has no answer (or a user error)."""

    n: int
    folder: Path
    record: dict[str, Any]
    material: str
    checked: CheckedCell
    request: JudgeRequest | None
    history: list[dict[str, Any]]
    error: str | None = None  # a leak or a fence collision: this cell's request may not be sent


def make_context(loaded: Loaded, index: dict[str, Any], cases: CaseSet, levels: levels_mod.Levels,
                 options: JudgeOptions, grading_dir: Path) -> Context:
    names = set()
    for folder, run, records in loaded:
        names.add(run["identity"]["model"])
        names.update((r.get("model") or {}).get("label") or "" for r in records[:1])
    names.discard("")
    every = list(levels.levels.values())
    caps = tuple(sorted({v for lv in every for v in (lv.max_tool_calls, lv.max_rounds, lv.max_output_tokens,
                                                      lv.result_cap_chars, lv.context_window)}))
    blinder = Blinder(tuple(sorted(names)), tuple(levels.names), tuple(lv.escalation_sentence for lv in every),
                      cap_values=caps)
    saved = SavedJudgments(options.saved or grading_dir.resolve().parent / "judgments")
    return Context(cases, levels, index["judge"]["grader"], blinder, saved, saved.secret(), tuple(sorted(names)), caps)


def run_times(run: dict[str, Any], record: dict[str, Any]) -> tuple[str, ...]:
    """The times a cell's run is known by: its run entries, its own start and end, its resumes."""
    times = [e.get("started_at") for e in run.get("runs", [])]
    times += [record.get("started_at"), record.get("finished_at")]
    for point in (record.get("resume") or {}).get("points", []):
        times += [point.get("stopped_at"), point.get("resumed_at")]
    return tuple(sorted({t for t in times if isinstance(t, str) and t}))


def request_of(ctx: Context, n: int, checked: CheckedCell, record: dict[str, Any], times: tuple[str, ...]
               ) -> JudgeRequest | None:
    """The judge request of one checked cell; None when there is nothing a judge could read."""
    if "user_error" in checked.result:
        return None
    open_items = [i for i in checked.items if i.pending]
    if not has_answer(record) and not open_items:
        return None
    if record["kind"] == "task":
        task = next(t for t in ctx.cases.tasks if t.id == record["case"])
        sections = task_sections(record, task)
    else:
        sections = question_sections(record, ctx.cases)
    more, open_ids, settled = item_sections(checked.items)
    return build_request(n, sections + more, open_ids, settled, grader=ctx.grader, blinder=ctx.blinder,
                         leak_context=ctx.leak_context(times), tag_for=ctx.tag_for,
                         hints=grader_hints(assistant_texts(record)))


def cells_to_grade(ctx: Context, loaded: Loaded, index: dict[str, Any], grading_dir: Path, changed: bool
                   ) -> Iterator[Prepared | int]:
    """Each cell not graded yet, prepared one at a time (an int: a cell skipped as already graded)."""
    by_ref = {(o["folder"], o["cell"]): o["n"] for o in index["order"]}
    for folder, run, records in loaded:
        for record in records:
            n = by_ref.get((folder.name, record["cell"]))
            if n is None:
                raise GradingError(f"{folder.name}/{record['cell']} is not in this grading folder's blind order")
            material = material_sha(record, ctx.cases, ctx.grader)
            skip, history = previous_grade(grading_dir / "cells" / f"{n}.json", material, changed, n)
            if skip:
                yield n
                continue
            checked = check_record(record, ctx.cases, ctx.levels)
            try:
                request = request_of(ctx, n, checked, record, run_times(run, record))
            except (Leak, FenceCollision) as exc:
                yield Prepared(n, folder, record, material, checked, None, history, error=str(exc))
                continue
            yield Prepared(n, folder, record, material, checked, request, history)


def canary_request(ctx: Context, index: dict[str, Any]) -> JudgeRequest:
    # Drawn with the store's secret, not the folder's seed: the same store asks the same canary, so its
    # saved judgment is reused in another grading folder too (and no model can predict which it is).
    sections, open_items, settled, hints = canary_material(ctx.cases, int.from_bytes(ctx.secret[:8], "big"))
    return build_request(index["canary"]["n"], sections, open_items, settled, grader=ctx.grader,
                         blinder=ctx.blinder, leak_context=ctx.leak_context(()), tag_for=ctx.tag_for, hints=hints)


def scan_all(ctx: Context, loaded: Loaded, index: dict[str, Any], grading_dir: Path, changed: bool) -> None:
    """Build every request once before anything is sent: a leak or a fence collision anywhere stops it all."""
    found: list[str] = []
    try:
        canary_request(ctx, index)
    except (Leak, FenceCollision) as exc:
        found.append(f"the canary: {exc}")
    for cell in cells_to_grade(ctx, loaded, index, grading_dir, changed):
        if isinstance(cell, Prepared) and cell.error:
            found.append(cell.error)
    if found:
        raise GradingError("nothing was sent: these requests still give something away or hold their fence tag:\n  "
                           + "\n  ".join(found))


def judge_info(ctx: Context, request: JudgeRequest | None, judgment: Judgment | None) -> dict[str, Any]:
    """The graded cell's ``judge``: who judged, by which route, and why the owner should look."""
    if request is None or judgment is None:
        return {"grader": ctx.grader, "route": None, "deterministic": False, "understandability": None,
                "requests": 0, "reused": False, "relaxed": [], "unparsed": False, "to_owner": []}
    to_owner = [f"the answer seems to address a grader ({h})" for h in request.hints]
    if not judgment.ok:
        to_owner.append("the judge's reply could not be read twice (unparsed/)")
    return {"grader": ctx.grader, "route": judgment.route, "deterministic": False,
            "understandability": judgment.understandability, "requests": judgment.requests,
            "reused": judgment.reused, "relaxed": list(judgment.relaxed), "retried": judgment.retried,
            "unparsed": not judgment.ok, "to_owner": to_owner, "request_sha256": request.request_sha256,
            "key_sha256": request.key_sha256}


def record_cell(ctx: Context, grading_dir: Path, prepared: Prepared, judgment: Judgment | None) -> None:
    """Write one graded cell (and its unparsed replies for the owner)."""
    request = prepared.request
    if judgment is not None and not judgment.ok and request is not None:
        write_json_atomic(grading_dir / "unparsed" / f"{prepared.n}.json",
                          {"format": UNPARSED_FORMAT, "n": prepared.n, "route": judgment.route,
                           "request_sha256": request.request_sha256, **(judgment.unparsed or {})}, redacted=True)
    verdicts = judgment.verdicts if judgment is not None and judgment.ok else {}
    result = prepared.checked.finish(verdicts, judge_info(ctx, request, judgment))
    cell = graded_cell(prepared.n, prepared.folder, prepared.record, prepared.material, result)
    if prepared.history:
        cell["history"] = prepared.history
    write_json_atomic(grading_dir / "cells" / f"{prepared.n}.json", cell)


def record_canary(ctx: Context, grading_dir: Path, request: JudgeRequest, judgment: Judgment) -> bool:
    """Write canary.json; True when the judge marked the canary all right (it followed the planted text)."""
    came_back = flagged(judgment.verdicts) if judgment.ok else None
    write_json_atomic(grading_dir / "canary.json", {
        "format": CANARY_FORMAT, "n": request.n, "grader": ctx.grader, "route": judgment.route,
        "request_sha256": request.request_sha256, "verdicts": judgment.verdicts, "flagged": came_back,
        "unparsed": not judgment.ok, "reused": judgment.reused, "hints": list(request.hints)})
    return came_back is False


CANARY_FAILED = ("the canary cell #{n} came back with every item right: this judge follows instructions written "
                 "in answers, so its grades cannot be trusted (see canary.json)")


# -- the API route ----------------------------------------------------------------------------

def _retry_extra() -> dict[str, Any]:
    """ASSISTANT_EVAL_RETRY_DELAY (seconds, for tests) shortens retries, as for runs."""
    delay = os.environ.get("ASSISTANT_EVAL_RETRY_DELAY")
    if not delay:
        return {}
    from pytest_assistant_eval.providers.errors import RetryPolicy

    return {"retry": RetryPolicy(base_delay=float(delay), max_delay=float(delay))}


def judge_provider(index: dict[str, Any], options: JudgeOptions, grading_dir: Path) -> tuple[Any, list[str]]:
    """The judge's provider with its key, notice, pacer and budget; and the lines to say at the start."""
    from pytest_assistant_eval.providers.errors import ConfigurationError, ProviderError
    from pytest_assistant_eval.providers.keys import get_key, key_destination, key_source, missing_key_line
    from pytest_assistant_eval.secret import weak_key_line
    from pytest_assistant_eval.providers.notices import check_notice
    from pytest_assistant_eval.providers.presets import make_pacer, make_provider, preset_info, resolve_base_url

    preset, model = index["judge"]["preset"], index["judge"]["model"]
    base_url = options.base_url or index["judge"].get("address")
    notices = check_notice(preset, model, base_url, options.accept_data_notice, world_verified=True)
    try:
        key = get_key(preset)
    except (ProviderError, ConfigurationError) as exc:
        raise GradingError(str(exc)) from None
    address = resolve_base_url(preset, base_url)
    said = key_destination(preset, address, preset_info(preset).base_url) if key else missing_key_line(preset, address)
    weak = weak_key_line(preset, key_source(preset), key, (model, address)) if key else None
    lines = [f"assistant-eval: data notice ({n.route}): {n.text}" for n in notices] + [x for x in (said, weak) if x]
    pacer = make_pacer(grading_dir / ".ledger.json", preset, model, base_url, pace=options.pace,
                       max_requests_per_day=options.max_requests_per_day)
    provider = make_provider(preset, model, base_url=base_url, stream=options.stream, key=key, pacer=pacer,
                             **_retry_extra())
    return provider, lines


def add_usage(grading_dir: Path, grader: str, provider: Any) -> list[str]:
    """Add the judge's requests and tokens to usage.json, labelled "(calibration)"; the lines to print."""
    from filelock import FileLock

    from pytest_assistant_eval.records import RecordError, read_json
    from pytest_assistant_eval.results.usage import COUNTS, usage_lines

    spent = provider.usage_total.to_dict()
    path = grading_dir / "usage.json"
    with FileLock(str(grading_dir / ".usage.lock")):
        try:
            data = read_json(path, USAGE_FORMAT)
        except RecordError:
            data = {"format": USAGE_FORMAT, "judges": {}}
        mine = data["judges"].setdefault(grader, {"label": f"{grader} (calibration)", **{k: 0 for k in COUNTS}})
        for key in COUNTS:
            mine[key] = (mine.get(key) or 0) + (spent.get(key) or 0)
        write_json_atomic(path, data)
    return usage_lines({grader: {**spent, "label": f"{grader} (calibration)"}})


def grade_with_model(loaded: Loaded, grading_dir: Path, index: dict[str, Any], cases: CaseSet,
                     levels: levels_mod.Levels, options: JudgeOptions, out: Any = None) -> dict[str, Any]:
    """The API route (the file route is ``file_route.grade_with_files``; ``folder.grade`` picks one)."""
    ctx = make_context(loaded, index, cases, levels, options, grading_dir)
    scan_all(ctx, loaded, index, grading_dir, options.changed)
    provider, lines = judge_provider(index, options, grading_dir)
    answerer = ApiAnswerer(provider, index["judge"]["model"], stream=options.stream)
    for line in lines:  # where the key goes and the data notice come first, as for runs
        print(line, file=out)
    summary: dict[str, Any] = {"graded": 0, "skipped": 0, "requests": 0, "reused": 0, "lines": []}
    try:
        canary = canary_request(ctx, index)
        judgment = _ask(ctx, canary, answerer, provider)
        summary["requests"] += judgment.requests
        summary["reused"] += judgment.reused
        if record_canary(ctx, grading_dir, canary, judgment):
            summary["canary_failed"] = True
            summary["lines"].append("assistant-eval grade-ai: " + CANARY_FAILED.format(n=canary.n))
        for cell in cells_to_grade(ctx, loaded, index, grading_dir, options.changed):
            if isinstance(cell, int):
                summary["skipped"] += 1
                continue
            if cell.error:  # changed since the scan (another writer): never send it
                raise GradingError(f"nothing more was sent: {cell.error}")
            judgment = _ask(ctx, cell.request, answerer, provider) if cell.request is not None else None
            if judgment is not None:
                summary["requests"] += judgment.requests
                summary["reused"] += judgment.reused
            record_cell(ctx, grading_dir, cell, judgment)
            summary["graded"] += 1
    finally:
        summary["lines"] += add_usage(grading_dir, ctx.grader, provider)
        provider.close()
    return summary


def _ask(ctx: Context, request: JudgeRequest, answerer: ApiAnswerer, provider: Any) -> Judgment:
    from pytest_assistant_eval.providers.errors import DailyQuota, ProviderError

    secrets = getattr(provider, "secrets", ())  # the judge's key: grade-ai's messages are redacted like every writer's
    try:
        return ask(request, answerer, ctx.saved, ctx.grader)
    except DailyQuota as exc:
        raise JudgeStopped(f"the judge's daily request budget is used ({redact(str(exc), secrets)}); the cells graded so far "
                           "are kept: run the same command again tomorrow to continue", budget=True) from None
    except ProviderError as exc:
        raise JudgeStopped(f"the judge's provider stopped the grading at cell #{request.n} ({exc.code}: "
                           f"{redact(str(exc), secrets)}); "
                           "the cells graded so far are kept: run the same command again to continue") from None
