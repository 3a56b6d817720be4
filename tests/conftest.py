"""Shared fixtures for the repository's tests: one built world per test session."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CALIBRATION = REPO / "calibration"


@pytest.fixture(scope="session")
def calibration_dir() -> Path:
    return CALIBRATION


@pytest.fixture(scope="session")
def world_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A freshly built grounding world, shared read-only by the tests of one session."""
    from pytest_assistant_eval.world.build import build_world

    return build_world(tmp_path_factory.mktemp("world"), CALIBRATION / "world")
