"""The readers of numbers, dates and spans under their old name (issue 32 split them).

``quantities`` was one module of 1,273 lines; its readers now live by what they read:
``numbers`` (quantities in text), ``dates`` (dates, times, zones), ``spans`` (ids, cards,
phones: digits that are no amount), ``compare`` (conversion, definitions, constants),
``sources`` (tool results, provenance) and ``calculations`` (shown arithmetic). This module
keeps the old import names working; new code imports from the module that reads.
"""

from __future__ import annotations

from pytest_assistant_eval.reading.calculations import Calculation, find_calculations
from pytest_assistant_eval.reading.compare import CONSTANTS, find_definitions, is_constant, same_quantity, to_base
from pytest_assistant_eval.reading.dates import DateMention, find_dates, zone_offset
from pytest_assistant_eval.reading.numbers import Quantity, find_quantities, split_unit
from pytest_assistant_eval.reading.sources import is_sourced, numbers_in_json, unit_from_key
from pytest_assistant_eval.reading.units import UNITS, canonical_unit

__all__ = [
    "Quantity",
    "DateMention",
    "Calculation",
    "UNITS",
    "CONSTANTS",
    "find_quantities",
    "find_dates",
    "to_base",
    "same_quantity",
    "numbers_in_json",
    "unit_from_key",
    "is_sourced",
    "find_calculations",
    "is_constant",
    "canonical_unit",
    "split_unit",
    "find_definitions",
    "zone_offset",
]
