"""``--prices FILE``: what tokens cost, per ``PRESET:MODEL``, to turn the summary's tokens into money (issue 24).

The file is a small YAML the owner writes (format ``assistant-eval.prices/1``, ``docs/results.md``):
input and output prices per million tokens for each model, in one currency. Every problem is
reported with the file and line, all at once. This module only prices token counts; it never
counts them (the summary does, from the records and the grading's ``usage.json``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["PRICES_FORMAT", "Price", "Prices", "PricesError", "load_prices", "route_key"]

PRICES_FORMAT = "assistant-eval.prices/1"


class PricesError(ValueError):
    """The prices file cannot be used; the message names each problem's file and line."""


@dataclass(frozen=True)
class Price:
    input_per_million: float
    output_per_million: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input_per_million + output_tokens * self.output_per_million) / 1_000_000


@dataclass
class Prices:
    path: Path
    currency: str
    models: dict[str, Price] = field(default_factory=dict)

    def price_of(self, key: str) -> Price | None:
        """The price of ``PRESET:MODEL``; the built-in reference assistants (``scripted:``) cost nothing."""
        if key.startswith("scripted:"):
            return Price(0.0, 0.0)
        return self.models.get(key)

    def cost(self, key: str, input_tokens: int | None, output_tokens: int | None) -> float | None:
        """The cost of these tokens, or None when the file has no price for ``key`` or nothing was reported."""
        price = self.price_of(key)
        if price is None or (input_tokens is None and output_tokens is None):
            return None
        return price.cost(int(input_tokens or 0), int(output_tokens or 0))

    def money(self, value: float | None) -> str:
        if value is None:
            return "–"
        return f"{value:,.4f} {self.currency}" if value < 1 else f"{value:,.2f} {self.currency}"


def route_key(preset: str | None, model_name: str | None) -> str:
    """The key a model has in a prices file: ``PRESET:MODEL``, as given to ``--model``."""
    return f"{preset}:{model_name}"


def load_prices(path: Path) -> Prices:
    """Read and check a prices file; every problem in one ``PricesError``, each as ``FILE:LINE: what``."""
    from pytest_assistant_eval.suites import suite_part

    _yamlsource = suite_part("calibration", "cases.yamlsource")
    Fields, Source = _yamlsource.Fields, _yamlsource.Source
    from pytest_assistant_eval.providers.presets import KNOWN_PRESETS

    errors: list = []
    src = Source(Path(path), errors)
    prices = Prices(Path(path), "USD")
    if src.root is not None:
        top = Fields(src, src.root, "the prices file", ("format", "currency", "models"))
        fmt = top.get("format", "str")
        if fmt is not None and fmt != PRICES_FORMAT:
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
                entry = Fields(src, value_node, f"{key}", ("input", "output"))
                given = [entry.get(name, "number") for name in ("input", "output")]
                for name, value in zip(("input", "output"), given):
                    if value is not None and value < 0:
                        src.error(entry.node_of(name), f"{key}: {name!r} must be 0 or more (a price per million "
                                                       f"tokens), not {value}")
                if all(v is not None and v >= 0 for v in given):
                    prices.models[key] = Price(float(given[0]), float(given[1]))
    if errors:
        raise PricesError("\n".join(str(e) for e in errors))
    return prices
