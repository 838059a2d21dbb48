"""An analytical FPGA model of latency and resources for HPVM2FPGA designs — a MODEL, not a tool.

No HPVM2FPGA toolchain is publicly installable, so ``--backend model`` (the default) estimates the
execution time and the resource use of a design with the equations below instead of running HLS
and the FPGA.  Its numbers are plausible, deterministic and cheap (microseconds per design); they
are not measurements of any FPGA.  Use ``--backend command`` to tune with a real flow.

Notation, per node n (``description`` fields in brackets; u_l = the loop's unroll factor, 1 when
the loop has no unroll parameter; [x] = 1 when x holds, else 0)::

    O      = prod_{outer l} ceil(T_l / u_l)           outer initiations          (T_l = trip)
    N_out  = prod_{outer l} T_l                       outer iterations
  for each stage s (a loop nest, or straight-line code, inside the outer loops):
    I_s    = prod_{l in s} ceil(T_l / u_l)            inner initiations per outer initiation
    N_s    = prod_{l in s} T_l
    lanes_s  = prod_{outer l} u_l * prod_{l in s} u_l            parallel datapath copies
    copies_s = prod_{outer l} c_l * prod_{l in s} c_l,  c_l = u_l + [T_l mod u_l != 0]
               (a factor that does not divide the trip count adds one guarded remainder copy)
    D_s    = depth_s + mem_latency * [loads_s > 0 and not buffered]        pipeline fill/drain

Compute cycles C of a node (B_ld = mem_loads_per_cycle; loads are issued to global memory unless
the node's input is buffered on chip, when mem terms are 0):

    flat  (LF on, or no stage has inner loops: one pipeline over all loops):
        C = max(O * max_s I_s, ceil(N_out * R / B_ld)) + sum_s D_s
        R = max_s (N_s * loads_s) with LF (fused stages share one read of the input), else sum_s
    nested (LF off and some stage has inner loops: each stage is its own pipeline, refilled at
            every outer initiation):
        C = sum_s [ max(O * I_s, ceil(N_out * N_s * loads_s / B_ld)) + O * D_s ] + O * outer_overhead

Node cycles: C without input buffering; with it, max(C, F) where
F = ceil(input_bytes / mem_bytes_per_cycle) + mem_latency streams the input into the buffer.

Kernels: node-fusion flags that are on join nodes into kernels (connected components).  A kernel
runs its nodes one after another: K = launch_cycles + sum of its nodes' cycles.  A fusion whose
kernels would depend on each other in a cycle is illegal (INFEASIBLE).  An edge between two
kernels copies its data: X_e = ceil(bytes_e / mem_bytes_per_cycle); edges inside a kernel are
free.  Total cycles::

    TLP off:  sum_k K_k + sum_e X_e
    TLP on :  longest path of the kernel DAG, finish(k) = K_k + max_{p -> k} (finish(p) + X_{p->k})

ExecTime = total cycles / (clock_mhz * 1e6) seconds.

Resources (per node, then summed; the device budget bounds each)::

    LUT = base + sum_s copies_s * lut_s + LSU LUT
    FF  = base + (1 + f_LF * [LF on and the node has something to fuse]) * sum_s copies_s * ff_s + LSU FF
    DSP = base + sum_s lanes_s * dsp_s
    P   = parallel reads = max_s (lanes_s * loads_s) with LF, else sum_s
    BRAM = base + unbuffered: P * lsu.bram  (one load unit per parallel read, LUT/FF likewise)
                  buffered  : max(ceil(P / 2), ceil(buffer_bytes / bram_bytes)) + 1 LSU
                              (dual-ported banks, one per two parallel reads)
  plus, per edge between kernels, ceil(fifo_bytes / bram_bytes) BRAM, doubled with TLP (the
  overlapping kernels need ping-pong buffers).

A design that exceeds any budget does not fit: INFEASIBLE, with the overflowing resources.
Properties (unit-tested): raising an unroll factor never raises cycles and never lowers a
resource; LF never raises cycles or buffer BRAM; node fusion never raises BRAM and, with TLP off,
never raises cycles (with TLP on it can serialise parallel branches); TLP cycles <= sequential.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Tuple

from fpga_design import Design, Loop, Node, Resources, Stage, topological_order

RESOURCES = ("lut", "ff", "dsp", "bram")


@dataclass
class Report:
    """The model's verdict on one configuration."""

    cycles: Optional[float]                  # None when the fusion is illegal
    seconds: Optional[float]
    used: Dict[str, float]
    budget: Dict[str, float]
    overflow: List[str] = field(default_factory=list)
    reason: Optional[str] = None             # why it does not fit / is illegal
    node_cycles: Dict[str, float] = field(default_factory=dict)
    kernels: List[List[str]] = field(default_factory=list)

    @property
    def fits(self) -> bool:
        return self.reason is None

    def utilisation(self) -> Dict[str, float]:
        """Used / budget per resource (above 1: does not fit)."""
        return {k: round(self.used[k] / self.budget[k], 4) for k in RESOURCES}


# ------------------------------------------------------------------------------ one node
def _factor(loop: Loop, cfg: Mapping[str, int]) -> int:
    return int(cfg[loop.param]) if loop.param else 1


def _on(param: Optional[str], cfg: Mapping[str, int]) -> bool:
    return bool(param) and bool(cfg[param])


def _prod(xs) -> int:
    return math.prod(xs)


def _copies(loop: Loop, u: int) -> int:
    return u + (1 if loop.trip % u else 0)


def lf_applies(node: Node) -> bool:
    """Whether loop fusion changes anything: several stages, or inner loops to flatten."""
    return len(node.stages) > 1 or any(s.loops for s in node.stages)


def node_cycles(design: Design, node: Node, cfg: Mapping[str, int]) -> float:
    """Cycles of one node (compute, or the input stream when buffered, whichever is longer)."""
    dev, buffered, lf = design.device, _on(node.buffer_param, cfg), _on(node.lf_param, cfg)
    outer_u = [_factor(l, cfg) for l in node.outer]
    O = _prod(math.ceil(l.trip / u) for l, u in zip(node.outer, outer_u))
    n_out = _prod(l.trip for l in node.outer)
    I = [_prod(math.ceil(l.trip / _factor(l, cfg)) for l in s.loops) for s in node.stages]
    reads = [0.0 if buffered else _prod(l.trip for l in s.loops) * s.loads for s in node.stages]
    D = [s.depth + (dev.mem_latency if s.loads > 0 and not buffered else 0) for s in node.stages]
    bw = dev.mem_loads_per_cycle
    if lf or not any(s.loops for s in node.stages):
        R = max(reads) if lf else sum(reads)
        compute = max(O * max(I), math.ceil(n_out * R / bw)) + sum(D)
    else:
        compute = sum(max(O * i, math.ceil(n_out * r / bw)) + O * d for i, r, d in zip(I, reads, D))
        compute += O * design.model.outer_loop_overhead
    if not buffered:
        return float(compute)
    fill = math.ceil(node.input_bytes / dev.mem_bytes_per_cycle) + dev.mem_latency
    return float(max(compute, fill))


def _stage_counts(node: Node, stage: Stage, cfg: Mapping[str, int]) -> Tuple[int, int]:
    """(lanes, copies) of a stage's datapath."""
    loops = node.outer + stage.loops
    us = [_factor(l, cfg) for l in loops]
    return _prod(us), _prod(_copies(l, u) for l, u in zip(loops, us))


def node_resources(design: Design, node: Node, cfg: Mapping[str, int]) -> Resources:
    """Resources of one node: control, datapath copies, load units or input buffer."""
    lf = _on(node.lf_param, cfg) and lf_applies(node)
    lut = ff = dsp = 0.0
    reads = []
    for stage in node.stages:
        lanes, copies = _stage_counts(node, stage, cfg)
        lut += copies * stage.lut
        ff += copies * stage.ff
        dsp += lanes * stage.dsp
        reads.append(lanes * stage.loads)
    ff *= 1 + (design.model.loop_fusion_ff_overhead if lf else 0.0)
    P = max(reads) if lf else sum(reads)
    lsu = design.model.lsu
    if _on(node.buffer_param, cfg):
        n_lsu = 1
        bram = max(math.ceil(P / 2), math.ceil(node.buffer_bytes / design.device.bram_bytes)) + lsu.bram
    else:
        n_lsu = math.ceil(P)
        bram = n_lsu * lsu.bram
    b = node.base
    return Resources(b.lut + lut + n_lsu * lsu.lut, b.ff + ff + n_lsu * lsu.ff, b.dsp + dsp, b.bram + bram)


# ------------------------------------------------------------------------------ kernels
def kernels_of(design: Design, cfg: Mapping[str, int]) -> Dict[str, str]:
    """Node → kernel id (the name of the kernel's first node in description order): the nodes joined
    by enabled fusions form one kernel."""
    kernel = {n.name: n.name for n in design.nodes}
    members = {n.name: [n.name] for n in design.nodes}  # kernel id -> its nodes
    for f in design.fusions:
        a, b = kernel[f.src], kernel[f.dst]
        if cfg[f.param] and a != b:
            for name in members.pop(b):  # merge b's kernel into a's
                kernel[name] = a
                members[a].append(name)
    order = [n.name for n in design.nodes]
    first = {k: min(names, key=order.index) for k, names in members.items()}
    return {name: first[kernel[name]] for name in order}


def _kernel_edges(design: Design, kernel: Mapping[str, str]) -> Dict[Tuple[str, str], float]:
    """(kernel, kernel) → transfer cycles summed over the edges between them."""
    out: Dict[Tuple[str, str], float] = {}
    for e in design.edges:
        a, b = kernel[e.src], kernel[e.dst]
        if a != b:
            out[(a, b)] = out.get((a, b), 0.0) + math.ceil(e.bytes / design.device.mem_bytes_per_cycle)
    return out


def _total_cycles(design: Design, cfg: Mapping[str, int], kernel: Mapping[str, str],
                  cycles: Mapping[str, float]) -> Optional[float]:
    """Total cycles (sequential sum or TLP critical path); None when kernels form a cycle."""
    ids = list(dict.fromkeys(kernel[n.name] for n in design.nodes))
    weight = {k: float(design.device.launch_cycles) for k in ids}
    for name, k in kernel.items():
        weight[k] += cycles[name]
    xfer = _kernel_edges(design, kernel)
    order = topological_order(ids, list(xfer))
    if order is None:
        return None
    if not _on(design.tlp_param, cfg):
        return sum(weight.values()) + sum(xfer.values())
    finish: Dict[str, float] = {}
    for k in order:
        start = max((finish[a] + x for (a, b), x in xfer.items() if b == k), default=0.0)
        finish[k] = start + weight[k]
    return max(finish.values())


def _fifo_bram(design: Design, cfg: Mapping[str, int], kernel: Mapping[str, str]) -> float:
    per = 2 if _on(design.tlp_param, cfg) else 1
    return float(sum(per * math.ceil(e.fifo_bytes / design.device.bram_bytes)
                     for e in design.edges if kernel[e.src] != kernel[e.dst]))


# ------------------------------------------------------------------------------ whole design
def evaluate(design: Design, cfg: Mapping[str, int]) -> Report:
    """Latency and resources of the design ``cfg`` (a configuration of ``design``'s space)."""
    kernel = kernels_of(design, cfg)
    per_node = {n.name: node_cycles(design, n, cfg) for n in design.nodes}
    used = {k: 0.0 for k in RESOURCES}
    for n in design.nodes:
        for k, v in node_resources(design, n, cfg).as_dict().items():
            used[k] += v
    used["bram"] += _fifo_bram(design, cfg, kernel)
    budget = design.device.budget().as_dict()
    groups: Dict[str, List[str]] = {}
    for name, k in kernel.items():
        groups.setdefault(k, []).append(name)
    report = Report(None, None, used, budget, node_cycles=per_node, kernels=list(groups.values()))
    total = _total_cycles(design, cfg, kernel, per_node)
    report.overflow = [k for k in RESOURCES if used[k] > budget[k]]
    if total is None:
        report.reason = ("illegal node fusion: kernels " + " / ".join("+".join(g) for g in groups.values())
                         + " depend on each other in a cycle")
        return report
    report.cycles, report.seconds = total, total / (design.device.clock_mhz * 1e6)
    if report.overflow:
        report.reason = "does not fit: " + ", ".join(
            f"{k} {used[k]:.0f}/{budget[k]:.0f} ({100 * used[k] / budget[k]:.0f}%)" for k in report.overflow)
    return report


def result_extra(report: Report) -> Dict[str, object]:
    """JSON-compatible ``Result.extra`` for a report: utilisation, cycles, kernels, reason."""
    extra: Dict[str, object] = {f"util_{k}": v for k, v in report.utilisation().items()}
    extra["kernels"] = len(report.kernels)
    if report.cycles is not None:
        extra.update(cycles=report.cycles, exec_ms=round(1e3 * report.seconds, 6))
    if report.reason:
        extra["reason"] = report.reason
    if report.overflow:
        extra["overflow"] = ",".join(report.overflow)
    return extra
