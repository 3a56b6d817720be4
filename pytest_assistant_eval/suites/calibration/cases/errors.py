"""Case-file errors (S2.5): every problem names its file, its line and what is wrong.

Loaders collect :class:`CaseError` values instead of raising on the first one, so the
owner sees every error of every case file at once, before anything runs. Both live in
``yaml_source.py`` beside the reader that makes them (issue 32: the prices file reads YAML the
same way); this module keeps the case loaders' name for them.
"""

from __future__ import annotations

from pytest_assistant_eval.yaml_source import CaseError, CaseFileErrors

__all__ = ["CaseError", "CaseFileErrors"]
