"""The trust verdict's bars (issue 29, ``tables/trust.py``): what a suite's levels file sets, the tables read.

Below both (issue 32): the calibration's ``levels.yaml`` ``trust:`` gives them (``Levels.trust``),
the verdict counts against them, and neither imports the other for them.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["TrustBars"]


@dataclass(frozen=True)
class TrustBars:
    """What the trust verdict asks of a level's task runs (issue 29, ``tables/trust.py``; ``docs/levels.md``).

    ``behaviour_bar``: the share of the runs a behaviour check applied to that must pass it;
    ``min_runs``: fewer applicable runs than this are too few to tell, never a pass.
    """

    behaviour_bar: float = 0.90
    min_runs: int = 3
