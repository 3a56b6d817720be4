"""A markdown review line that is not exactly one allowed letter is refused with its line (issue 31, item N).

``[r / w]: r w`` matched no line pattern and was dropped: 112 letters imported instead of 113, exit 0.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.graded_helpers import run_and_grade


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory, world_dir: Path) -> Path:
    return run_and_grade(tmp_path_factory.mktemp("review-lines"), world_dir, ["oracle", "invents"], seed=5,
                         select="G01 or G02 or G03")


def _cli(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_assistant_eval", *map(str, args)], capture_output=True,
                          text=True, timeout=300)


@pytest.mark.parametrize("written", ["r w", "r r", "rw", "r.", "r # sure", "yes"])
def test_a_verdict_line_with_more_than_one_letter_is_refused_with_its_line(written, graded, tmp_path):
    review_md = tmp_path / "REVIEW.md"
    assert _cli("review", "--dir", graded, "--export-md", review_md).returncode == 0
    lines = review_md.read_text(encoding="utf-8").splitlines()
    at = next(k for k, line in enumerate(lines) if line.startswith("- `") and line.endswith("[r / w]:"))
    lines[at] += f" {written}"
    review_md.write_text("\n".join(lines) + "\n", encoding="utf-8")
    before = sorted(p.read_bytes() for p in (graded / "review").rglob("*.json")) if (graded / "review").exists() else []
    done = _cli("review", "--dir", graded, "--import-md", review_md)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"{review_md}:{at + 1}:" in done.stderr and f"{written.lower()!r} is not allowed here" in done.stderr
    after = sorted(p.read_bytes() for p in (graded / "review").rglob("*.json")) if (graded / "review").exists() else []
    assert after == before


def test_one_allowed_letter_is_imported(graded, tmp_path):
    review_md = tmp_path / "REVIEW.md"
    assert _cli("review", "--dir", graded, "--export-md", review_md).returncode == 0
    lines = review_md.read_text(encoding="utf-8").splitlines()
    at = next(k for k, line in enumerate(lines) if line.startswith("- `") and line.endswith("[r / w]:"))
    lines[at] += "  R  "
    review_md.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = _cli("review", "--dir", graded, "--import-md", review_md)
    assert done.returncode == 0 and "Imported 1 letter(s)" in done.stdout, done.stdout + done.stderr
