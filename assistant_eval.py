"""Shim so that ``pytest -p assistant_eval`` loads the opt-in plugin (no entry point).

Every public name of the plugin module (its hooks and its fixture) is re-exported, so
pytest finds them on this module.
"""

from pytest_assistant_eval.plugin import *  # noqa: F401,F403
