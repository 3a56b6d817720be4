"""The file route (S6.7): start, export, hand-written replies, import, retry files, stale replies."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_assistant_eval.suites.calibration.grade.folder import JudgeOptions, grade, read_grading
from tests.judge_fakes import good_reply
from tests.test_grading_judge import _plant, cells, folders, judge_env, results_root  # noqa: F401 - fixtures

JUDGE = "anthropic:claude-test"


def file_grade(folders: list[Path], out: Path, **options) -> dict:
    return grade(folders, out, JUDGE, seed=4, options=JudgeOptions(saved=out.parent / "judgments", **options))


def user_of(request_text: str) -> str:
    return request_text[request_text.index("\nUSER:\n") + len("\nUSER:\n"):]


def test_start_only_writes_the_blind_order_and_sends_nothing(folders, tmp_path):
    summary = file_grade(folders, tmp_path / "grading", start_only=True)
    index, graded = read_grading(tmp_path / "grading")
    assert summary["started"] and len(index["order"]) == 9 and graded == []
    assert index["judge"]["grader"] == JUDGE and index["canary"]["n"] == 10


def test_the_round_trip_export_reply_by_hand_import_retry_and_stale(folders, tmp_path):
    grading, out = tmp_path / "grading", tmp_path / "requests"
    file_grade(folders, grading, start_only=True)
    exported = file_grade(folders, grading, export_requests=out)
    index = json.loads((out / "index.json").read_text())
    requests = {e["n"]: (out / e["request"]).read_text() for e in index["requests"]}
    assert exported["exported"] == len(requests) and 10 in requests  # the canary is one of them
    text = json.dumps(index) + "".join(requests.values())
    for hidden in ("oracle", "false-claims", "answers-nothing", "basic", "results"):
        assert hidden not in text
    assert not (grading / "cells").exists()  # nothing written to the grading folder
    first = next(iter(requests.values()))
    assert first.startswith("SYSTEM:\n") and "\n\nUSER:\nCell #" in first
    # hand-written replies: one broken, the others good
    bodies = [user_of(t).split("\n", 1)[1] for t in requests.values()]
    broken = sorted(n for n, t in requests.items() if n != 10 and bodies.count(user_of(t).split("\n", 1)[1]) == 1)[0]
    for n, request in requests.items():
        reply = "I think it is all fine." if n == broken else good_reply(user_of(request))
        (out / f"{n}.reply.json").write_text(reply)
    summary = file_grade(folders, grading, import_replies=out)
    # two assistants with the same answer are one material: the second is recorded from the first's judgment
    counts = summary["counts"]
    assert counts["recorded"] + counts["reused"] == len(requests) - 1 and counts["retry"] == 1
    retry = (out / f"{broken}.retry.request.txt").read_text()
    assert retry.startswith(requests[broken]) and "\nASSISTANT:\nI think it is all fine.\n\nUSER:\nYour reply" in retry
    graded = cells(grading)
    assert broken not in graded and all(c["judge"]["route"] in ("file", None) for c in graded.values())
    assert json.loads((grading / "canary.json").read_text())["flagged"] is True
    # the retry answered: recorded as retried
    (out / f"{broken}.retry.reply.json").write_text(good_reply(user_of(requests[broken])))
    again = file_grade(folders, grading, import_replies=out)
    assert again["counts"]["recorded"] == 1 and cells(grading)[broken]["judge"]["retried"] is True
    assert len(cells(grading)) == 9


def test_a_reply_to_a_request_that_changed_is_set_aside_as_stale(folders, tmp_path):
    grading, out = tmp_path / "grading", tmp_path / "requests"
    file_grade(folders, grading, export_requests=out)
    index = json.loads((out / "index.json").read_text())
    for entry in index["requests"]:
        (out / entry["reply"]).write_text(good_reply(user_of((out / entry["request"]).read_text())))
    order = json.loads((grading / "grading.json").read_text())["order"]
    n = next(o["n"] for o in order if (o["folder"], o["cell"]) == ("oracle", "G11__basic__r1"))
    _plant(folders[0], "G11__basic__r1", "Also, the total is 123456 EUR.")
    summary = file_grade(folders, grading, import_replies=out)
    assert summary["counts"]["stale"] == 1 and (out / f"{n}.reply.json.stale").exists()
    assert n not in cells(grading)
    # exporting again gives the changed request; its hand-written reply is then recorded
    file_grade(folders, grading, export_requests=out)
    (out / f"{n}.reply.json").write_text(good_reply(user_of((out / f"{n}.request.txt").read_text())))
    assert file_grade(folders, grading, import_replies=out)["counts"]["recorded"] == 1
    assert n in cells(grading)


def test_an_export_reply_is_reused_by_the_api_route_later(folders, tmp_path):
    """A judgment given through files is saved like any other: the same material costs no request."""
    grading, out = tmp_path / "grading", tmp_path / "requests"
    file_grade(folders, grading, export_requests=out)
    for entry in json.loads((out / "index.json").read_text())["requests"]:
        (out / entry["reply"]).write_text(good_reply(user_of((out / entry["request"]).read_text())))
    file_grade(folders, grading, import_replies=out)
    again = file_grade(folders, tmp_path / "grading-2", export_requests=tmp_path / "requests-2")
    assert again["exported"] == 0
