"""Work per evaluation in two windows of one ``tools/bench_overhead.py`` run, counted rather than timed.

Runs the float space of bench_overhead (a SQLite file in a temporary folder) with one technique for
``--evals`` measurements and counts every Python and C call (``sys.setprofile``) over evaluations
1,001-2,000 and over the last 1,000, in total and inside the ``propose`` of each technique of the run
(by its path, e.g. ``auto/AUCBanditMetaTechniqueA/DifferentialEvolutionAlt``): the load of the machine
does not move these counts, so they show whether the work per evaluation grows with the run's length.

    python tools/bench_windows.py --evals 100000 --technique auto
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections import defaultdict
from typing import Any, Callable, Dict, List, Optional, Tuple

if __package__ in (None, ""):   # run as a script (python tools/NAME.py): import tools from the checkout
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tools.bench_overhead import _Trivial  # noqa: E402

from tunerlib import TuningOptions, TuningRun  # noqa: E402
from tunerlib.techniques import Technique, registry  # noqa: E402

#: (window start, what) -> [calls of ``what``, Python and C calls inside them]
Counts = Dict[Tuple[int, str], List[int]]


class _Counter:
    """Counts calls while a window is open; wraps ``propose`` of every technique class."""

    def __init__(self) -> None:
        self.calls = 0
        self.window: Optional[int] = None
        self.counts: Counts = defaultdict(lambda: [0, 0])
        self.wrapped: List[Tuple[type, Any]] = []   # (class, its own propose) replaced by wrap

    def profile(self, frame: Any, event: str, arg: Any) -> None:
        if event == "call" or event == "c_call":
            self.calls += 1

    def wrap(self, cls: type) -> None:
        """Count the calls inside ``cls.propose`` (when ``cls`` defines it) per technique path;
        :meth:`unwrap` puts the method back."""
        method = cls.__dict__.get("propose")
        if method is None:
            return
        self.wrapped.append((cls, method))

        def propose(tech: Any, *args: Any, _method: Callable[..., Any] = method) -> Any:
            if self.window is None:
                return _method(tech, *args)
            before = self.calls
            out = _method(tech, *args)
            entry = self.counts[(self.window, f"{getattr(tech, 'path', '?')}.propose")]
            entry[0] += 1
            entry[1] += self.calls - before
            return out
        cls.propose = propose  # type: ignore[attr-defined]

    def unwrap(self) -> None:
        """Restore every ``propose`` that :meth:`wrap` replaced, so the process goes on uncounted."""
        for cls, method in self.wrapped:
            cls.propose = method  # type: ignore[attr-defined]
        self.wrapped.clear()


def _subclasses(cls: type) -> List[type]:
    out: List[type] = []
    subs: List[type] = type.__subclasses__(cls)
    for sub in subs:
        out += [sub] + _subclasses(sub)
    return out


def count_windows(evals: int, technique: str, seed: int = 0) -> Tuple[Counts, Tuple[int, int]]:
    """The counts of one run of ``evals`` measurements and its two window starts."""
    counter = _Counter()
    windows = (1000, evals - 1000)
    reg = registry()
    for name in ("DifferentialEvolution", "UniformGreedyMutation", "RandomNelderMead", "auto"):
        if name in reg:
            reg.create(name)   # imports the modules, so that their classes are wrapped below
    for cls in [Technique] + _subclasses(Technique):
        counter.wrap(cls)

    class Counted(_Trivial):
        def run(self, desired_result: Any, input: Any, limit: Any) -> Any:
            n = len(self.stamps)
            if counter.window is not None and n == counter.window + 1000:
                sys.setprofile(None)
                counter.counts[(counter.window, "TOTAL")] = [1000, counter.calls]
                counter.window = None
            if n in windows:
                counter.window, counter.calls = n, 0
                sys.setprofile(counter.profile)
            return super().run(desired_result, input, limit)

    try:
        with tempfile.TemporaryDirectory() as tmp:
            opts = TuningOptions(test_limit=evals + 1, seed=seed, quiet=True, technique=[technique],
                                 database=os.path.join(tmp, "bench.db"))
            TuningRun(Counted(opts), opts).run()
    finally:
        sys.setprofile(None)
        counter.unwrap()
    return counter.counts, windows


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--evals", type=int, default=100000)
    ap.add_argument("--technique", default="auto")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.evals < 3000:
        ap.error("--evals must be at least 3000 (two windows of 1,000)")
    counts, (early, late) = count_windows(args.evals, args.technique, args.seed)
    print(f"{'what':70s} {'calls':>13s} {'Python+C calls':>17s} {'per call':>15s}")
    for what in sorted({k[1] for k in counts}, key=lambda w: (w != "TOTAL", w)):
        a, b = counts.get((early, what), [0, 0]), counts.get((late, what), [0, 0])
        print(f"{what:70s} {a[0]:6d} {b[0]:6d} {a[1]:8d} {b[1]:8d} {a[1] / max(a[0], 1):7.1f} "
              f"{b[1] / max(b[0], 1):7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
