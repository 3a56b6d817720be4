"""pytest-assistant-eval: measure what tool-using assistants do, ask and report.

The stages talk through files (see ``docs/``): ``world`` builds the grounding world,
``run`` (through the opt-in pytest plugin) writes one record per cell, ``grading``
turns records into verdicts and ``tables`` prints them.
"""

from pytest_assistant_eval.records import HARNESS_VERSION as __version__

__all__ = ["__version__"]
