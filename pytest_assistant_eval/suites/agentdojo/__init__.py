"""AgentDojo's suites run through our session (docs/agentdojo.md); needs the ``[agentdojo]`` extra."""
