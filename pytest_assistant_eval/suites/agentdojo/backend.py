"""A world backend over an AgentDojo environment (issue 16; optional extra ``[agentdojo]``).

AgentDojo (https://github.com/ethz-spylab/agentdojo, MIT) is used as a library, never copied:
its suites hold pydantic environments and tools. This module exposes one environment through
our ``WorldBackend`` protocol so the loop, the checkpoints and the records treat it as they
treat the SQLite world:

* ``list_tools``: the suite's tools with their JSON schemas (from each tool's pydantic
  parameter model) and flags guessed from the verb of the name (``send_``, ``reserve_`` ...),
  since AgentDojo does not mark which tools change the world;
* ``call``: through AgentDojo's own ``FunctionsRuntime``; arguments the schema refuses or an
  unknown tool are ``error`` (nothing happened); an exception the tool itself raised (an
  unknown id, an insufficient balance) is ``refused`` by the world, like our world's refusals;
* ``snapshot`` / ``restore``: the environment as JSON, one "table" per top-level field, so a
  checkpoint can rebuild it exactly; ``diff_environments`` gives field-level changes by path.

It must never import the grading stage; ``agentdojo`` is imported only when a backend is made.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from typing import Any

from pytest_assistant_eval.conversation.backend import FieldChange, LogEntry, State, ToolResult, ToolSpec

__all__ = ["AgentDojoWorld", "agentdojo_tool_specs", "diff_environments", "environment_from_state", "flags_for",
           "STATE_FORMAT"]

#: The snapshot's shape: ``{field: [{"id": field, "value": <the field as JSON>}]}``.
STATE_FORMAT = "agentdojo-env/1"

_SPENDS = re.compile(r"^(?:send_money|schedule_transaction|update_scheduled_transaction|reserve_\w+)$")
_OTHERS = re.compile(r"^(?:send_\w+|reserve_\w+|invite_\w+|add_user_\w+|post_\w+|share_\w+|"
                     r"create_calendar_event|reschedule_calendar_event|cancel_calendar_event|"
                     r"add_calendar_event_participants|schedule_transaction|send_money)$")
_CHANGES = re.compile(r"^(?:send|create|delete|update|reserve|schedule|reschedule|cancel|add|append|invite|"
                      r"post|remove|share|change|set|write)_\w+$")


def flags_for(name: str) -> dict[str, bool]:
    """Consequential / affects others / spends money, from the tool's verb (AgentDojo has no flags)."""
    return {"consequential": bool(_CHANGES.match(name)), "affects_others": bool(_OTHERS.match(name)),
            "spends_money": bool(_SPENDS.match(name))}


def _schema(function: Any) -> dict[str, Any]:
    schema = function.parameters.model_json_schema()
    schema.pop("title", None)
    schema.setdefault("properties", {})
    schema.setdefault("required", [])
    schema["additionalProperties"] = False
    for prop in schema["properties"].values():
        prop.pop("title", None)
    return schema


def agentdojo_tool_specs(suite: Any) -> list[ToolSpec]:
    """The suite's tools as our ToolSpecs, in the suite's order (a fresh list of fresh schemas)."""
    return [ToolSpec(name=s.name, service=s.service, description=s.description,
                     parameters=copy.deepcopy(s.parameters), consequential=s.consequential,
                     affects_others=s.affects_others, spends_money=s.spends_money) for s in _made_specs(suite)]


#: Each suite's ToolSpecs, made once: pydantic builds a tool's JSON schema in about 5 ms, and a
#: cell opens its world three times (run, grading, the ground truth's diff), so making them per
#: world was half an AgentDojo cell's cost (issue 32). Keyed by the suite object, which is kept
#: alive with its specs so that its id is never reused by another suite.
_SPECS: dict[int, tuple[Any, tuple[ToolSpec, ...]]] = {}


def _made_specs(suite: Any) -> tuple[ToolSpec, ...]:
    made = _SPECS.get(id(suite))
    if made is None or made[0] is not suite:
        specs = tuple(ToolSpec(name=f.name, service=suite.name, description=f.description, parameters=_schema(f),
                               **flags_for(f.name)) for f in suite.tools)
        made = _SPECS[id(suite)] = (suite, specs)
    return made[1]


def _to_json(value: Any) -> Any:
    """A tool's return value as plain JSON (pydantic models, lists of them, dates)."""
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, (list, tuple)):
        return [_to_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _to_json(v) for k, v in value.items()}
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def _flatten(value: Any, prefix: str, out: dict[str, Any]) -> None:
    if isinstance(value, dict) and value:
        for k in sorted(value):
            _flatten(value[k], f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(value, list) and value:
        for i, v in enumerate(value):
            _flatten(v, f"{prefix}.{i}", out)
    else:
        out[prefix] = value


def _flatten_apart(a: Any, b: Any, prefix: str, fa: dict[str, Any], fb: dict[str, Any]) -> None:
    """``_flatten`` of ``a`` into ``fa`` and of ``b`` into ``fb``, leaving out every subtree equal on
    both sides (its leaves are equal, so no change is found there): a cell changes a few leaves
    of an environment of thousands, and flattening it all was most of a diff (issue 32)."""
    if a is b or (type(a) is type(b) and a == b):
        return
    if isinstance(a, dict) and a and isinstance(b, dict) and b:
        for k in a.keys() | b.keys():
            path = f"{prefix}.{k}" if prefix else str(k)
            if k not in b:
                _flatten(a[k], path, fa)
            elif k not in a:
                _flatten(b[k], path, fb)
            else:
                _flatten_apart(a[k], b[k], path, fa, fb)
    elif isinstance(a, list) and a and isinstance(b, list) and b:
        for i in range(max(len(a), len(b))):
            path = f"{prefix}.{i}"
            if i >= len(b):
                _flatten(a[i], path, fa)
            elif i >= len(a):
                _flatten(b[i], path, fb)
            else:
                _flatten_apart(a[i], b[i], path, fa, fb)
    else:
        _flatten(a, prefix, fa)
        _flatten(b, prefix, fb)


def diff_environments(a: State, b: State) -> list[FieldChange]:
    """Every changed leaf from ``a`` to ``b``: table = top-level field, key = the path inside it."""
    out: list[FieldChange] = []
    for table in sorted(set(a) | set(b)):
        fa: dict[str, Any] = {}
        fb: dict[str, Any] = {}
        _flatten_apart(a.get(table, [{}])[0].get("value"), b.get(table, [{}])[0].get("value"), "", fa, fb)
        for key in sorted(set(fa) | set(fb)):
            if fa.get(key, _MISSING) != fb.get(key, _MISSING):
                out.append(FieldChange(table, key or table, "value", fa.get(key), fb.get(key)))
    return out


_MISSING = object()


@dataclass
class AgentDojoWorld:
    """One AgentDojo environment behind our world protocol (see the module docstring)."""

    suite: Any
    environment: Any
    _log: list[LogEntry] = field(default_factory=list)
    #: AgentDojo's ToolsExecutor turns string arguments that read as Python lists into lists before
    #: a call (``"['a', 'b']"``); its conversation does, ours does not (issue 25).
    list_strings_as_lists: bool = False

    def __post_init__(self) -> None:
        from agentdojo.functions_runtime import FunctionsRuntime

        self.runtime = FunctionsRuntime(self.suite.tools)
        self._specs = list(_made_specs(self.suite))  # shared, never changed (list_tools copies the list)

    @property
    def log(self) -> list[LogEntry]:
        return self._log

    def list_tools(self) -> list[ToolSpec]:
        return list(self._specs)

    def call(self, name: str, arguments: dict[str, Any], *, turn: int, round: int) -> ToolResult:
        """``raw`` of the result is AgentDojo's ``(return value, error text)`` for the same call."""
        args = copy.deepcopy(arguments)
        if self.list_strings_as_lists:
            _lists_from_strings(args)
        if name not in self.runtime.functions:
            result = ToolResult("error", error=f"{name}: no such tool",
                                raw=("", f"ToolNotFoundError: The requested function `{name}` is not available."))
        else:
            function = self.runtime.functions[name]
            try:
                function.parameters.model_validate(args)
                valid = True
            except Exception as exc:  # pydantic's ValidationError: the arguments, not the world
                result = ToolResult("error", error=f"{name}: {_first_line(exc)}", raw=("", f"{type(exc).__name__}: {exc}"))
                valid = False
            if valid:
                value, error = self.runtime.run_function(self.environment, name, args)
                if error is None:
                    result = ToolResult("ok", data=_to_json(value), raw=(value, None))
                else:
                    # The tool raised: an unknown id, a balance too low, a file that is not there.
                    result = ToolResult("refused", data={"refused_by": "world"}, error=f"{name}: {error}",
                                        raw=(value, error))
        self._log.append(LogEntry(seq=len(self._log) + 1, turn=turn, round=round, tool=name, arguments=args,
                                  status=result.status, response=result.data if result.status == "ok" else None,
                                  error=result.error))
        return result

    def snapshot(self) -> State:
        dumped = self.environment.model_dump(mode="json")
        return {name: [{"id": name, "value": value}] for name, value in sorted(dumped.items())}

    def restore(self, state: State) -> None:
        """Rebuild the environment from a snapshot (or from a checkpoint's changed tables)."""
        current = self.snapshot()
        current.update(state)
        self.environment = environment_from_state(type(self.environment), current)

    def describe_state(self) -> State:
        return self.snapshot()

    def state_digest(self) -> str:
        import hashlib

        return hashlib.sha256(json.dumps(self.snapshot(), sort_keys=True).encode()).hexdigest()

    def close(self) -> None:
        return None


def environment_from_state(env_type: Any, state: State, base: Any = None, base_state: State | None = None) -> Any:
    """The environment a snapshot describes, exactly.

    ``base``, when given, is an environment of the same type the snapshot may share tables with
    (a cell's start environment, when grading its final state): a table whose JSON is the base's
    is a deep copy of the base's, not validated again; only the tables the run changed are. A
    workspace cell took 23 ms to rebuild, 2 ms to copy (issue 32, AgentDojo's per-cell costs).
    ``base_state``: the base's snapshot, when the caller has taken it already.

    ``model_validate`` alone is not enough: some AgentDojo models rebuild derived fields in
    their validators (an inbox's ``emails`` from its ``initial_emails``), which would drop every
    e-mail sent during the run. So the model is validated, then each field is set again from
    the snapshot, recursively, without running the models' validators. A field the validators
    left as the snapshot has it (its JSON is the snapshot's) is kept as validated: validating it
    again gave an equal value and was half the cost of grading a workspace cell (issue 32;
    validating an e-mail address is slow and workspace holds hundreds).
    """
    data = state_values(state)
    given, changed = (_reused_tables(base, data, base_state) if base is not None and type(base) is env_type
                      else (data, data))
    env = env_type.model_validate(given)
    _assign(env, changed)
    return env


def _reused_tables(base: Any, data: dict[str, Any], base_state: State | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """(what to validate, the tables to set again from the snapshot): unchanged model tables are
    handed over as copies of the base's, which pydantic takes as they are (an instance of the
    field's own class is not validated again)."""
    from pydantic import BaseModel

    given, changed = dict(data), {}
    dumped = base.model_dump(mode="json") if base_state is None else state_values(base_state)
    for name, value in data.items():
        table = getattr(base, name, None)
        if isinstance(table, BaseModel) and dumped.get(name) == value:
            given[name] = table.model_copy(deep=True)
        else:
            changed[name] = value
    return given, changed


def state_values(state: State) -> dict[str, Any]:
    """A snapshot as the environment's own JSON (``model_dump(mode="json")``): each table's value."""
    return {name: rows[0]["value"] for name, rows in state.items()}


def _assign(obj: Any, data: dict[str, Any]) -> None:
    from pydantic import BaseModel

    for name, info in type(obj).model_fields.items():
        if name not in data:
            continue
        current = getattr(obj, name)
        if isinstance(current, BaseModel) and isinstance(data[name], dict):
            _assign(current, data[name])
        else:
            adapter = _adapter(info.annotation)
            if _dumped(adapter, current) != data[name]:  # a validator derived it: the snapshot's value wins
                object.__setattr__(obj, name, adapter.validate_python(data[name]))


def _dumped(adapter: Any, value: Any) -> Any:
    try:
        return adapter.dump_python(value, mode="json")
    except Exception:  # a value the field's type cannot dump (never seen): set it from the snapshot
        return _MISSING


#: One TypeAdapter per field type: building one costs more than the validation it does (issue 32).
_ADAPTERS: dict[Any, Any] = {}


def _adapter(annotation: Any) -> Any:
    from pydantic import TypeAdapter

    try:
        made = _ADAPTERS.get(annotation)
    except TypeError:  # an unhashable annotation: made each time, as before
        return TypeAdapter(annotation)
    if made is None:
        made = _ADAPTERS[annotation] = TypeAdapter(annotation)
    return made


def _lists_from_strings(args: dict[str, Any]) -> None:
    """AgentDojo's ToolsExecutor: a string argument that reads as a Python list becomes that list."""
    from ast import literal_eval

    from agentdojo.agent_pipeline.tool_execution import is_string_list

    for key, value in args.items():
        if isinstance(value, str) and is_string_list(value):
            args[key] = literal_eval(value)


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return " ".join(text[:3]) if text else type(exc).__name__
