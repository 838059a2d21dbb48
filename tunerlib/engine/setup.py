"""Setting a run up, before its first request: the identity rows (program version, machine, run), the
seed, the resumed run it continues, the root technique bound to the space, and the search driver.

Called from ``TuningRun.__init__``; the ``tuning_run`` row is written only after the options, the
technique and the seed configurations were checked, so a bad start leaves no run behind.
"""
from __future__ import annotations

import os
import random
import socket
from functools import partial
from dataclasses import asdict
from typing import Any

from ..errors import UsageError
from ..executors.measurement import RequestWriter
from ..multiobjective import check_technique, objective_count, run_args
from ..objectives import UNIT_KEY
from ..priorfile import PRIOR_KEY, apply_prior
from ..techniques import Technique, create_technique, generate_bandit, registry
from .cross_session import prepare_technique
from .limits import request_limit
from .resume import select_run, stored_techniques
from .search import SearchDriver
from .seeds import checked_seed_configurations

__all__ = ["bound_technique", "new_search", "set_up"]


def set_up(run: Any) -> None:
    opts = run.options
    run.pv_id = run.db.program_version_id(
        run.interface.project_name(), run.interface.program_name(), run.interface.program_version(),
        run.manipulator.parameter_info())
    run.machine_id = run.db.machine_id(socket.gethostname(), opts.machine_class, os.cpu_count())
    run.resumed_from = (select_run(run.db, run.pv_id, opts, run.interface.program_name(), run.objective,
                                    run.interface.script_version()) if opts.resume_target else None)
    run.resumed = run.resumed_from is not None
    run.seed = choose_seed(run)
    run.prior = apply_prior(run.manipulator, getattr(opts, "prior", None),
                            (run.resumed_from["args"] or {}) if run.resumed else None)
    run.technique = bound_technique(run, "")
    run.seeds = checked_seed_configurations(run.manipulator, run.interface.seed_configurations(),
                                             opts.seed_configuration)
    owner = {"host": socket.gethostname(), "pid": os.getpid()}
    if run.resumed:
        run.run_id, run.uuid = run.resumed_from["id"], run.resumed_from["uuid"]
        run.db.take_run(run.run_id, **owner, script_version=run.interface.script_version())
    else:
        if opts.executor == "dask":  # an unreachable scheduler leaves no run behind
            from ..executors.dask import probe_scheduler
            probe_scheduler(opts.scheduler)
        run.run_id, run.uuid = run.db.create_run(
            run.pv_id, opts.label, {**asdict(opts), "seed": run.seed, UNIT_KEY: run.objective.unit,
                                         PRIOR_KEY: run.prior, **run_args(run.objective)},
            run.seed, run.machine_id,
            run.objective.describe(), **owner, script_version=run.interface.script_version())
    run.search = new_search(run)


def choose_seed(run: Any) -> int:
    opts = run.options
    if not run.resumed:
        return opts.seed if opts.seed is not None else random.SystemRandom().randrange(2**31)
    seed = run.resumed_from["seed"]
    if opts.seed is not None and seed is not None and opts.seed != seed:
        raise UsageError(f"--resume: run {run.resumed_from['uuid']} was started with --seed {seed}; "
                         f"drop --seed or pass --seed {seed}")
    return seed if seed is not None else (opts.seed or 0)


def technique_names(run: Any) -> tuple:
    """(names, generate, bandit C, bandit window) from the options; a resumed run keeps its own
    unless others are given."""
    opts = run.options
    if run.resumed and not opts.technique and not opts.generate_bandit_technique:
        args = run.resumed_from["args"] or {}
        return (stored_techniques(run.db, run.resumed_from["id"], args), bool(args.get("generate_bandit_technique")),
                args.get("bandit_c", 0.05), args.get("bandit_window", 500))
    return (list(opts.technique), bool(getattr(opts, "generate_bandit_technique", False)),
            opts.bandit_c, opts.bandit_window)


def bound_technique(run: Any, salt: str) -> Technique:
    """The root technique, bound to the space with the run's seed (and ``salt``)."""
    names, generate, c, window = technique_names(run)
    if generate and names:
        raise UsageError("--generate-bandit-technique and --technique exclude each other; "
                         "drop one of them")
    technique = (generate_bandit(registry(), run.manipulator, random.Random(f"{run.seed}:generate"),
                                 C=c, window=window)
                 if generate else create_technique(names, C=c, window=window))
    check_technique(technique, run.objective)
    prepare_technique(technique, run.options, run.manipulator, run.say, objective_count(run.objective))
    technique.bind(run.manipulator, random.Random(f"{run.seed}{salt}"), technique.name)
    return technique


def new_search(run: Any) -> SearchDriver:
    """The run's search driver over its technique: limits from the run's limit policy, results to the
    run's event sink, new requests to the run's request writer (``run.requests``, made here; none of the
    three refers to the run)."""
    run.requests = RequestWriter(run.db, run.run_id, run.pv_id)
    return SearchDriver(run.db, run.run_id, run.pv_id, run.manipulator, run.technique, run.objective,
                        limit=partial(request_limit, run.options, run.objective), on_result=run.events,
                        write=run.requests)
