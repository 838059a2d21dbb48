"""Encoding half of technique names (see :mod:`.naming` for the grammar and the parser).

Kept apart from :mod:`.naming`, which needs the technique bases to parse names, so that
:mod:`.composable` can name its techniques without importing the parser.
"""
from __future__ import annotations

import json
from typing import Any

from .operator_map import OperatorChoice

__all__ = ["SEP", "composable_name", "dump_value"]

SEP = "|"


def dump_value(value: Any) -> str:
    """Compact JSON of a name's value, without whitespace."""
    # compact JSON has no whitespace outside strings; spaces inside strings are escaped as \u0020
    # (other whitespace is already escaped by JSON / ensure_ascii), so names never contain whitespace
    return json.dumps(value, separators=(",", ":"), ensure_ascii=True, allow_nan=False).replace(" ", "\\u0020")


def encode_entry(kind: str, choice: OperatorChoice) -> str:
    """One ``kind;op;[args..., [[kw, value], ...]]`` entry of an operator map."""
    pairs = [[k, choice.kwargs[k]] for k in sorted(choice.kwargs)]
    return f"{kind};{choice.op};{dump_value(list(choice.args) + [pairs])}"


def composable_name(tech: Any) -> str:
    """The generated name of a composable technique: root, hyper-parameters, operator-map entries."""
    hp = tech.option_values()
    base = ";".join([tech.root_name()] + [f"{n},{dump_value(hp[n])}" for n in sorted(hp)])
    entries = [encode_entry(k, tech.operator_map[k]) for k in sorted(tech.operator_map)]
    return SEP.join([base] + entries)
