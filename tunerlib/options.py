"""Command-line options of every tuner script (argparse-dataclass).

Tuner scripts add their own options by inheritance::

    @dataclass
    class MyOptions(TuningOptions):
        '''Tune the block size of my kernel.'''      # the description --help prints

        size: int = field(default=100, metadata={"help": "problem size"})

``--help`` prints the class's own docstring as its description (a subclass without one gets its
interface's docstring instead of the signature ``@dataclass`` writes into ``__doc__``) and every
option's help with its default.  argparse-dataclass reads the real type hints, so a module defining
options must not use ``from __future__ import annotations``.
"""


import argparse
import importlib.util
import inspect
import math
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, Dict, List, Optional, Sequence, Type, TypeVar, cast

from argparse_dataclass import ArgumentParser

from .errors import UsageError
from .logs import LEVELS as LOG_LEVELS

#: tests stop here when neither --test-limit nor --stop-after is given
DEFAULT_TEST_CAP = 1000

#: the values of ``--executor``
EXECUTORS = ("local", "dask")

T = TypeVar("T", bound="TuningOptions")


def _opt(default, help: str, **kw):
    return field(default=default, metadata={"help": help, **kw})


@dataclass
class TuningOptions:
    """Options shared by every tuner script."""

    technique: List[str] = field(default_factory=list, metadata={
        "nargs": "+", "help": "technique name(s); several run under an AUC bandit "
                              "(default: the built-in default; see --list-techniques)"})
    list_techniques: bool = _opt(False, "list every registered technique and exit")
    generate_bandit_technique: bool = _opt(False, "use an AUC bandit over 5 random techniques (random "
                                                  "composable ones included), drawn from --seed")
    bandit_c: float = _opt(0.05, "exploration constant C of the AUC bandit made for several --technique "
                                 "names or --generate-bandit-technique")
    bandit_window: int = _opt(500, "sliding window (uses) of that AUC bandit")
    test_limit: Optional[int] = _opt(None, "stop after this many measurements "
                                           f"(default cap {DEFAULT_TEST_CAP} when --stop-after is not given)")
    stop_after: Optional[float] = _opt(None, "stop after this many seconds of wall time")
    parallelism: int = _opt(1, "measurements run concurrently, each in its own worker process")
    distributed: bool = _opt(False, "measure with `tunerlib worker` processes (on any machine that shares "
                                    "--database) instead of in this process; --parallelism N > 1 adds N "
                                    "local workers")
    queue_per_worker: int = _opt(1, "with --distributed or --executor dask: requests kept waiting per live "
                                    "worker (Dask: per worker thread), beyond the one it measures, so that "
                                    "a worker never waits for the search")
    executor: str = _opt("local", "what measures with --parallelism N > 1: local (worker processes on this "
                                  "machine) or dask (the workers of the Dask cluster at --scheduler; this "
                                  "process stores their results; needs the [dask] extra)",
                         choices=list(EXECUTORS))
    scheduler: Optional[str] = _opt(None, "with --executor dask: address of a running Dask scheduler, "
                                          "e.g. tcp://HOST:8786", metavar="ADDRESS")
    database: Optional[str] = _opt(None, "results database: a file path or SQLAlchemy URL "
                                         "(default ./tunerlib.db)")
    label: Optional[str] = _opt(None, "label stored with the tuning run (and matched by --resume)")
    seed: Optional[int] = _opt(None, "random seed; the same seed gives the same search")
    seed_configuration: List[str] = field(default_factory=list, metadata={
        "nargs": "+", "help": "JSON file(s), each one configuration (or a list of them) to measure first"})
    prior: Optional[str] = _opt(None, "JSON file of user priors on the parameters (Beta, probabilities, "
                                      "near a configuration; see the priors guide); a resumed run keeps its own",
                                metavar="FILE")
    print_params: bool = _opt(False, "print the search space parameters and exit")
    print_search_space_size: bool = _opt(False, "print log10 of the search space size and exit")
    resume: Optional[str] = _opt(None, "continue a run: without a value the latest run of this program "
                                       "(same --label) that has results, or the run with this UUID "
                                       "(a unique prefix will do); its results and seed are kept and "
                                       "count toward the limits", nargs="?", metavar="UUID")
    allow_version_change: bool = _opt(False, "with --resume: continue a run although the tuner script was "
                                             "edited since (its results and the new ones are pooled)")
    limit_multiplier: float = _opt(2.0, "time objectives: each measurement gets a time limit of this "
                                        "many times the best configuration's command wall time (its "
                                        "call_program(..., limit=limit)), or its reported time when it ran "
                                        "no such command (passed to run() as `limit`)")
    measurement_timeout: Optional[float] = _opt(None, "cap every measurement at this many seconds; one "
                                                      "still running then is stopped and recorded "
                                                      "TIMEOUT (default: no cap)")
    objectives: Optional[str] = _opt(None, "optimise several metrics at once and report their Pareto front: "
                                           "comma-separated metric names (time, energy, size, accuracy or a "
                                           "Result.extra key), each minimised unless written max:NAME, e.g. "
                                           "time,energy (default: the tuner's own objective)")
    quiet: bool = _opt(False, "print only the final summary")
    log_level: Optional[str] = _opt(None, "what tunerlib reports on stderr: debug, info, warning or error "
                                          "(default info; warning with --quiet)", choices=list(LOG_LEVELS))
    verbose: bool = _opt(False, "the same as --log-level debug", args=["-v", "--verbose"])
    display_frequency: float = _opt(5.0, "seconds between status lines (0: none)")
    results_log: Optional[str] = _opt(None, "CSV file: one line per measurement "
                                            "(elapsed s, test, value, best)")
    summary_json: Optional[str] = _opt(None, "write a JSON summary (best value and configuration, "
                                             "tests, states, elapsed seconds) to this path")
    machine_class: Optional[str] = _opt(None, "machine class recorded with every result")
    final_config: Optional[str] = _opt(None, "write the best configuration as JSON to this path")
    store: Optional[str] = _opt(None, "cross-session store: a file path or SQLAlchemy URL (default "
                                      "$TUNERLIB_STORE, else store.db in the user data directory)")
    upload: bool = _opt(False, "upload the run to the cross-session store when it ends")
    include_configurations: bool = _opt(False, "with --upload: also store the run's 10 best configurations "
                                               "(otherwise no configuration value leaves this machine)")
    warm_start: bool = _opt(False, "measure first the best stored configurations of earlier runs of "
                                   "this exact search space (uploaded with --include-configurations)")
    affinity_metric: Optional[str] = _opt(None, "how recommendation bandits score stored techniques: "
                                                "new-bests (new bests per request), improvement (relative "
                                                "improvement per request) or run-rank (rank of the runs "
                                                "they took part in)",
                                          choices=["new-bests", "improvement", "run-rank"])
    store_exclude: List[str] = field(default_factory=list, metadata={
        "nargs": "+", "help": "programs whose stored runs recommendations ignore (leave-one-out studies)"})
    no_starter_history: bool = _opt(False, "recommendations read only the cross-session store, never the "
                                           "starter history shipped with tunerlib (used when the store "
                                           "holds no run of a similar search space)")

    @classmethod
    def parse(cls: Type[T], args: Optional[Sequence[str]] = None, prog: Optional[str] = None,
              description: Optional[str] = None) -> T:
        """Parse command-line arguments (``sys.argv[1:]`` when ``args`` is None).

        ``description`` is what ``--help`` prints when the class has no docstring of its own.
        Values are not checked here: :meth:`validate` does that (called before a run starts)."""
        # argparse_dataclass's parser returns an instance of the dataclass, not a Namespace
        return cast(T, cls.parser(prog, description).parse_args(None if args is None else list(args)))

    @classmethod
    def parser(cls, prog: Optional[str] = None, description: Optional[str] = None) -> argparse.ArgumentParser:
        """The argument parser of these options: the class's docstring (else ``description``) as its
        description, every option's help followed by its default."""
        parser = ArgumentParser(cls, prog=prog, description=own_docstring(cls) or description,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
        defaults: Dict[str, Any] = {}
        for f in fields(cls):
            if f.default is not MISSING:
                defaults[f.name] = f.default
            elif f.default_factory is not MISSING:
                defaults[f.name] = f.default_factory()
        for action in parser._actions:
            if action.dest == "resume":  # a bare --resume means "the latest run"
                action.const = RESUME_LATEST
            if action.dest in defaults:
                action.help = _with_default(action.help, defaults[action.dest])
        return parser

    def validate(self) -> None:
        """Raise UsageError (one line naming the option and the fix) for a value that cannot work.

        Called by the run before it opens the database, so a bad value creates nothing."""
        _check(self.test_limit, "--test-limit", "a whole number of measurements >= 1", lambda v: v >= 1)
        _check(self.stop_after, "--stop-after", "a number of seconds > 0", lambda v: v > 0)
        _check(self.parallelism, "--parallelism", "a number of processes >= 1", lambda v: v >= 1)
        _check(self.queue_per_worker, "--queue-per-worker", "a number of requests >= 0", lambda v: v >= 0)
        _check(self.display_frequency, "--display-frequency", "a number of seconds >= 0 (0: none)",
               lambda v: v >= 0)
        _check(self.limit_multiplier, "--limit-multiplier", "a factor >= 1 (default 2.0)", lambda v: v >= 1)
        _check(self.bandit_c, "--bandit-c", "a number >= 0", lambda v: v >= 0)
        _check(self.bandit_window, "--bandit-window", "a number of uses >= 1", lambda v: v >= 1)
        _check(self.measurement_timeout, "--measurement-timeout", "a number of seconds > 0",
               lambda v: v > 0)
        _check_executor(self)

    @property
    def resume_target(self) -> Optional[str]:
        """None (start a new run), RESUME_LATEST, or the UUID (prefix) given to --resume."""
        if self.resume is None or self.resume is False:
            return None
        return RESUME_LATEST if self.resume is True else str(self.resume)


#: the value of a bare ``--resume``
RESUME_LATEST = "latest"


def own_docstring(cls: type) -> Optional[str]:
    """The docstring written in ``cls`` itself, cleaned; None when it has none (``@dataclass`` then
    stores the class's signature in ``__doc__``, which is no description)."""
    doc = cls.__dict__.get("__doc__")
    if not doc or doc.startswith(cls.__name__ + "("):
        return None
    return inspect.cleandoc(doc)


def _with_default(text: Optional[str], default: object) -> str:
    """``text`` followed by ``(default: X)`` when there is a default worth showing that the text does
    not state already."""
    text = text or ""
    if default is None or default is False or default == [] or "default" in text.lower():
        return text
    shown = " ".join(map(str, default)) if isinstance(default, (list, tuple)) else str(default)
    return f"{text} (default: {shown.replace('%', '%%')})".strip()


def _check_executor(options: "TuningOptions") -> None:
    """UsageError for ``--executor`` / ``--scheduler`` values that cannot work (together)."""
    executor, scheduler = options.executor, options.scheduler
    if executor not in EXECUTORS:
        raise UsageError(f"--executor {executor}: expected one of {', '.join(EXECUTORS)}")
    if executor == "local":
        if scheduler:
            raise UsageError(f"--scheduler {scheduler}: only --executor dask has a scheduler; "
                             "add --executor dask or drop --scheduler")
        return
    if not scheduler:
        raise UsageError("--executor dask needs --scheduler ADDRESS, the address of a running Dask "
                         "scheduler (e.g. --scheduler tcp://HOST:8786)")
    if options.distributed or options.parallelism > 1:
        raise UsageError("--executor dask measures on the Dask cluster's workers: drop --distributed and "
                         "--parallelism (the cluster's size sets how many measurements run at once)")
    if importlib.util.find_spec("distributed") is None:
        raise UsageError("--executor dask needs Dask's distributed scheduler: pip install 'tunerlib[dask]'")


def _check(value, option: str, wanted: str, ok) -> None:
    if value is None:
        return
    if isinstance(value, float) and not math.isfinite(value) or not ok(value):
        raise UsageError(f"{option} {value}: expected {wanted}")
