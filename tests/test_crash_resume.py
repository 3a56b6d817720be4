"""A run killed with SIGKILL at random moments, then resumed, ends as if never interrupted
(S4.8, S9.2): no cell lost, nothing double-counted, every file readable after every kill."""

from __future__ import annotations

import os
import random
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.crash_harness import CycleResult, crash_cycle, reference_run
from tests.reference_fake import ReferenceOpenAIFake

KILLS = int(os.environ.get("ASSISTANT_EVAL_CRASH_KILLS", "50"))
#: Folders killed and resumed side by side, each lane with its own fake server (which counts its
#: requests) and its own uninterrupted reference run: the test mostly waits for its kill moments,
#: so two lanes at once halve its wall time.
SIDE_BY_SIDE = 2


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-crash-test-key-0123456789")


def kill_and_resume(lane: int, share: int, world: Path, calibration: Path, base: Path) -> list[CycleResult]:
    """One lane's ``share`` of the kills, folder after folder, against its own fake server."""
    fake = ReferenceOpenAIFake(calibration, world, delay=0.03)
    try:
        reference = reference_run(world, base / f"uninterrupted-{lane}", fake, calibration)
        rng = random.Random(20261130 + lane)
        results: list[CycleResult] = []
        kills = 0
        while kills < share:
            # Up to 25 kills a folder: each folder's last run goes to the end uncut (five of those were a
            # quarter of the test's time with 12). Half the kills land just after a request, half at a time
            # since the launch (crash_harness.wait_for_moment).
            result = crash_cycle(world, base / f"crashed-{lane}-{len(results) + 1}", fake, calibration, reference,
                                 rng, max_kills=min(25, share - kills), window=(0.3, 2.0), after_request=0.4)
            kills += result.kills
            results.append(result)
        return results
    finally:
        fake.close()


def test_sigkill_at_random_moments_then_resume_loses_and_double_counts_nothing(world_dir, calibration_dir, tmp_path):
    shares = [KILLS // SIDE_BY_SIDE + (lane < KILLS % SIDE_BY_SIDE) for lane in range(SIDE_BY_SIDE)]
    with ThreadPoolExecutor(SIDE_BY_SIDE) as pool:
        lanes = list(pool.map(kill_and_resume, range(SIDE_BY_SIDE), shares, [world_dir] * SIDE_BY_SIDE,
                              [calibration_dir] * SIDE_BY_SIDE, [tmp_path] * SIDE_BY_SIDE))
    kills = 0
    for result in (r for lane in lanes for r in lane):
        kills += result.kills
        assert result.unreadable == [], f"half-written files after a kill: {result.unreadable}"
        assert result.lost == [], f"cells lost or different after resume: {result.differences}"
        # Every request the server received is counted; a killed request that never left
        # is counted once at most (it may have been sent).
        assert result.received <= result.counted <= result.received + result.kills
    assert kills >= KILLS
