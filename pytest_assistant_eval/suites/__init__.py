"""The suites a run can ask: the shipped calibration world and AgentDojo (docs/suites.md)."""
