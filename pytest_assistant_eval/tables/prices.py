"""``--prices FILE``: what tokens cost, per ``PRESET:MODEL``, to turn the summary's tokens into money (issue 24).

The file is a small YAML the owner writes (format ``assistant-eval.prices/2``, ``docs/results.md``):
input and output prices per million tokens for each model, in one currency, and (format 2) the
price of input read from the provider's cache (``cached_input``) and written to it
(``cache_write``); a cached token without its own price costs the input price, never nothing.
Format 1 files (no cache prices) are still read. Every problem is reported with the file and
line, all at once. This module only prices token counts; it never counts them
(``tabular/usage.py`` does, from the records and the grading's ``usage.json``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["PRICES_FORMAT", "READABLE_PRICES_FORMATS", "Price", "Prices", "PricesError", "load_prices", "route_key"]

PRICES_FORMAT = "assistant-eval.prices/2"
#: Formats still read: 1 has no cache prices.
READABLE_PRICES_FORMATS = ("assistant-eval.prices/1", PRICES_FORMAT)


class PricesError(ValueError):
    """The prices file cannot be used; the message names each problem's file and line."""


@dataclass(frozen=True)
class Price:
    input_per_million: float
    output_per_million: float
    cached_input_per_million: float | None = None  # None: the input price
    cache_write_per_million: float | None = None  # None: the input price

    def cost(self, input_tokens: int, output_tokens: int, cached_input_tokens: int = 0,
             cache_write_tokens: int = 0) -> float:
        """``input_tokens`` count every input token, the cached and the written ones among them."""
        cached = self.input_per_million if self.cached_input_per_million is None else self.cached_input_per_million
        written = self.input_per_million if self.cache_write_per_million is None else self.cache_write_per_million
        plain = max(0, input_tokens - cached_input_tokens - cache_write_tokens)
        return (plain * self.input_per_million + cached_input_tokens * cached + cache_write_tokens * written
                + output_tokens * self.output_per_million) / 1_000_000


@dataclass
class Prices:
    path: Path
    currency: str
    models: dict[str, Price] = field(default_factory=dict)

    def price_of(self, key: str) -> Price | None:
        """The price of ``PRESET:MODEL``; the built-in reference assistants (``scripted:``) cost nothing
        unless the file gives them a price (to try the cost figures out on the demo)."""
        if key in self.models:
            return self.models[key]
        if key.startswith("scripted:"):
            return Price(0.0, 0.0)
        return None

    def cost(self, key: str, input_tokens: int | None, output_tokens: int | None, cached_input_tokens: int | None = 0,
             cache_write_tokens: int | None = 0) -> float | None:
        """The cost of these tokens, or None when the file has no price for ``key`` or nothing was reported."""
        price = self.price_of(key)
        if price is None or (input_tokens is None and output_tokens is None):
            return None
        return price.cost(int(input_tokens or 0), int(output_tokens or 0), int(cached_input_tokens or 0),
                          int(cache_write_tokens or 0))

    def cost_of(self, key: str, usage: Any) -> float | None:
        """The cost of a ``usage.UsageCount`` (None: no price for ``key``)."""
        return self.cost(key, usage.input_tokens, usage.output_tokens, usage.cached_input_tokens,
                         usage.cache_write_tokens)

    def money(self, value: float | None) -> str:
        if value is None:
            return "–"
        return f"{value:,.4f} {self.currency}" if value < 1 else f"{value:,.2f} {self.currency}"


def route_key(preset: str | None, model_name: str | None) -> str:
    """The key a model has in a prices file: ``PRESET:MODEL``, as given to ``--model``.

    A line's ``model_name`` of a model run with generation settings ends in them
    (``gpt-4.1 (temperature=0.2)``, issue 33): its price is the model's."""
    if model_name and model_name.endswith(")") and " (" in model_name:
        model_name = model_name.rsplit(" (", 1)[0]
    return f"{preset}:{model_name}"


def load_prices(path: Path) -> Prices:
    """Read and check a prices file; every problem in one ``PricesError``, each as ``FILE:LINE: what``."""
    from pytest_assistant_eval.yaml_source import Fields, Source  # the case files' reader (issue 32: below both)
    from pytest_assistant_eval.providers.presets import KNOWN_PRESETS

    errors: list = []
    src = Source(Path(path), errors)
    prices = Prices(Path(path), "USD")
    if src.root is not None:
        top = Fields(src, src.root, "the prices file", ("format", "currency", "models"))
        fmt = top.get("format", "str")
        if fmt is not None and fmt not in READABLE_PRICES_FORMATS:
            src.error(top.node_of("format"), f"format {fmt!r} is not {PRICES_FORMAT!r}")
        currency = top.get("currency", "str", required=False)
        if currency is not None:
            prices.currency = currency.strip()
        models = top.get("models", "map")
        if models is not None:
            for key_node, value_node in models.value:
                key = src.value(key_node)
                if not isinstance(key, str) or ":" not in key or key.split(":", 1)[0] not in KNOWN_PRESETS:
                    src.error(key_node, f"{key!r} is not PRESET:MODEL with a known preset "
                                        f"({', '.join(KNOWN_PRESETS)})")
                    continue
                if key in prices.models:
                    src.error(key_node, f"{key!r} is given twice")
                    continue
                cache_keys = ("cached_input", "cache_write") if fmt != READABLE_PRICES_FORMATS[0] else ()
                entry = Fields(src, value_node, f"{key}", ("input", "output", *cache_keys))
                given = [entry.get(name, "number") for name in ("input", "output")]
                cache = [entry.get(name, "number", required=False) for name in cache_keys] + [None] * (2 - len(cache_keys))
                for name, value in zip(("input", "output", *cache_keys), [*given, *cache]):
                    if value is not None and value < 0:
                        src.error(entry.node_of(name), f"{key}: {name!r} must be 0 or more (a price per million "
                                                       f"tokens), not {value}")
                if all(v is not None and v >= 0 for v in given) and all(v is None or v >= 0 for v in cache):
                    prices.models[key] = Price(float(given[0]), float(given[1]),
                                               *(None if v is None else float(v) for v in cache))
    if errors:
        raise PricesError("\n".join(str(e) for e in errors))
    return prices
