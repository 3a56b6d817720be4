"""The report page (issue 14, S8.6): one offline HTML file, read as a person reads it.

The grading is real: four reference assistants at the basic level, graded by the offline judge
and reviewed by the scripted owner, made once per module; then a few cells are planted so every
outcome is on the page (an incomplete question, a user-error run, a cell still waiting) and one
answer carries markup that must stay text. The browser tests open the page in Debian's
headless Chromium through playwright (one browser per module, no browser download).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_assistant_eval.tables.report import build_report, report_command
from tests.graded_helpers import run_and_grade

REPO = Path(__file__).resolve().parent.parent
CALIBRATION = REPO / "calibration"
MODELS = ("oracle", "invents", "escalates-everything", "acts-without-approval")
CHROMIUM = Path("/usr/bin/chromium")
PLANTED = '<script>window.__planted = 1</script> <<< & <img src="x" onerror="window.__planted = 2"> "quoted"'
OUTCOMES = {"answered", "escalated", "failed", "incomplete", "pass", "fail", "unsafe", "user_error", "waiting"}


def _graded_cells(grading: Path) -> dict[int, dict[str, Any]]:
    return {int(p.stem): json.loads(p.read_text(encoding="utf-8")) for p in (grading / "cells").glob("*.json")}


def _record_path(base: Path, cell: dict[str, Any]) -> Path:
    return base / "results" / cell["source"]["folder"] / "cells" / f"{cell['source']['cell']}.json"


def _rewrite(path: Path, change: Any) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def _plant(base: Path) -> dict[str, int]:
    """Cells of the outcomes the reference assistants never give, and markup in an answer and a tool result."""
    grading = base / "grading"
    cells = _graded_cells(grading)
    reviewed = {int(p.stem) for p in (grading / "reviews").glob("*.json")}
    questions = sorted(n for n, c in cells.items() if c["kind"] == "question" and c["outcome"] == "answered"
                       and n not in reviewed)
    tasks = sorted(n for n, c in cells.items() if c["kind"] == "task" and c["outcome"] == "pass" and n not in reviewed)
    planted = {"markup": questions[0], "incomplete": questions[1], "user_error": tasks[0], "waiting": sorted(reviewed)[0]}

    def markup(record: dict[str, Any]) -> None:
        for entry in record["transcript"]:
            if entry["type"] == "assistant" and entry["text"]:
                entry["text"] = PLANTED
            if entry["type"] == "tool":
                entry["text"] = PLANTED
    _rewrite(_record_path(base, cells[planted["markup"]]), markup)

    def incomplete(cell: dict[str, Any]) -> None:
        cell["outcome"] = "incomplete"
        cell["parts"][0]["outcome"] = "incomplete"
    _rewrite(grading / "cells" / f"{planted['incomplete']}.json", incomplete)

    def user_error(cell: dict[str, Any]) -> None:
        cell["outcome"] = "user_error"
    _rewrite(grading / "cells" / f"{planted['user_error']}.json", user_error)
    _rewrite(_record_path(base, cells[planted["user_error"]]),
             lambda r: r["user"].update(user_error="the user approved a listing outside the approval"))
    (grading / "reviews" / f"{planted['waiting']}.json").unlink()  # queued, not reviewed yet: it waits
    return planted


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory, world_dir: Path) -> tuple[Path, dict[str, int]]:
    """results/<model>, grading/ (reviewed by the scripted owner) and the planted cells' blind numbers."""
    from pytest_assistant_eval.review.command import ReviewOptions, review_command
    from pytest_assistant_eval.tables.grading_source import open_grading  # as the front door hands it in

    base = tmp_path_factory.mktemp("report")
    grading = run_and_grade(base, world_dir, MODELS, seed=5)
    assert review_command(grading, CALIBRATION, ReviewOptions(owner="scripted"), open_grading=open_grading) == 0
    return base, _plant(base)


@pytest.fixture(scope="module")
def page(graded: tuple[Path, dict[str, int]]) -> Path:
    base, _ = graded
    out = base / "report.html"
    assert report_command(base / "grading", CALIBRATION, out) == 0
    return out


# -- the page as a file --------------------------------------------------------------------------------------------


def test_the_page_is_one_file_that_names_no_other(page: Path):
    html = page.read_text(encoding="utf-8")
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:|//|file:)""", html, re.I)
    assert not re.search(r"<link\b|@import|url\((?!#)", html, re.I)  # url(#clip) is the SVG's own reference
    assert "default-src 'none'" in html  # and the browser is told to fetch nothing, should anything try


def test_the_policy_lets_only_the_pages_own_script_run(page: Path):
    """No 'unsafe-inline' for scripts (issue 23, item 19): the one inline script is allowed by its hash."""
    import base64
    import hashlib

    html = page.read_text(encoding="utf-8")
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', html).group(1)
    directives = {d.split()[0]: d.split()[1:] for d in policy.split(";") if d.strip()}
    scripts = re.findall(r"<script>(.*?)</script>", html, re.S)
    assert len(scripts) == 1
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode("utf-8")).digest()).decode("ascii")
    assert directives["script-src"] == [f"'sha256-{digest}'"]
    assert directives["default-src"] == ["'none'"] and "'unsafe-inline'" not in directives["script-src"]


def test_an_answer_is_escaped_in_the_source(page: Path):
    html = page.read_text(encoding="utf-8")
    assert "window.__planted" in html
    assert "<script>window.__planted" not in html and '<img src="x"' not in html
    assert "&lt;script&gt;window.__planted = 1&lt;/script&gt; &lt;&lt;&lt; &amp;" in html


def test_every_graded_cell_has_its_drill_down_and_a_row(graded: tuple[Path, dict[str, int]], page: Path):
    base, _ = graded
    html = page.read_text(encoding="utf-8")
    numbers = set(_graded_cells(base / "grading"))
    assert {int(n) for n in re.findall(r'<template id="t-(\d+)">', html)} == numbers
    assert {int(n) for n in re.findall(r'<tr data-level="[^"]*"[^>]*><td><a href="#cell-(\d+)">', html)} == numbers


def test_the_page_has_the_sections_and_two_svg_plots(page: Path):
    html = page.read_text(encoding="utf-8")
    for section in ("leaderboard", "plots", "calibration", "agreement", "user", "cells"):
        assert f'<section id="{section}">' in html
    assert html.count("<svg") == 2
    assert 'name="generator" content="assistant-eval.report/3' in html


def test_the_report_writes_beside_the_grading_by_default_and_prints_the_path(graded, tmp_path: Path, capsys):
    base, _ = graded
    copy = tmp_path / "copy"
    shutil.copytree(base, copy)
    assert report_command(copy / "grading", CALIBRATION) == 0
    out = capsys.readouterr().out
    assert f"Report: {copy / 'grading' / 'report.html'} (" in out
    assert (copy / "grading" / "report.html").is_file()


def test_the_page_compares_the_boards_first_two_or_the_pair_asked_for(graded, tmp_path: Path):
    base, _ = graded
    html = build_report(base / "grading", CALIBRATION, k=2)
    section = html[html.index('<section id="compare">'):html.index('<section id="plots">')]
    assert "oracle against invents" in section  # the board's first two: no unsafe run, by completion
    assert "McNemar p" in section and "95% interval" in section and "smallest difference" not in section
    assert "no difference below" in section or "cannot tell the two models apart" in section
    html = build_report(base / "grading", CALIBRATION, k=2, compare=("acts-without-approval", "oracle"))
    section = html[html.index('<section id="compare">'):html.index('<section id="plots">')]
    assert "acts-without-approval against oracle" in section


def test_the_headline_and_the_board_put_the_assistants_with_unsafe_runs_last(page: Path):
    html = page.read_text(encoding="utf-8")
    board = html[html.index('<section id="leaderboard">'):html.index("<h3>Behaviour checks</h3>")]
    order = re.findall(r'<tr><th><a href="#cells\?model=[^"]*">([^<]+)</a>', board)
    assert order[-1] == "acts-without-approval" and len(order) == len(MODELS)
    assert 'class="unsafe"' in board and "! " in board and "safety first" in board
    assert re.search(r'<p class="headline">First: oracle, no unsafe run', html)


def test_without_a_review_the_agreement_section_is_left_out(graded, tmp_path: Path):
    base, _ = graded
    copy = tmp_path / "copy"
    shutil.copytree(base, copy)
    (copy / "grading" / "review.json").unlink()
    shutil.rmtree(copy / "grading" / "reviews")
    html = build_report(copy / "grading", CALIBRATION)
    assert 'id="agreement"' not in html and "<svg" in html


def test_a_folder_that_is_no_grading_is_refused(tmp_path: Path, capsys):
    (tmp_path / "grading.json").write_text('{"format": "something/1"}', encoding="utf-8")
    assert report_command(tmp_path, CALIBRATION) == 2
    assert "assistant-eval report:" in capsys.readouterr().err


def test_the_report_command_does_not_import_matplotlib_for_other_commands():
    code = ("import sys, pytest_assistant_eval.cli, pytest_assistant_eval.tables.report, "
            "pytest_assistant_eval.tables.leaderboard\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('matplotlib', 'jinja2')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_cli_writes_the_page(graded, tmp_path: Path):
    base, _ = graded
    out = tmp_path / "page.html"
    proc = subprocess.run([sys.executable, "-m", "pytest_assistant_eval", "report", "--dir", str(base / "grading"),
                           "--out", str(out)], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert out.is_file() and str(out) in proc.stdout


# -- the page in a browser -----------------------------------------------------------------------------------------

BROWSER_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One headless Chromium for the module, with a fresh profile; every request it makes is recorded."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing: Debian's chromium could not be installed here "
                    "(.ci/run installs it with 'apt-get install -y chromium')")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the test extra's playwright is not installed")
    with sync_api.sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("profile")), executable_path=str(CHROMIUM), headless=True,
            args=BROWSER_ARGS, viewport={"width": 1300, "height": 900})
        yield context
        context.close()


class Visit:
    """A page opened in the browser, with its console messages, page errors and requests."""

    def __init__(self, context: Any, path: Path) -> None:
        self.page = context.new_page()
        self.console: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        self.page.on("pageerror", lambda e: self.console.append(f"pageerror: {e}"))
        self.page.on("request", lambda r: self.requests.append(r.url))
        # Anything but the page itself is refused before it leaves, and recorded above all the same.
        self.page.route(re.compile(r"^(?!file:).*"), lambda route: route.abort())
        self.url = path.as_uri()
        self.page.goto(self.url)

    @property
    def errors(self) -> list[str]:
        return [m for m in self.console if m.startswith(("error", "pageerror"))]

    @property
    def other_requests(self) -> list[str]:
        return [u for u in self.requests if u.split("#")[0] != self.url]

    def open_first(self, **filters: str) -> Any:
        """Choose the filters in the form as a person would, click the first cell shown, return its drill-down."""
        form = self.page.locator("#filters")
        form.locator("#clear").click()
        for name, value in filters.items():
            form.locator(f"select[name={name}]").select_option(value)
        self.page.locator("#cell-list tbody tr:not([hidden]) td:nth-child(3) a").first.click()
        article = self.page.locator("#cell article.cell")
        article.wait_for()
        return article


@pytest.fixture()
def visit(browser: Any, page: Path) -> Iterator[Visit]:
    v = Visit(browser, page)
    yield v
    v.page.close()


@pytest.fixture(scope="module")
def unblind_page(graded: tuple[Path, dict[str, int]]) -> Path:
    base, _ = graded
    out = base / "report-unblind.html"
    assert report_command(base / "grading", CALIBRATION, out, unblind=True) == 0
    return out


@pytest.fixture()
def unblind_visit(browser: Any, unblind_page: Path) -> Iterator[Visit]:
    v = Visit(browser, unblind_page)
    yield v
    v.page.close()


def test_while_the_review_queue_is_open_the_cell_list_names_no_model(visit: Visit):
    # One planted cell still waits for review: an owner who opens the page before reviewing stays blind.
    cells = visit.page.locator("#cells")
    text = cells.inner_text()
    assert "[blind]" in text
    assert not [m for m in MODELS if m in text]
    assert visit.page.locator("select[name=model]").count() == 0
    assert visit.page.locator("#cell-list tbody tr[data-model]").count() == 0
    article = visit.open_first(kind="task")
    assert not [m for m in MODELS if m in article.locator("h2").inner_text()]
    assert visit.page.locator(".banner").count() == 0
    assert visit.errors == [] and visit.other_requests == []


def test_unblind_names_the_models_under_a_banner_while_the_queue_is_open(unblind_visit: Visit):
    banner = unblind_visit.page.locator(".banner")
    assert "UNBLINDED" in banner.inner_text()
    assert "oracle" in unblind_visit.page.locator("#cell-list").inner_text()


def test_the_page_renders_with_no_console_error_and_no_request(visit: Visit):
    assert visit.page.title().startswith("assistant-eval report")
    assert visit.page.locator("#leaderboard table").first.is_visible()
    assert visit.page.locator("#plots svg").count() == 2
    assert visit.errors == []
    assert visit.other_requests == []


def test_a_click_through_to_one_cell_of_each_outcome(visit: Visit, tmp_path: Path):
    options = visit.page.locator("select[name=outcome] option").all_text_contents()
    outcomes = set(options) - {"all"}
    assert outcomes == OUTCOMES
    for outcome in sorted(outcomes):
        article = visit.open_first(outcome=outcome)
        assert article.get_attribute("data-outcome") == outcome
        assert article.locator("h2 .o").inner_text() == outcome
        if outcome not in ("user_error",):
            assert article.locator("h3", has_text="Conversation").count() == 1
    article = visit.open_first(outcome="unsafe")
    assert article.locator("tr.bad", has_text="asks_first").count() == 1  # why it failed, beside the check
    assert article.locator("h3", has_text="World state diff").count() == 1
    article.locator("li.r summary").first.click()  # a folded tool result opens
    assert article.locator("li.r pre").first.is_visible()
    visit.page.screenshot(path=str(tmp_path / "report-unsafe-cell.png"), full_page=False)
    assert (tmp_path / "report-unsafe-cell.png").stat().st_size > 10_000
    assert visit.errors == [] and visit.other_requests == []


def test_a_table_entry_leads_to_its_cells(unblind_visit: Visit):
    visit = unblind_visit
    visit.page.locator("#leaderboard table").first.locator("tr", has_text="acts-without-approval").locator(
        "td:nth-child(5) a").click()
    rows = visit.page.locator("#cell-list tbody tr:not([hidden])")
    assert rows.count() > 0
    assert set(rows.evaluate_all("rs => rs.map(r => r.dataset.outcome + '/' + r.dataset.model)")) == {
        "unsafe/acts-without-approval"}
    assert visit.page.locator("select[name=outcome]").input_value() == "unsafe"


def test_the_user_error_run_is_counted_apart_with_its_reason(visit: Visit):
    section = visit.page.locator("#user")
    assert section.locator("li", has_text="the user approved a listing outside the approval").count() == 1
    article = visit.open_first(outcome="user_error")
    assert "user error (the simulated user answered wrongly; in no rate)" in article.inner_text()


def test_an_answer_with_markup_shows_as_text(visit: Visit, graded: tuple[Path, dict[str, int]]):
    _, planted = graded
    visit.page.goto(f"{visit.url}#cell-{planted['markup']}")
    article = visit.page.locator("#cell article.cell")
    article.wait_for()
    assert PLANTED in article.locator("li.a p").first.inner_text()
    article.locator("li.r summary").first.click()
    assert PLANTED in article.locator("li.r pre").first.inner_text()
    assert visit.page.evaluate("typeof window.__planted") == "undefined"
    assert article.locator("script, img").count() == 0
    assert visit.errors == [] and visit.other_requests == []


def test_a_script_that_is_not_the_pages_own_is_refused_by_the_browser(browser: Any, page: Path, tmp_path: Path):
    """Should markup ever get past the escaping, the policy still stops it: a script written into
    the page beside ours does not run, ours does (issue 23, item 19)."""
    html = page.read_text(encoding="utf-8")
    foreign = tmp_path / "foreign.html"
    foreign.write_text(html.replace("<body>", "<body><script>window.__foreign = 1</script>", 1), encoding="utf-8")
    visit = Visit(browser, foreign)
    try:
        assert visit.page.evaluate("typeof window.__foreign") == "undefined"
        assert any("Content Security Policy" in m for m in visit.console)
        article = visit.open_first(outcome="pass")  # the page's own script still routes to a cell
        assert article.get_attribute("data-outcome") == "pass"
    finally:
        visit.page.close()


def test_element_text_keeps_quotes_but_never_a_tag_or_an_entity():
    """Quotes need no escape in element text (the page's tool results are JSON, full of them);
    ``<``, ``>`` and ``&`` always do, so no tag or entity can be made from a tool result."""
    from pytest_assistant_eval.tables.report import element_text

    assert str(element_text('{"ok": true}')) == '{"ok": true}'
    assert str(element_text('<img src="x" onerror="y"> &amp;')) == '&lt;img src="x" onerror="y"&gt; &amp;amp;'
    assert str(element_text(None)) == ""


def test_a_tool_result_in_the_page_source_keeps_its_quotes(page: Path):
    html = page.read_text(encoding="utf-8")
    assert '<pre>{"ok": true' in html and "<pre>{&#34;ok&#34;" not in html
