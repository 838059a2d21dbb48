"""The RISE kernels as benchmark problems for ``tools/compare.py`` (real OpenCL runs).

    import sys; sys.path.insert(0, "examples/rise")
    from rise_bench import make_problem
    p = make_problem("mm")                      # default size (spaces.KERNELS["mm"].default_size)
    m = p["manipulator"]()                      # a fresh ConfigurationManipulator
    seconds = p["evaluate"](m.random(rng))      # min-of-k kernel seconds, or None on failure
    p["expert"], p["default"], p["budget"]      # paper configurations (None: outside the space), 120

``evaluate`` builds, launches, checks and times one configuration on the OpenCL device
(``device=``; PoCL's CPU device when there is no GPU) and returns None for INFEASIBLE, ERROR and
TIMEOUT results.  Measurements run in a child process (:class:`rise_worker.IsolatedRunner`, one
per calling process, device, kernel and size, started on the first evaluation, so building the dict
needs no OpenCL): a configuration that crashes the OpenCL driver is a failure, not the end of the
benchmark.  Needs pyopencl (``pip install -e '.[opencl]'``) when ``evaluate`` is first called.

Run as a script it is the example's own benchmark: each kernel is tuned with ``rise_tuner.py`` once
per seed (``--compare-rounds 0``: the run's recorded best), then the paper's default and expert (as
given and mapped to the device's compute units) and every seed's best are re-timed together in
interleaved rounds, the whole re-timing ``--passes`` times to show its noise; it prints a table of
times, the best's speed-up over the stronger form of each baseline (median and range over seeds) and
that noise::

    python examples/rise/rise_bench.py --kernels stencil scal --seeds 1 2 3 4 5 --budget 60
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rise_opencl as opencl_backend  # noqa: E402  (sibling modules)
import rise_spaces as spaces  # noqa: E402
import rise_worker  # noqa: E402

from tunerlib.measure import pass_noise, retime_passes, spread, stronger  # noqa: E402

_RUNNERS: Dict[Tuple[int, str, str, int], rise_worker.IsolatedRunner] = {}


def runner(kernel: str, size: int, device: str = "auto") -> rise_worker.IsolatedRunner:
    """This process's measuring child for (device, kernel, size); a forked caller gets its own."""
    key = (os.getpid(), device, kernel, size)
    if key not in _RUNNERS:
        _RUNNERS[key] = rise_worker.IsolatedRunner(device, kernel, size)
    return _RUNNERS[key]


def make_evaluate(kernel: str, size: int, device: str = "auto",
                  policy: opencl_backend.TimingPolicy = opencl_backend.DEFAULT_POLICY
                  ) -> Callable[[Mapping[str, Any]], Optional[float]]:
    """``evaluate(cfg) -> seconds or None`` for ``kernel`` at ``size``."""
    def evaluate(cfg: Mapping[str, Any]) -> Optional[float]:
        result = runner(kernel, size, device).evaluate(cfg, policy)
        return result.time if result.state == "OK" else None
    return evaluate


def make_problem(kernel: str, size: Optional[int] = None, device: str = "auto") -> Dict[str, Any]:
    """The benchmark problem of ``kernel`` (``mm``, ``asum``, ``scal``, ``kmeans``, ``harris``,
    ``stencil``) at ``size`` (None: the kernel's default size).

    Keys: ``manipulator`` (callable -> fresh ConfigurationManipulator), ``evaluate`` (cfg ->
    seconds or None on failure), ``expert`` and ``default`` (the paper's configurations mapped to
    the size, None when outside the scaled space or undocumented), ``budget`` (the paper's total
    evaluations), ``name`` (``rise_<kernel>``), ``size``.  ValueError for a bad kernel or size.
    """
    if kernel not in spaces.KERNELS:
        raise ValueError(f"unknown RISE kernel {kernel!r}; use one of {', '.join(spaces.kernel_names())}")
    n = spaces.resolve_size(kernel, size)
    return {
        "name": f"rise_{kernel}",
        "size": n,
        "manipulator": lambda: spaces.build_space(kernel, n),
        "evaluate": make_evaluate(kernel, n, device),
        "expert": spaces.paper_config(kernel, "expert", n),
        "default": spaces.paper_config(kernel, "default", n),
        "budget": spaces.KERNELS[kernel].budget,
    }


def tune_once(kernel: str, size: int, seed: int, budget: int, technique: Sequence[str], folder: str,
              device: str = "auto") -> Optional[Dict[str, Any]]:
    """One tuning run of ``rise_tuner.py`` (no final re-timing); its best configuration or None."""
    import rise_tuner                     # the tuner imports this module's siblings; only the script needs it
    summary = os.path.join(folder, f"{kernel}-{seed}.json")
    args = ["--kernel", kernel, "--size", str(size), "--device", device, "--test-limit", str(budget),
            "--seed", str(seed), "--quiet", "--compare-rounds", "0", "--summary-json", summary,
            "--database", os.path.join(folder, f"{kernel}-{seed}.db")]
    if technique:
        args += ["--technique", *technique]
    if rise_tuner.RiseTuner.main(args) != 0:
        return None
    with open(summary) as fh:
        return json.load(fh).get("best_configuration")


def bench_kernel(kernel: str, seeds: Sequence[int], budget: int, technique: Sequence[str], rounds: int,
                 passes: int, log: Callable[[str], None], size: Optional[int] = None,
                 device: str = "auto") -> Dict[str, Any]:
    """Tune ``kernel`` once per seed, then re-time default, expert (as given and mapped) and the
    bests together, ``passes`` times; a time is the minimum over all passes."""
    n = spaces.resolve_size(kernel, size)
    measure = runner(kernel, n, device)
    configs = {name: cfg for name, cfg in spaces.baselines(kernel, n, measure.compute_units).items()
               if cfg is not None}
    with tempfile.TemporaryDirectory(prefix="rise_bench_") as folder:
        for seed in seeds:
            best = tune_once(kernel, n, seed, budget, technique, folder, device)
            log(f"{kernel} seed {seed}: best {json.dumps(best, sort_keys=True)}")
            if best is not None:
                configs[f"seed {seed}"] = best
    why: Dict[str, str] = {}

    def one_pass() -> Dict[str, Optional[float]]:
        timed = measure.compare(configs, rounds)
        why.update({name: reason or "not timed" for name, (t, reason) in timed.items() if t is None})
        return {name: t for name, (t, _) in timed.items()}
    per_pass = retime_passes(one_pass, passes)
    measure.close()
    untimed = {name: why.get(name, "not timed") for name in configs if name not in per_pass}
    for name, reason in untimed.items():
        log(f"{kernel} {name}: not timed ({reason})")
    times = {name: min(v) for name, v in per_pass.items()}
    bests = [times[f"seed {s}"] for s in seeds if f"seed {s}" in times]
    row: Dict[str, Any] = {"kernel": kernel, "size": n, "budget": budget, "device": measure.device_name,
                           "compute_units": measure.compute_units, "times": times, "best_s": bests,
                           "noise": pass_noise(per_pass), "passes": passes,
                           "untimed": untimed}
    for base in ("default", "expert"):
        found = stronger(times, base)
        row[f"{base}_stronger"] = None if found is None else list(found)
        row[f"vs_{base}"] = [] if found is None else [found[1] / t for t in bests]
    row["reached_expert"] = sum(v >= 1.0 for v in row["vs_expert"])
    return row


def format_rows(rows: List[Dict[str, Any]]) -> str:
    """Markdown table of :func:`bench_kernel` rows: the stronger form of each baseline (seconds, which
    form), the seeds' bests (median; per seed), speed-ups over the stronger forms (median; range over
    seeds) and the re-timing noise (median / largest disagreement of two passes over one configuration)."""
    out = ["| kernel (size, budget) | default, stronger form (s) | expert, stronger form (s) "
           "| best (s; median; per seed) | best vs stronger default (median; range) "
           "| best vs stronger expert (median; range) | seeds reaching the stronger expert "
           "| re-timing noise (median / max) |", "|---|---|---|---|---|---|---|---|"]

    def base(found: Optional[List[Any]]) -> str:
        if found is None:
            return "-"
        form = "as given" if ", " not in found[0] else found[0].split(", ", 1)[1]
        return f"{found[1]:.6f} ({form})"

    def ratio(values: List[float]) -> str:
        s = spread(values)
        return "-" if s is None else s.text()
    for r in rows:
        noise = list(r["noise"].values())
        med = f"{statistics.median(r['best_s']):.6f}" if r["best_s"] else "-"
        out.append(f"| {r['kernel']} ({r['size']}, {r['budget']}) | {base(r['default_stronger'])} | "
                   f"{base(r['expert_stronger'])} | {med} ({', '.join(f'{t:.6f}' for t in r['best_s'])}) | "
                   f"{ratio(r['vs_default'])} | {ratio(r['vs_expert'])} | {r['reached_expert']}/{len(r['best_s'])} | "
                   + ("-" if not noise else f"{100 * statistics.median(noise):.1f} % / {100 * max(noise):.1f} %")
                   + " |")
    return "\n".join(out)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Command line: see the module docstring; returns the exit code."""
    p = argparse.ArgumentParser(description="Tune RISE-style OpenCL kernels over several seeds, then re-time "
                                            "default, expert and every seed's best in interleaved rounds")
    p.add_argument("--kernels", nargs="+", default=spaces.kernel_names(), choices=spaces.kernel_names())
    p.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3, 4, 5], help="tuning seeds (default 1-5)")
    p.add_argument("--budget", type=int, help="evaluations per run (default: the paper's budget of each kernel)")
    p.add_argument("--technique", nargs="+", default=[], help="technique(s) (default: tunerlib's default)")
    p.add_argument("--rounds", type=int, default=10, help="interleaved re-timing rounds per pass (default 10)")
    p.add_argument("--passes", type=int, default=2, help="re-timing passes (default 2; the noise column)")
    p.add_argument("--device", default="auto", help="OpenCL device (as rise_tuner.py's --device)")
    p.add_argument("--json", help="also write the rows as JSON to this file")
    a = p.parse_args(argv)
    if a.passes < 1 or a.rounds < 1 or (a.budget is not None and a.budget < 1):
        p.error("--passes, --rounds and --budget must be >= 1")
    rows = [bench_kernel(k, a.seeds, a.budget or spaces.KERNELS[k].budget, a.technique, a.rounds, a.passes,
                         lambda s: print(s, flush=True), device=a.device) for k in a.kernels]
    print(format_rows(rows))
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(rows, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
