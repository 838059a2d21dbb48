"""HPVM2FPGA design spaces: read and check a JSON space description, build the search space.

A description lists the dataflow nodes of an HPVM program (their loops, per-iteration datapath
cost, loads and pipeline depth), the edges between nodes, and which optimisations the design-space
exploration may switch: loop unroll factors, loop fusion (``LF``) and input buffering (``BuffIn``)
per node, node fusion per edge, task-level parallelism (``TLP``).  Each switch names its tuning
parameter.  The device's resources bound what fits.  ``spaces/edge_detection.json`` is the
shipped example (the public 40-parameter BaCO space); ``README.md`` documents every field.

:func:`load_design` reads and checks a file (one-line :class:`SpaceError` naming the bad field and
the fix); :meth:`Design.manipulator` builds the tunerlib search space: every unroll factor is an
``OrdinalParameter`` over its choices, every flag an ``OrdinalParameter`` over ``[0, 1]`` (as in
BaCO's space, so configurations read ``GS_LF: 1``), plus the known constraints the description
declares (none for the shipped space: what does not fit is a hidden constraint).
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from tunerlib import UsageError
from tunerlib.parameters import ConfigurationError, ConfigurationManipulator, OrdinalParameter

#: the format tag a description may carry
FORMAT = "hpvm2fpga-space/1"
#: value set of every on/off optimisation flag
FLAG_VALUES = (0, 1)
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class SpaceError(UsageError):
    """A bad space description (one line: file, field path, problem, fix)."""


# ------------------------------------------------------------------------------ data classes
@dataclass(frozen=True)
class Loop:
    """A counted loop; ``param`` names its unroll-factor parameter (None: never unrolled)."""

    name: str
    trip: int
    param: Optional[str] = None
    values: Tuple[int, ...] = (1,)


@dataclass(frozen=True)
class Stage:
    """A loop nest (or straight-line code when ``loops`` is empty) inside a node's outer loops.

    ``lut``/``ff``/``dsp``: cost of one copy of the body; ``loads``: global-memory loads per
    body execution; ``depth``: pipeline depth in cycles."""

    name: str
    loops: Tuple[Loop, ...]
    lut: float
    ff: float
    dsp: float
    loads: float
    depth: int


@dataclass(frozen=True)
class Resources:
    """An amount of each FPGA resource (BRAM counted in blocks)."""

    lut: float = 0.0
    ff: float = 0.0
    dsp: float = 0.0
    bram: float = 0.0

    def as_dict(self) -> Dict[str, float]:
        return {"lut": self.lut, "ff": self.ff, "dsp": self.dsp, "bram": self.bram}


@dataclass(frozen=True)
class Node:
    """A dataflow node: outer loops (shared by its stages), stages, fixed control cost, input."""

    name: str
    outer: Tuple[Loop, ...]
    stages: Tuple[Stage, ...]
    base: Resources
    input_bytes: int
    buffer_param: Optional[str] = None
    buffer_bytes: int = 0
    lf_param: Optional[str] = None

    @property
    def loops(self) -> Tuple[Loop, ...]:
        """Every loop of the node, outer first."""
        return self.outer + tuple(l for s in self.stages for l in s.loops)


@dataclass(frozen=True)
class Edge:
    """Data produced by ``src`` and consumed by ``dst``: ``bytes`` copied between kernels through
    a FIFO of ``fifo_bytes`` on chip."""

    src: str
    dst: str
    bytes: int
    fifo_bytes: int


@dataclass(frozen=True)
class NodeFusion:
    """The flag ``param`` fuses nodes ``src`` and ``dst`` (joined by an edge) into one kernel."""

    param: str
    src: str
    dst: str


@dataclass(frozen=True)
class Device:
    """FPGA budget and memory system (cycles at ``clock_mhz``)."""

    name: str
    lut: float
    ff: float
    dsp: float
    bram: float
    bram_bytes: int
    clock_mhz: float
    mem_latency: int
    mem_loads_per_cycle: float
    mem_bytes_per_cycle: float
    launch_cycles: int

    def budget(self) -> Resources:
        return Resources(self.lut, self.ff, self.dsp, self.bram)


@dataclass(frozen=True)
class ModelConstants:
    """Constants of the analytical model (see fpga_model.py)."""

    outer_loop_overhead: int = 2
    loop_fusion_ff_overhead: float = 0.05
    lsu: Resources = Resources(600, 900, 0, 2)


@dataclass
class Design:
    """A checked space description; build the search space with :meth:`manipulator`."""

    name: str
    description: str
    device: Device
    model: ModelConstants
    nodes: Tuple[Node, ...]
    edges: Tuple[Edge, ...]
    fusions: Tuple[NodeFusion, ...]
    tlp_param: Optional[str]
    constraints: Tuple[str, ...] = ()
    default: Dict[str, int] = field(default_factory=dict)
    expert: Optional[Dict[str, int]] = None
    expert_note: str = ""
    source: str = "<memory>"

    def parameters(self) -> List[Tuple[str, Tuple[int, ...]]]:
        """``(name, value set)`` of every tuning parameter, in search-space order: per node its
        LF flag, BuffIn flag and unroll factors, then node-fusion flags, then TLP."""
        out: List[Tuple[str, Tuple[int, ...]]] = []
        for node in self.nodes:
            out += [(p, FLAG_VALUES) for p in (node.lf_param, node.buffer_param) if p]
            out += [(l.param, l.values) for l in node.loops if l.param]
        out += [(f.param, FLAG_VALUES) for f in self.fusions]
        if self.tlp_param:
            out.append((self.tlp_param, FLAG_VALUES))
        return out

    def manipulator(self) -> ConfigurationManipulator:
        """A fresh search space: one OrdinalParameter per parameter, plus declared constraints."""
        m = ConfigurationManipulator([OrdinalParameter(n, list(v)) for n, v in self.parameters()])
        for i, expr in enumerate(self.constraints):
            try:
                m.add_constraint(expr)
            except ConfigurationError as exc:
                raise SpaceError(f"{self.source}: constraints[{i}]: {exc}") from None
        return m

    def node(self, name: str) -> Node:
        return next(n for n in self.nodes if n.name == name)


# ------------------------------------------------------------------------------ reading
class _Reader:
    """Typed field access with one-line errors naming the file and the field path."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, path: str, problem: str, fix: str) -> SpaceError:
        return SpaceError(f"{self.source}: {path or 'top level'}: {problem}; {fix}")

    def obj(self, value: Any, path: str, known: Sequence[str], required: Sequence[str] = ()) -> Dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(path, f"must be a JSON object, got {_short(value)}", "write it as {...}")
        unknown = sorted(set(value) - set(known))
        if unknown:
            raise self.fail(_join(path, unknown[0]), "unknown field",
                            f"use one of {', '.join(known)} (see examples/hpvm2fpga/README.md)")
        for key in required:
            if key not in value:
                raise self.fail(_join(path, key), "missing", f"add the required field {key!r}")
        return value

    def list(self, value: Any, path: str, nonempty: bool = True) -> List[Any]:
        if not isinstance(value, list) or (nonempty and not value):
            raise self.fail(path, f"must be a {'non-empty ' if nonempty else ''}JSON list, got "
                                  f"{_short(value)}", "write it as [...]")
        return value

    def name(self, value: Any, path: str) -> str:
        if not isinstance(value, str) or not _NAME.match(value):
            raise self.fail(path, f"must be an identifier, got {_short(value)}",
                            "use letters, digits and _ (not starting with a digit)")
        return value

    def text(self, value: Any, path: str) -> str:
        if not isinstance(value, str):
            raise self.fail(path, f"must be a string, got {_short(value)}", "quote it")
        return value

    def integer(self, value: Any, path: str, minimum: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.fail(path, f"must be an integer >= {minimum}, got {_short(value)}",
                            f"give a whole number of at least {minimum}")
        return value

    def number(self, value: Any, path: str, positive: bool = False) -> float:
        ok = (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
              and (value > 0 if positive else value >= 0))
        if not ok:
            what = "a number > 0" if positive else "a number >= 0"
            raise self.fail(path, f"must be {what}, got {_short(value)}", f"give {what}")
        return float(value)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _short(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


_DEVICE_INT = ("bram_bytes", "mem_latency_cycles", "launch_cycles")
_DEVICE_NUM = ("lut", "ff", "dsp", "bram", "clock_mhz", "mem_loads_per_cycle", "mem_bytes_per_cycle")
_RES = ("lut", "ff", "dsp", "bram")


def _device(r: _Reader, raw: Any) -> Device:
    d = r.obj(raw, "device", ("name",) + _DEVICE_NUM + _DEVICE_INT, _DEVICE_NUM + _DEVICE_INT)
    num = {k: r.number(d[k], f"device.{k}", positive=True) for k in _DEVICE_NUM}
    ints = {k: r.integer(d[k], f"device.{k}", 1 if k == "bram_bytes" else 0) for k in _DEVICE_INT}
    return Device(name=r.text(d.get("name", "FPGA"), "device.name"), lut=num["lut"], ff=num["ff"],
                  dsp=num["dsp"], bram=num["bram"], bram_bytes=ints["bram_bytes"],
                  clock_mhz=num["clock_mhz"], mem_latency=ints["mem_latency_cycles"],
                  mem_loads_per_cycle=num["mem_loads_per_cycle"],
                  mem_bytes_per_cycle=num["mem_bytes_per_cycle"], launch_cycles=ints["launch_cycles"])


def _resources(r: _Reader, raw: Any, path: str) -> Resources:
    d = r.obj(raw, path, _RES)
    return Resources(**{k: r.number(d.get(k, 0), f"{path}.{k}") for k in _RES})


def _model(r: _Reader, raw: Any) -> ModelConstants:
    if raw is None:
        return ModelConstants()
    d = r.obj(raw, "model", ("outer_loop_overhead", "loop_fusion_ff_overhead", "lsu"))
    base = ModelConstants()
    return ModelConstants(
        outer_loop_overhead=r.integer(d.get("outer_loop_overhead", base.outer_loop_overhead),
                                      "model.outer_loop_overhead", 0),
        loop_fusion_ff_overhead=r.number(d.get("loop_fusion_ff_overhead", base.loop_fusion_ff_overhead),
                                         "model.loop_fusion_ff_overhead"),
        lsu=_resources(r, d["lsu"], "model.lsu") if "lsu" in d else base.lsu)


def _loop(r: _Reader, raw: Any, path: str) -> Loop:
    d = r.obj(raw, path, ("name", "trip", "unroll"), ("name", "trip"))
    name, trip = r.name(d["name"], f"{path}.name"), r.integer(d["trip"], f"{path}.trip", 1)
    if "unroll" not in d:
        return Loop(name, trip)
    u = r.obj(d["unroll"], f"{path}.unroll", ("param", "values"), ("param", "values"))
    values = [r.integer(v, f"{path}.unroll.values[{i}]", 1)
              for i, v in enumerate(r.list(u["values"], f"{path}.unroll.values"))]
    if values != sorted(set(values)):
        raise r.fail(f"{path}.unroll.values", f"must be distinct and increasing, got {values}",
                     "sort the unroll factors and drop repeats")
    if values[-1] > trip:
        raise r.fail(f"{path}.unroll.values", f"factor {values[-1]} exceeds the trip count {trip}",
                     f"keep factors <= {trip}")
    return Loop(name, trip, r.name(u["param"], f"{path}.unroll.param"), tuple(values))


def _stage(r: _Reader, raw: Any, path: str) -> Stage:
    d = r.obj(raw, path, ("name", "loops", "lut", "ff", "dsp", "loads", "depth"), ("name", "depth"))
    loops = tuple(_loop(r, l, f"{path}.loops[{i}]")
                  for i, l in enumerate(r.list(d.get("loops", []), f"{path}.loops", nonempty=False)))
    return Stage(r.name(d["name"], f"{path}.name"), loops,
                 *(r.number(d.get(k, 0), f"{path}.{k}") for k in ("lut", "ff", "dsp", "loads")),
                 depth=r.integer(d["depth"], f"{path}.depth", 1))


def _flag(r: _Reader, raw: Any, path: str, extra: Sequence[str] = ()) -> Dict[str, Any]:
    d = r.obj(raw, path, ("param",) + tuple(extra), ("param",) + tuple(extra))
    r.name(d["param"], f"{path}.param")
    return d


def _node(r: _Reader, raw: Any, path: str) -> Node:
    keys = ("name", "outer_loops", "stages", "base", "input_bytes", "input_buffering", "loop_fusion")
    d = r.obj(raw, path, keys, ("name", "outer_loops", "stages", "input_bytes"))
    outer = tuple(_loop(r, l, f"{path}.outer_loops[{i}]")
                  for i, l in enumerate(r.list(d["outer_loops"], f"{path}.outer_loops")))
    stages = tuple(_stage(r, s, f"{path}.stages[{i}]")
                   for i, s in enumerate(r.list(d["stages"], f"{path}.stages")))
    buf = _flag(r, d["input_buffering"], f"{path}.input_buffering", ("bytes",)) if "input_buffering" in d else None
    lf = _flag(r, d["loop_fusion"], f"{path}.loop_fusion") if "loop_fusion" in d else None
    node = Node(r.name(d["name"], f"{path}.name"), outer, stages,
                _resources(r, d.get("base", {}), f"{path}.base"),
                r.integer(d["input_bytes"], f"{path}.input_bytes", 0),
                buffer_param=buf["param"] if buf else None,
                buffer_bytes=r.integer(buf["bytes"], f"{path}.input_buffering.bytes", 1) if buf else 0,
                lf_param=lf["param"] if lf else None)
    _unique([l.name for l in node.loops], r, f"{path}: loop names", "give every loop of a node its own name")
    return node


def _unique(names: List[str], r: _Reader, path: str, fix: str) -> None:
    seen = set()
    for n in names:
        if n in seen:
            raise r.fail(path, f"{n!r} appears twice", fix)
        seen.add(n)


def _edges(r: _Reader, raw: Any, nodes: Dict[str, Node]) -> Tuple[Edge, ...]:
    edges = []
    for i, e in enumerate(r.list(raw, "edges", nonempty=False)):
        path = f"edges[{i}]"
        d = r.obj(e, path, ("from", "to", "bytes", "fifo_bytes"), ("from", "to", "bytes"))
        for end in ("from", "to"):
            if d[end] not in nodes:
                raise r.fail(f"{path}.{end}", f"unknown node {_short(d[end])}",
                             f"use one of {', '.join(nodes)}")
        if d["from"] == d["to"]:
            raise r.fail(path, "an edge from a node to itself", "remove it")
        edges.append(Edge(d["from"], d["to"], r.integer(d["bytes"], f"{path}.bytes", 0),
                          r.integer(d.get("fifo_bytes", 0), f"{path}.fifo_bytes", 0)))
    _check_acyclic(r, list(nodes), edges)
    return tuple(edges)


def _check_acyclic(r: _Reader, names: List[str], edges: List[Edge]) -> None:
    if topological_order(names, [(e.src, e.dst) for e in edges]) is None:
        raise r.fail("edges", "the dataflow graph has a cycle", "HPVM dataflow graphs are acyclic; "
                                                                  "remove the edge that closes the cycle")


def topological_order(names: Sequence[str], pairs: Sequence[Tuple[str, str]]) -> Optional[List[str]]:
    """Kahn's algorithm, ties broken by the order of ``names``; None when there is a cycle."""
    indeg = {n: 0 for n in names}
    succ: Dict[str, List[str]] = {n: [] for n in names}
    for a, b in pairs:
        succ[a].append(b)
        indeg[b] += 1
    ready = [n for n in names if indeg[n] == 0]
    order: List[str] = []
    while ready:
        n = ready.pop(0)
        order.append(n)
        for m in succ[n]:
            indeg[m] -= 1
            if indeg[m] == 0:
                ready.append(m)
    return order if len(order) == len(names) else None


def _fusions(r: _Reader, raw: Any, edges: Tuple[Edge, ...]) -> Tuple[NodeFusion, ...]:
    linked = {(e.src, e.dst) for e in edges}
    out = []
    for i, f in enumerate(r.list(raw, "node_fusion", nonempty=False)):
        d = _flag(r, f, f"node_fusion[{i}]", ("from", "to"))
        if (d["from"], d["to"]) not in linked:
            raise r.fail(f"node_fusion[{i}]", f"no edge {d['from']} -> {d['to']}",
                         "node fusion joins a producer and its consumer: add the edge or drop the fusion")
        out.append(NodeFusion(d["param"], d["from"], d["to"]))
    return tuple(out)


def _config(r: _Reader, raw: Any, path: str, design: Design) -> Dict[str, int]:
    params = dict(design.parameters())
    d = r.obj(raw, path, list(raw) if isinstance(raw, dict) else [], list(params))
    for name, value in d.items():
        if name not in params:
            raise r.fail(f"{path}.{name}", "not a parameter of this space", "remove it or fix its name")
        if isinstance(value, bool) or value not in params[name]:
            raise r.fail(f"{path}.{name}", f"{_short(value)} is not one of {list(params[name])}",
                         "pick a value from the parameter's choices")
    return {name: d[name] for name in params}


def parse_design(data: Any, source: str = "<memory>") -> Design:
    """Check a parsed description (a dict); returns a :class:`Design` or raises :class:`SpaceError`."""
    r = _Reader(source)
    keys = ("format", "name", "description", "device", "model", "nodes", "edges", "node_fusion",
            "task_parallelism", "constraints", "default", "expert", "expert_note")
    d = r.obj(data, "", keys, ("name", "device", "nodes"))
    if "format" in d and d["format"] != FORMAT:
        raise r.fail("format", f"unsupported format {_short(d['format'])}", f"use {FORMAT!r}")
    nodes = tuple(_node(r, n, f"nodes[{i}]") for i, n in enumerate(r.list(d["nodes"], "nodes")))
    _unique([n.name for n in nodes], r, "nodes", "give every node its own name")
    by_name = {n.name: n for n in nodes}
    edges = _edges(r, d.get("edges", []), by_name)
    tlp = _flag(r, d["task_parallelism"], "task_parallelism")["param"] if "task_parallelism" in d else None
    design = Design(r.name(d["name"], "name"), r.text(d.get("description", ""), "description"),
                    _device(r, d["device"]), _model(r, d.get("model")), nodes, edges,
                    _fusions(r, d.get("node_fusion", []), edges), tlp,
                    tuple(r.text(c, f"constraints[{i}]")
                          for i, c in enumerate(r.list(d.get("constraints", []), "constraints", False))),
                    expert_note=r.text(d.get("expert_note", ""), "expert_note"), source=source)
    names = [n for n, _ in design.parameters()]
    if not names:
        raise r.fail("nodes", "no tuning parameters", "give some loop an unroll, or a node a flag")
    _unique(names, r, "parameters", "every unroll/flag param needs its own name")
    design.default = (_config(r, d["default"], "default", design) if "default" in d
                      else {n: v[0] for n, v in design.parameters()})
    design.expert = _config(r, d["expert"], "expert", design) if "expert" in d else None
    _check_constraints(r, design)
    return design


def _check_constraints(r: _Reader, design: Design) -> None:
    m = design.manipulator()
    for label, cfg in (("default", design.default), ("expert", design.expert)):
        if cfg is not None and not m.is_feasible(cfg):
            raise r.fail(label, f"violates {m.violated_constraints(cfg)}",
                         "fix the configuration or the constraint")


def load_design(path: str) -> Design:
    """Read and check a JSON space description file."""
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise SpaceError(f"cannot read space description {path}: {exc.strerror}; check the --space path") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SpaceError(f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}; "
                         "fix the syntax") from None
    return parse_design(data, path)


#: the shipped edge-detection space
EDGE_DETECTION = str(Path(__file__).resolve().parent / "spaces" / "edge_detection.json")


def config_from(design: Design, values: Mapping[str, int]) -> Dict[str, int]:
    """The default configuration with ``values`` changed (tests and scripts)."""
    cfg = dict(design.default)
    cfg.update(values)
    return cfg
