"""Shared fixtures for the repository's tests: one built world per test session."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# No timing assertion in a test whose subject is not time (issue 23, item 20): Hypothesis's
# 200 ms deadline per example failed a property test of kappa on a loaded machine. The whole
# suite runs under this profile; a test whose subject is time measures it itself.
settings.register_profile("assistant-eval", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("assistant-eval")

REPO = Path(__file__).resolve().parent.parent
CALIBRATION = REPO / "calibration"


@pytest.fixture(scope="session")
def calibration_dir() -> Path:
    return CALIBRATION


@pytest.fixture(scope="session")
def world_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A freshly built grounding world, shared read-only by the tests of one session."""
    from pytest_assistant_eval.suites.calibration.world.build import build_world

    return build_world(tmp_path_factory.mktemp("world"), CALIBRATION / "world")
