"""The provider fault matrix of issue 23 (items 3, 6, 7, 8): every fault classified, memory flat.

Against the fake servers on 127.0.0.1, for every preset: the reply shapes a wire format does not
have (whole and streamed), a 10 MB answer for 1,024 tokens (streamed and whole: its stop, the
bytes read and the peak memory of the request), the holds beyond a day (Retry-After 999999999,
1e999, a date in the year 9999, "try again in 99999999h") and the slow servers (a body dribbled
byte by byte, headers dribbled byte by byte, silence) under a 1 s deadline. Then a fuzz of
mutated valid answers straight at each wire format's parsers.

Printed: one line per fault kind with how many were classified as expected, and the totals
(faults, classified, uncaught: the goal is every fault classified and 0 uncaught).

    python benchmarks/fault_matrix_bounds.py [--fuzz 2000]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import tracemalloc
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from pytest_assistant_eval.messages import ChatRequest, Message  # noqa: E402
from pytest_assistant_eval.providers.errors import ProviderError, RetryPolicy  # noqa: E402
from pytest_assistant_eval.providers.presets import make_provider  # noqa: E402
from tests.providers.fakes import Raw  # noqa: E402
from tests.providers.fakes.shapes import replaced  # noqa: E402
from tests.providers.fakes.presets import PRESET_FAKES  # noqa: E402
from tests.providers.fakes.shapes import (  # noqa: E402
    WIRE,
    WIRES,
    big_stream,
    big_whole,
    odd_wholes,
    stream_lines,
    stream_raw,
    valid_stream,
    valid_whole,
    whole_raw,
)
from tests.providers.fakes.slow import DribblingServer  # noqa: E402

PRESETS = ["openai", "openrouter", "openai-compatible", "anthropic", "gemini", "ollama"]
ONE_TRY = RetryPolicy(max_attempts=1)
FAR_HOLDS = [({"retry-after": "999999999"}, "Slow down."), ({"retry-after": "1e999"}, "Slow down."),
             ({"retry-after": "Fri, 31 Dec 9999 23:59:59 GMT"}, "Slow down."),
             ({}, "Slow down. Please try again in 99999999h.")]


def ask(provider, max_output_tokens: int = 1024):
    return provider.complete(ChatRequest(model=provider.model, messages=[Message(role="user", content="hi")],
                                         tools=[], max_output_tokens=max_output_tokens))


class Tally:
    def __init__(self) -> None:
        self.rows: dict[str, Counter[str]] = {}
        self.notes: list[str] = []

    def add(self, kind: str, outcome: str) -> None:
        self.rows.setdefault(kind, Counter())[outcome] += 1


def outcome_of(call, expected: str) -> str:
    try:
        response = call()
    except ProviderError as error:
        return "classified" if error.code == expected else f"other code {error.code}"
    except Exception as exc:  # noqa: BLE001 - counting what escapes is the point
        return f"uncaught {type(exc).__name__}"
    return "classified" if response.stop_reason == expected else f"answered {response.stop_reason}"


def served(preset: str, stream: bool, item, **kwargs):
    cls, suffix, model = PRESET_FAKES[preset]
    fake = cls()
    fake.add(item)
    provider = make_provider(preset, model, base_url=fake.url + suffix, key="k", stream=stream,
                             retry=ONE_TRY, sleep=lambda s: None, **kwargs)
    return fake, provider


def run_matrix(tally: Tally) -> None:
    for preset in PRESETS:
        wire = WIRE[preset]
        for name, data in odd_wholes(wire).items():
            fake, provider = served(preset, False, whole_raw(data))
            with fake, provider:
                tally.add("reply shapes (whole)", outcome_of(lambda: ask(provider), "unreadable_answer"))
        events = valid_stream(wire)
        if wire == "openai":
            events[0] = {"choices": ["surprise"]}
        elif wire == "anthropic":
            events[2]["delta"]["text"] = 42
        elif wire == "gemini":
            events[0]["candidates"][0]["content"]["parts"][0]["text"] = 42
        else:
            events[0]["message"]["content"] = 42
        fake, provider = served(preset, True, stream_raw(wire, events))
        with fake, provider:
            tally.add("reply shapes (streamed)", outcome_of(lambda: ask(provider), "unreadable_answer"))
        for stream in (True, False):
            item = big_stream(wire, 10_000_000) if stream else big_whole(wire, 10_000_000)
            fake, provider = served(preset, stream, item)
            with fake, provider:
                tracemalloc.start()
                started = time.perf_counter()
                result = outcome_of(lambda: ask(provider), "oversized")
                seconds = time.perf_counter() - started
                peak = tracemalloc.get_traced_memory()[1]
                tracemalloc.stop()
                tally.add("10 MB answer for 1,024 tokens", result)
                tally.notes.append(f"  {preset:<18} {'streamed' if stream else 'whole':<8} 10 MB answer: "
                                   f"{result}, peak {peak / 1e6:.1f} MB, {seconds:.2f} s")
        for headers, message in FAR_HOLDS:
            body = json.dumps({"error": {"message": message, "type": "requests", "code": "rate_limit_exceeded"}})
            status = 429
            fake, provider = served(preset, False, Raw(status, {"content-type": "application/json", **headers},
                                                       body.encode()))
            with fake, provider:
                tally.add("hold beyond a day (429)", outcome_of(lambda: ask(provider), "daily_quota"))
        raw = stream_raw(wire, valid_stream(wire))
        body = raw.chunks[0]
        raw.chunks, raw.chunk_delay = [body[i:i + 1] for i in range(len(body))], 0.05
        fake, provider = served(preset, True, raw, deadline=1.0)
        with fake, provider:
            tally.add("slow server (1 s deadline)", outcome_of(lambda: ask(provider), "timeout"))
        fake, provider = served(preset, False, Raw(200, {"content-type": "application/json"}, b"{}", delay=30),
                                deadline=1.0)
        with fake, provider:
            tally.add("slow server (1 s deadline)", outcome_of(lambda: ask(provider), "timeout"))
    headers = (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nx-pad: " + b"p" * 200 +
               b"\r\ncontent-length: 2\r\n\r\n{}")
    with DribblingServer(headers, 0.05) as server:
        provider = make_provider("openai-compatible", "m", base_url=server.url + "/v1", stream=False,
                                 retry=ONE_TRY, deadline=1.0)
        with provider:
            tally.add("slow server (1 s deadline)", outcome_of(lambda: ask(provider), "timeout"))


def mutate(data, rng: random.Random):
    """``data`` with one part replaced by a value of another shape."""
    paths = []

    def walk(value, path):
        paths.append(path)
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, (*path, k))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, (*path, i))

    walk(data, ())
    path = rng.choice(paths)
    replacement = rng.choice([None, 42, -1, 1.5, "lots", "", [], ["surprise"], {}, {"x": 1}, True, [{"a": None}]])
    return replaced(data, path, replacement)


def run_fuzz(tally: Tally, count: int) -> None:
    rng = random.Random(23)
    parsers = {wire: make_provider({"openai": "openai"}.get(wire, wire), "m", key="k",
                                   base_url="http://127.0.0.1:9") for wire in WIRES}
    for n in range(count):
        wire = WIRES[n % len(WIRES)]
        parser = parsers[wire]
        if n % 2:
            data = mutate(valid_whole(wire), rng)
            call = lambda: parser.read_whole(data, {})  # noqa: E731
        else:
            events = valid_stream(wire)
            index = rng.randrange(len(events))
            if not isinstance(events[index], str):
                events[index] = mutate(events[index], rng)
            call = lambda: parser.read_stream(stream_lines(wire, events), {})  # noqa: E731
        try:
            call()
            tally.add("fuzzed reply shapes (parsers)", "classified")
        except ProviderError:
            tally.add("fuzzed reply shapes (parsers)", "classified")
        except Exception as exc:  # noqa: BLE001
            tally.add("fuzzed reply shapes (parsers)", f"uncaught {type(exc).__name__}")
    for parser in parsers.values():
        parser.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fuzz", type=int, default=2000, help="mutated answers thrown at the parsers")
    args = parser.parse_args()
    tally = Tally()
    started = time.perf_counter()
    run_matrix(tally)
    run_fuzz(tally, args.fuzz)
    total = classified = uncaught = 0
    for kind, counts in tally.rows.items():
        n = sum(counts.values())
        total += n
        classified += counts["classified"]
        uncaught += sum(v for k, v in counts.items() if k.startswith("uncaught"))
        others = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()) if k != "classified")
        print(f"{kind:<32} {counts['classified']:>5}/{n:<5} classified{'  (' + others + ')' if others else ''}")
    print("\n".join(tally.notes))
    print(f"faults {total}, classified {classified}, uncaught {uncaught} ({time.perf_counter() - started:.1f} s)")
    return 0 if classified == total and uncaught == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
