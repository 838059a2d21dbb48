"""Warm start (beyond the thesis, §8.3): the best configurations of earlier runs of the same space.

Only runs uploaded with ``--include-configurations`` hold configurations. A run matches when its exact
search space (parameter names, ranges and constraints: the results database's ``parameter_info``) is
the one being tuned; from each matching run, newest first, its best configuration is taken, then the
second best of each, and so on, keeping only configurations that are valid and feasible here.
"""
from __future__ import annotations

import hashlib
from typing import Any, Dict, List, Tuple

from sqlalchemy import select

from ..parameters import ConfigurationError, ConfigurationManipulator, ParameterError
from . import schema as S
from .crosssession import CrossSessionStore

#: configurations --warm-start adds at most
WARM_START_COUNT = 5


def warm_start_choices(store: CrossSessionStore, manipulator: ConfigurationManipulator,
                       parameter_info: str, count: int = WARM_START_COUNT) -> List[Tuple[Dict[str, Any], str]]:
    """Up to ``count`` distinct stored configurations for this space (see the module docstring), each
    with the UUID of the stored run it comes from, in the order they are measured; called by
    ``--warm-start``, which says where they come from."""
    space_hash = hashlib.sha256(parameter_info.encode("utf-8")).hexdigest()
    query = (select(S.TuningRun.uuid, S.StoredConfiguration.rank, S.StoredConfiguration.data)
             .join(S.TuningRun, S.TuningRun.id == S.StoredConfiguration.tuning_run_id)
             .where(S.TuningRun.space_hash == space_hash)
             .order_by(S.StoredConfiguration.rank, S.TuningRun.start_date.desc(), S.TuningRun.id.desc()))
    out: List[Tuple[Dict[str, Any], str]] = []
    seen = set()
    with store.engine.connect() as conn:
        for uuid, _, data in conn.execute(query):
            try:
                config = manipulator.normalize(data)
            except (ConfigurationError, ParameterError, ValueError, TypeError):
                continue
            key = manipulator.hash_config(config)
            if key in seen or not manipulator.is_feasible(config):
                continue
            seen.add(key)
            out.append((config, uuid))
            if len(out) >= count:
                break
    return out
