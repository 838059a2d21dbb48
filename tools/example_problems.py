"""Benchmark problems measured by the example tuners: TACO kernels generated, compiled
and timed by ``examples/taco`` (built-in backend), RISE OpenCL kernels run on PoCL or a GPU by
``examples/rise``, and the HPVM2FPGA edge-detection space evaluated by ``examples/hpvm2fpga``'s
analytical model.

These are real (or modelled) measurements, not tables: they have no known optimum, so
tools/compare.py reports best values and the share of runs at least as fast as the expert
configuration.  They are built only when named (``--problems taco_builtin_spmv ...``), since
building one compiles kernels or opens an OpenCL context.  Names:

* ``taco_builtin_<kernel>`` for kernel in spmv, spmm, sddmm, ttv, mttkrp;
* ``rise_opencl_<kernel>`` for kernel in mm, asum, scal, kmeans, harris, stencil;
* ``hpvm2fpga_edge_detection``;
* ``halide_<pipeline>`` for pipeline in blur, harris, matmul (extra ``[halide]``; default sizes;
  runs start from the tuner's seed configurations, the default schedule and the templates):
  the "expert" is the fastest of Halide's autoschedulers (Mullapudi2016, Adams2019, Li2018),
  timed once in interleaved rounds when the report is printed.  Run these with ``--jobs 1`` so
  that runs do not time each other; ``tools/bench_halide.py`` re-times every best schedule next
  to the baselines, which is the fairer comparison on a busy machine.

The example modules are loaded by path from the examples folder (``--examples DIR``; default: the
``examples/`` folder of the checkout these tools run from, :func:`examples_dir`).  The tools never
put that folder on ``sys.path``: an example that imports its sibling modules does so itself.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Union

Folder = Union[str, Path, None]
#: the examples folder of a source checkout, beside tools/ (absent from an installed copy)
CHECKOUT_EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
TACO_KERNELS = ["spmv", "spmm", "sddmm", "ttv", "mttkrp"]
RISE_KERNELS = ["mm", "asum", "scal", "kmeans", "harris", "stencil"]
HALIDE_PIPELINES = ["blur", "harris", "matmul"]
AUTOSCHEDULERS = ("Mullapudi2016", "Adams2019", "Li2018")


def examples_dir(given: Folder = None, tool: str = "compare") -> Path:
    """The examples folder: ``given``, else the checkout's ``examples/`` beside ``tools/``; exits with
    one line (prefixed ``tool``) saying to pass ``--examples DIR`` when there is none."""
    if given is not None:
        if not Path(given).is_dir():
            raise SystemExit(f"{tool}: --examples {given}: no such folder; give the examples/ folder of a "
                             "tunerlib checkout")
        return Path(given)
    if CHECKOUT_EXAMPLES.is_dir():
        return CHECKOUT_EXAMPLES
    raise SystemExit(f"{tool}: no examples folder beside this installed copy; pass --examples DIR (the "
                     "examples/ folder of a tunerlib checkout)")


def load_example(path: Path, name: str, tool: str = "compare") -> Any:
    """Import the example module at ``path`` under the unique module name ``name`` (once per
    process and path).  ``sys.path`` is left alone: an example that imports its siblings by name
    puts its own folder there when it is imported."""
    loaded = sys.modules.get(name)
    if loaded is not None and Path(getattr(loaded, "__file__", "")) == path:
        return loaded
    if not path.is_file():
        raise SystemExit(f"{tool}: {path} is missing; pass --examples DIR (the examples/ folder of a tunerlib "
                         "checkout)")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    except BaseException:
        del sys.modules[name]
        raise
    return module


def example_problem_names() -> List[str]:
    """Every problem name this module can build."""
    return ([f"taco_builtin_{k}" for k in TACO_KERNELS] + [f"rise_opencl_{k}" for k in RISE_KERNELS]
            + ["hpvm2fpga_edge_detection"] + [f"halide_{p}" for p in HALIDE_PIPELINES])


def _halide(pipeline: str, root: Path) -> Dict[str, Any]:
    """The Halide example's tuner as a problem: evaluate = min-of-k seconds of a schedule."""
    try:
        import halide  # noqa: F401
    except ImportError:
        raise SystemExit("compare: the halide package is not installed; pip install -e '.[halide]'") from None
    mod = load_example(root / "halide" / "halide_tuner.py", "tunerlib_example_halide_tuner")
    tuner = mod.HalideTuner(mod.HalideOptions.parse(["--pipeline", pipeline, "--baselines", "none"]))

    def evaluate(cfg: Dict[str, Any]) -> Optional[float]:
        res = tuner.evaluate(cfg)
        return res.time if res.state == "OK" else None

    timed: Dict[str, float] = {}

    def baseline_times() -> Dict[str, float]:
        """Seconds of the default schedule and of every autoscheduler that works, timed together
        in interleaved rounds (once per process)."""
        if not timed:
            built = {n: c for n, c in ((n, tuner.compile_baseline(n)[0]) for n in ("default", *AUTOSCHEDULERS)) if c}
            timed.update(tuner.compare(built) if built else {})
        return timed

    def best_autoscheduler() -> Optional[float]:
        autos = [t for n, t in baseline_times().items() if n != "default"]
        return min(autos) if autos else None

    return {"manipulator": tuner.manipulator, "evaluate": evaluate, "expert": None, "budget": 200,
            "expert_value_fn": best_autoscheduler, "baselines_fn": baseline_times,
            "seeds": tuner.seed_configurations()}


def _raw(name: str, examples: Folder) -> Optional[Dict[str, Any]]:
    """The example's ``make_problem`` dict for ``name`` (None when the name is not ours)."""
    if name.startswith("taco_builtin_") and name[13:] in TACO_KERNELS:
        path = examples_dir(examples) / "taco" / "taco_bench.py"
        return load_example(path, "tunerlib_example_taco_bench").make_problem(name[13:])
    if name.startswith("rise_opencl_") and name[12:] in RISE_KERNELS:
        path = examples_dir(examples) / "rise" / "rise_bench.py"
        return load_example(path, "tunerlib_example_rise_bench").make_problem(name[12:])
    if name.startswith("halide_") and name[7:] in HALIDE_PIPELINES:
        return _halide(name[7:], examples_dir(examples))
    if name == "hpvm2fpga_edge_detection":
        path = examples_dir(examples) / "hpvm2fpga" / "fpga_bench.py"
        return load_example(path, "tunerlib_example_fpga_bench").make_problem()
    return None


def example_problems(names: List[str], problem_cls: Callable[..., Any], examples: Folder = None) -> Dict[str, Any]:
    """``{name: problem_cls(...)}`` for the names in ``names`` that this module knows (``examples``:
    the examples folder, :func:`examples_dir`); every one measures seconds (``unit="s"``)."""
    out: Dict[str, Any] = {}
    for name in names:
        raw = _raw(name, examples)
        if raw is None:
            continue
        expert: Optional[Dict[str, Any]] = raw.get("expert")
        evaluate = raw["evaluate"]
        value_fn = raw.get("expert_value_fn") or ((lambda e=expert, f=evaluate: f(e)) if expert else None)
        out[name] = problem_cls(name, raw["manipulator"], evaluate, None, [raw["budget"]],
                                data={"expert": expert, "default": raw.get("default"), "real": True,
                                      "expert_value_fn": value_fn, "seeds": raw.get("seeds", ()),
                                      "baselines_fn": raw.get("baselines_fn")}, unit="s")
    return out
