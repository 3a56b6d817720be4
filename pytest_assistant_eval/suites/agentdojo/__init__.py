"""AgentDojo's suites run through our session (docs/agentdojo.md); needs the ``[agentdojo]`` extra."""

from pytest_assistant_eval.suites.agentdojo.light_import import install as _install_light_import

# Before any module of this package imports AgentDojo: its task suites without its model SDKs
# (light_import.py; a process that builds a pipeline still gets every real class on first use).
_install_light_import()
