"""grade-ai's options beyond the folder set (S6.4, S6.7): read by the folder pass and both judge routes."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass
class JudgeOptions:
    """grade-ai's options beyond the folder set: the judge's route and the file route (S6.4, S6.7)."""

    base_url: str | None = None
    accept_data_notice: bool = False
    stream: bool = True
    pace: float = 0.0
    max_requests_per_day: int | None = None
    saved: Path | None = None  # saved judgments (default: judgments/ beside the grading folder)
    changed: bool = False
    start_only: bool = False
    export_requests: Path | None = None
    import_replies: Path | None = None
