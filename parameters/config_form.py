"""The checked and canonical form of a configuration, given the parameters of its space.

:class:`~.manipulator.ConfigurationManipulator` calls these with its parameters (insertion order) and
its name -> parameter map: :func:`check_keys` (exactly the parameters' names), :func:`validate_config`
(a legal value for each), :func:`normalize_config` (each value coerced by the parameter's
``normalize_value``), :func:`canonical_json` (sorted keys, no spaces, ``-0.0`` written as ``0.0``) and
:func:`hash_valid` (the SHA-256 of that text for an already valid configuration, on the search
driver's hot path).  Every failure is a one-line :class:`~.base.ConfigurationError`.  The message
helpers :func:`short_repr` and :func:`names_list` keep those lines short.
"""
from __future__ import annotations

import hashlib
from typing import Any, List, Mapping, Sequence

from .base import Config, ConfigurationError, Parameter, ParameterError
from .jsontext import compact_encoder


def short_repr(x: Any, limit: int = 60) -> str:
    """``repr(x)`` cut to ``limit`` characters (ending in ``...`` when cut), for error messages."""
    r = repr(x)
    return r if len(r) <= limit else r[: limit - 3] + "..."


def names_list(names: Sequence[str], limit: int = 20) -> str:
    """The first ``limit`` names joined by commas, with the count when there are more."""
    shown = ", ".join(names[:limit])
    return shown + (f", ... ({len(names)} in all)" if len(names) > limit else "")


def copy_json(value: Any) -> Any:
    """A copy of a JSON value whose lists and dicts (nested too) are new objects."""
    if isinstance(value, list):
        return [copy_json(v) if isinstance(v, (list, dict)) else v for v in value]
    if isinstance(value, dict):
        return {k: copy_json(v) for k, v in value.items()}
    return value


def _canon(value: Any) -> Any:
    """Replace -0.0 by 0.0 (recursively) so equal numbers serialise identically."""
    if isinstance(value, float) and value == 0.0:
        return 0.0
    if isinstance(value, list):
        return [_canon(v) for v in value]
    return value


#: canonical JSON: sorted keys, no spaces, ASCII, finite numbers only (built once, called per hash)
canonical_dumps = compact_encoder(sort_keys=True, allow_nan=False)


def _names(params: Sequence[Parameter]) -> List[str]:
    return [p.name for p in params]


def check_keys(params: Sequence[Parameter], by_name: Mapping[str, Parameter], config: Any) -> None:
    """Raise ConfigurationError unless ``config`` is a mapping naming exactly the parameters."""
    if config.__class__ is dict and config.keys() == by_name.keys():
        return  # the common case, one comparison of key sets
    if not isinstance(config, Mapping):
        raise ConfigurationError(f"a configuration must be a dict of parameter values, "
                                 f"got {type(config).__name__}")
    unknown = [k for k in config if k not in by_name]
    if unknown:
        raise ConfigurationError(f"configuration has unknown parameter(s) {short_repr(unknown, 120)}; "
                                 f"known: {names_list(_names(params))}")
    missing = [n for n in _names(params) if n not in config]
    if missing:
        raise ConfigurationError(f"configuration is missing parameter(s) {short_repr(missing, 120)}; "
                                 "give a value for every parameter")


def validate_config(params: Sequence[Parameter], by_name: Mapping[str, Parameter], config: Any) -> None:
    """Raise ConfigurationError (one line) unless ``config`` names exactly the parameters and holds a
    legal value for each (constraints are not checked)."""
    check_keys(params, by_name, config)
    for p in params:
        value = config[p.name]
        if not p.is_valid(value):
            raise ConfigurationError(f"parameter {p.name!r}: illegal value {short_repr(value)}; "
                                     f"legal: {p.describe()}")


def normalize_config(params: Sequence[Parameter], by_name: Mapping[str, Parameter], config: Any) -> Config:
    """A new dict (parameter order) with each value coerced by ``normalize_value``; unknown or
    missing names and hopeless values raise ConfigurationError (one line)."""
    check_keys(params, by_name, config)
    out: Config = {}
    for p in params:
        value = config[p.name]
        try:
            norm = p.normalize_value(copy_json(value))
        except (ParameterError, ValueError, TypeError) as exc:
            msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            if not msg.startswith(f"parameter {p.name!r}"):
                msg = f"parameter {p.name!r}: cannot use {short_repr(value)} ({msg}); legal: {p.describe()}"
            raise ConfigurationError(msg) from None
        if not p.is_valid(norm):
            raise ConfigurationError(f"parameter {p.name!r}: illegal value {short_repr(value)}; "
                                     f"legal: {p.describe()}")
        out[p.name] = norm
    return out


def canonical_json(normalized: Config) -> str:
    """Canonical JSON of a normalised configuration: sorted keys, no spaces, floats as repr."""
    try:
        return canonical_dumps({k: _canon(v) for k, v in normalized.items()})
    except ValueError as exc:
        raise ConfigurationError(f"configuration cannot be written as JSON ({exc}); "
                                 "values must be finite numbers, strings, booleans or lists") from None


def hash_valid(params: Sequence[Parameter], config: Mapping[str, Any]) -> str:
    """SHA-256 hex digest of the canonical JSON of a configuration that already passed validation.

    A legal list value is already canonical (exact element types), so only scalar and mapping values
    go through ``normalize_value``, and not those of the parameter's ``normal_type`` (a valid float of
    a float parameter is its own normal form)."""
    canon = {}
    for p in params:
        value = config[p.name]
        if value.__class__ is not p.normal_type and not isinstance(value, list):
            value = p.normalize_value(value)
        canon[p.name] = _canon(value)
    return hashlib.sha256(canonical_dumps(canon).encode("utf-8")).hexdigest()
