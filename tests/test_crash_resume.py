"""A run killed with SIGKILL at random moments, then resumed, ends as if never interrupted
(S4.8, S9.2): no cell lost, nothing double-counted, every file readable after every kill."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from tests.crash_harness import crash_cycle, reference_run
from tests.reference_fake import ReferenceOpenAIFake

KILLS = int(os.environ.get("ASSISTANT_EVAL_CRASH_KILLS", "50"))


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-crash-test-key-0123456789")


def test_sigkill_at_random_moments_then_resume_loses_and_double_counts_nothing(world_dir, calibration_dir, tmp_path):
    fake = ReferenceOpenAIFake(calibration_dir, world_dir, delay=0.03)
    try:
        reference = reference_run(world_dir, tmp_path / "uninterrupted", fake, calibration_dir)
        rng = random.Random(20261130)
        kills = cycles = 0
        while kills < KILLS:
            cycles += 1
            # Up to 25 kills a folder (two folders for 50 kills): each folder's last run goes to the end
            # uncut, and five of those were a quarter of the test's time. The start-up is shorter than it
            # was (calibration/pytest.ini), so is the window timed from the launch.
            result = crash_cycle(world_dir, tmp_path / f"crashed-{cycles}", fake, calibration_dir, reference, rng,
                                 max_kills=min(25, KILLS - kills), window=(0.3, 2.0), after_request=0.6)
            kills += result.kills
            assert result.unreadable == [], f"half-written files after a kill: {result.unreadable}"
            assert result.lost == [], f"cells lost or different after resume: {result.differences}"
            # Every request the server received is counted; a killed request that never left
            # is counted once at most (it may have been sent).
            assert result.received <= result.counted <= result.received + result.kills
    finally:
        fake.close()
    assert kills >= KILLS
