"""Cases (S2): the question set, the answer key and tasks, their loading and validation,
argument matchers and final-state checks. See ``docs/cases.md`` for the file formats."""

from .errors import CaseError, CaseFileErrors
from .load import load_answer_key, load_cases, load_question_set, load_tasks
from .matchers import example_value, matches
from .model import (
    AnswerKey,
    Approval,
    CaseSet,
    Derivation,
    Fact,
    ForbiddenClaim,
    KeyEntry,
    Matcher,
    Question,
    QuestionSet,
    RequiredAction,
    Restriction,
    Scenario,
    StateAssertion,
    Task,
    ToolCallSpec,
    UserFact,
)
from .refs import RefError, plan_rounds, resolve_args
from .state_checks import StateMismatch, check_state
from .tasks import policy_for, task_facts

__all__ = [
    "AnswerKey", "Approval", "CaseError", "CaseFileErrors", "CaseSet", "Derivation", "Fact",
    "ForbiddenClaim", "KeyEntry", "Matcher", "Question", "QuestionSet", "RequiredAction",
    "Restriction", "Scenario", "StateAssertion", "StateMismatch", "Task", "ToolCallSpec",
    "UserFact", "check_state", "example_value", "load_answer_key", "load_cases",
    "load_question_set", "load_tasks", "matches", "plan_rounds", "policy_for", "RefError",
    "resolve_args", "task_facts",
]
