"""grade-ai's command-line options, apart from the grading code.

``cli.py`` builds every subcommand's parser on each start; defining these options next to
``grading.folder`` made every command (``summary``, ``calibrate``, a pytest worker's …)
import the whole grading stage first, about 0.15 s, for options it never reads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["add_judge_arguments"]


def add_judge_arguments(p: Any) -> None:
    """grade-ai's options for a model judge and the file route (``folder.judge_options`` reads them back)."""
    p.add_argument("--base-url", help="the judge's address (openai-compatible, ollama, or a preset's other address)")
    p.add_argument("--accept-data-notice", action="store_true",
                   help="accept the judge's data notice (shown when refused) for this run only")
    p.add_argument("--no-stream", action="store_true", help="ask the judge for whole answers instead of streams")
    p.add_argument("--pace", type=float, default=0.0, help="at least this many seconds between the judge's requests")
    p.add_argument("--max-requests-per-day", type=int, help="the judge route's daily request budget")
    p.add_argument("--saved-judgments", type=Path, metavar="DIR",
                   help="where judgments are saved and reused (default: judgments/ beside --dir)")
    p.add_argument("--changed", action="store_true",
                   help="grade again the cells whose answer, key or rubric changed, keeping their earlier grades")
    route = p.add_mutually_exclusive_group()
    route.add_argument("--start-only", action="store_true",
                       help="start the grading folder (its blind order) and send nothing")
    route.add_argument("--export-requests", type=Path, metavar="OUT",
                       help="write every request a run would send now as OUT/<n>.request.txt; send nothing")
    route.add_argument("--import-replies", type=Path, metavar="OUT",
                       help="read OUT/<n>.reply.json replies to exported requests and record them (route file)")
