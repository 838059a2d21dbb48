"""Kernel Tuner cache files (``*.json`` / ``*.json.gz``) and T1 search-space specifications.

A Kernel Tuner cache is ``{device_name, kernel_name, problem_size, tune_params_keys,
tune_params, objective, cache}``.  Each cache key is ``",".join(str(v))`` of the parameter values
in ``tune_params_keys`` order; the entry holds the values again, ``time`` (mean, ms) and timing
fields.  The reader maps entries as follows:

* ``time`` a positive number -> OK record, value = ``time`` in seconds (the cache records ms;
  converted when read, the file stays as it is); a time that is zero, negative or not finite (JSON
  ``NaN``) is an error naming the file, the entry's line and key;
* ``time`` one of :data:`FAILED_MARKERS` -> failed record, reason = that string;
* configurations excluded by the constraints are absent -> "not measured" on lookup.

``simulated_s`` of a record is the time Kernel Tuner spent measuring it: the sum of the recorded
``compile_time``, ``verification_time`` and ``benchmark_time`` (those present, ms) / 1000.
``Record.extra`` keeps ``GFLOP/s`` and ``GB/s`` as recorded and the compile and benchmark times in
seconds (``compile_s``, ``benchmark_s``).
Parameters with a single value in ``tune_params`` are the table's constants; ``tune_params`` is
also the table's ``metadata["domains"]`` (the declared legal values of each parameter).

T1 specifications (``t1_specs/*.json``) list ``ConfigurationSpace.TuningParameters`` and
``Conditions`` (Python-syntax expressions).  :func:`t1_constraints` turns the conditions into
tunerlib expression strings: constants are replaced by their values (they are not search
parameters) and each result is checked by tunerlib's safe parser.
"""
from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from tunerlib.parameters import parse_expression
from tunerlib.replay import (Record, RecordedTable, TableBuilder, TableError, cached_parser, canonical_value,
                             open_text, recorded_time, substitute_constants, to_seconds)

#: strings Kernel Tuner writes in ``time`` for configurations that could not be measured
FAILED_MARKERS = ("RuntimeFailedConfig", "CompilationFailedConfig", "InvalidConfig")
#: recorded timing fields (ms) summed into ``simulated_s``
COST_FIELDS = ("compile_time", "verification_time", "benchmark_time")
#: the unit of every time a Kernel Tuner cache records
CACHE_UNIT = "ms"
#: recorded metrics copied into ``Record.extra`` when present: cache field -> (extra key, time in ms?)
EXTRA_FIELDS = {"GFLOP/s": ("GFLOP/s", False), "GB/s": ("GB/s", False), "compile_time": ("compile_s", True),
                "benchmark_time": ("benchmark_s", True)}
_REQUIRED = ("tune_params_keys", "tune_params", "cache")


def _load_json(path: Path) -> Dict[str, Any]:
    return _read_json(path)[0]


def _read_json(path: Path) -> Tuple[Dict[str, Any], str]:
    """(the file's JSON object, its text); ValueError (one line) for a file that is not one."""
    with open_text(path) as fh:
        text = fh.read()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg}, column {exc.colno}); "
                         "give a Kernel Tuner cache file (.json or .json.gz)") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: top level must be a JSON object; give a Kernel Tuner cache file")
    return data, text


def _entry_where(path: Path, text: str, key: str) -> str:
    """``FILE:LINE: cache entry 'KEY'`` for error messages (the line where the entry starts)."""
    at = text.find(json.dumps(key) + ":")
    return f"{path}:{text.count(chr(10), 0, max(at, 0)) + 1}: cache entry {key!r}"


def _entry_record(entry: Any, where: Callable[[], str]) -> Record:
    """The record of one cache entry (failed markers -> failed; times -> OK); ``where()`` names the
    entry in a :class:`~tunerlib.replay.TableError` for a time that is negative or not finite."""
    if not isinstance(entry, Mapping):
        raise TableError(f"{where()}: an entry must be a JSON object; the file is corrupt")
    cost = to_seconds(math.fsum(recorded_time(entry[f], where, f) for f in COST_FIELDS
                                if isinstance(entry.get(f), (int, float))), CACHE_UNIT)
    extra = {name: to_seconds(entry[f], CACHE_UNIT) if is_time else entry[f]
             for f, (name, is_time) in EXTRA_FIELDS.items() if isinstance(entry.get(f), (int, float))}
    t: Any = entry.get("time")
    if isinstance(t, str):
        if t not in FAILED_MARKERS:
            raise TableError(f"{where()}: unknown time marker {t!r}; expected a number or one of "
                             f"{FAILED_MARKERS}: correct the entry or delete it")
        return Record(None, t, cost, extra)
    if recorded_time(t, where, "time") == 0.0:
        raise TableError(f"{where()}: time 0 is not a measured time (Kernel Tuner records failures as "
                         f"{FAILED_MARKERS[0]} etc.); record a failure marker or delete the entry")
    return Record(to_seconds(float(t), CACHE_UNIT), None, cost, extra)


def read_kerneltuner_cache(path: Union[str, Path], name: Optional[str] = None,
                           duplicates: str = "median") -> RecordedTable:
    """Read a Kernel Tuner cache file into a :class:`RecordedTable` (called once per benchmark).

    The key order is ``tune_params_keys``; constants are the parameters with one value in
    ``tune_params``.  Metadata keeps ``device_name``, ``kernel_name``, ``problem_size``,
    ``objective``, ``tune_params`` (also as ``domains``) and ``recorded_unit`` (ms).  Raises ValueError
    (one line) for malformed files.
    """
    path = Path(path)
    data, text = _read_json(path)
    missing = [k for k in _REQUIRED if k not in data]
    if missing:
        raise ValueError(f"{path}: missing field(s) {missing}; not a Kernel Tuner cache file")
    keys: List[str] = list(data["tune_params_keys"])
    tune_params: Dict[str, List[Any]] = {k: list(v) for k, v in data["tune_params"].items()}
    absent = [k for k in keys if k not in tune_params]
    if absent:
        raise ValueError(f"{path}: tune_params lacks {absent} listed in tune_params_keys")
    builder = TableBuilder(name or path.name.split(".")[0], keys, duplicates)
    key_of = _key_parser(path, keys)
    for cache_key, entry in data["cache"].items():
        where = functools.partial(_entry_where, path, text, cache_key)
        builder.add(key_of(cache_key, entry), _entry_record(entry, where))
    constants = {k: v[0] for k, v in tune_params.items() if len(v) == 1 and k in keys}
    meta = {k: data.get(k) for k in ("device_name", "kernel_name", "problem_size", "objective")}
    meta["tune_params"] = meta["domains"] = tune_params
    meta["recorded_unit"] = CACHE_UNIT
    return builder.build(constants, str(path), meta)


def _key_parser(path: Path, keys: Sequence[str]):
    """A function mapping (cache key string, entry) to the canonical key, checked against the entry's
    own parameter fields when present (one line ValueError on disagreement)."""
    parsers = [cached_parser(lambda text, where: canonical_value(_parse_scalar(text)), f"{path}")
               for _ in keys]

    def parse(cache_key: str, entry: Mapping[str, Any]) -> Tuple[Any, ...]:
        parts = cache_key.split(",")
        if len(parts) != len(keys):
            raise ValueError(f"{path}: cache key {cache_key!r} has {len(parts)} values, expected {len(keys)}")
        key = tuple(p(t) for p, t in zip(parsers, parts))
        if any(k in entry and entry[k] != v for k, v in zip(keys, key)):
            raise ValueError(f"{path}: cache key {cache_key!r} disagrees with the entry's parameter "
                             "values; the file is corrupt")
        return key
    return parse


def _parse_scalar(text: str) -> Any:
    """An int, float or the string itself (cache key parts are str() of the values)."""
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def cache_key(values: Sequence[Any]) -> str:
    """Kernel Tuner's cache key of parameter values given in ``tune_params_keys`` order."""
    return ",".join(str(v) for v in values)


# --------------------------------------------------------------------------- T1 specifications
@dataclass(frozen=True)
class T1Spec:
    """A T1 search-space definition: ordered parameter values, defaults and condition strings."""

    name: str
    values: Dict[str, List[Any]]
    defaults: Dict[str, Any]
    conditions: List[Tuple[str, Tuple[str, ...]]]

    @property
    def constants(self) -> Dict[str, Any]:
        """Parameters with a single legal value."""
        return {k: v[0] for k, v in self.values.items() if len(v) == 1}


def read_t1_spec(path: Union[str, Path]) -> T1Spec:
    """Read a T1 JSON file (``ConfigurationSpace.TuningParameters`` / ``Conditions``)."""
    path = Path(path)
    data = _load_json(path)
    space = data.get("ConfigurationSpace")
    if not isinstance(space, dict) or "TuningParameters" not in space:
        raise ValueError(f"{path}: no ConfigurationSpace.TuningParameters; not a T1 specification")
    values: Dict[str, List[Any]] = {}
    defaults: Dict[str, Any] = {}
    for p in space["TuningParameters"]:
        raw = p["Values"]
        vals = json.loads(raw) if isinstance(raw, str) else list(raw)
        if not isinstance(vals, list) or not vals:
            raise ValueError(f"{path}: parameter {p.get('Name')!r} has no value list")
        values[p["Name"]] = vals
        d = p.get("Default")
        defaults[p["Name"]] = d[0] if isinstance(d, list) and len(d) == 1 else d
    conds = [(c["Expression"], tuple(c.get("Parameters", ()))) for c in space.get("Conditions", [])]
    return T1Spec(path.name.split(".")[0], values, defaults, conds)


def t1_constraints(spec: T1Spec, constants: Optional[Mapping[str, Any]] = None) -> List[str]:
    """The spec's conditions as tunerlib constraint expressions over the non-constant parameters.

    ``constants`` defaults to the spec's single-valued parameters.  Each expression is parsed by
    :func:`tunerlib.parameters.parse_expression` (ConstraintError when unsupported); conditions that
    read only constants are dropped when they hold and raise ValueError when they do not.
    """
    consts = spec.constants if constants is None else dict(constants)
    out: List[str] = []
    for text, _params in spec.conditions:
        expr_text = substitute_constants(text, consts)
        expr = parse_expression(expr_text)
        if not expr.names:
            if not expr.evaluate({}):
                raise ValueError(f"T1 spec {spec.name!r}: condition {text!r} is false for the constants; "
                                 "the search space is empty")
            continue
        out.append(expr_text)
    return out
