"""The schedule space of a Halide pipeline and how a configuration becomes a Halide schedule.

Every stage (Func) ``f`` of a :class:`~pipelines.PipelineSpec` gets these parameters:

=================  =========================================================================
``f_compute``      where ``f`` is computed: ``inline``, ``root``, or ``<consumer>.<loop>`` (a loop
                   ``yo``/``xo``/``yi`` of its only direct consumer or of the output); absent for
                   the output, which is always computed at root.  Funcs with an update definition
                   (a reduction) cannot be inlined, so ``inline`` is not offered for them.
``f_store``        where its storage lives: ``compute`` (same level), ``outer`` (the consumer's
                   loop just outside the compute loop in the consumer's loop order; root when
                   the compute loop is outermost) or ``root`` (sliding-window / folded storage);
                   ignored when ``f`` is computed inline or at root.
``f_tile_x/y``     split factors of ``x`` and ``y`` into ``xo, xi`` and ``yo, yi`` (powers of two up
                   to 256 or the next power of two above the extent).
``f_order``        loop order, innermost first: a permutation of ``xi, yi, xo, yo`` (plus the
                   reduction variable ``k`` for a stage with an update: the order applies to the
                   update, where the work is) in which ``xi`` stays inside ``xo`` and ``yi``
                   inside ``yo`` (a ``ScheduleParameter``, a permutation with precedence: 6 orders,
                   30 with ``k``; an inner loop outside its own outer loop only makes a strided
                   traversal that recomputes producers).
``f_vectorize``    ``xi`` is split by this width and the lanes, always the innermost loop, are
                   vectorised (1: no; clamped to the tile width).  Only x is vectorised: rows are
                   contiguous, and y lanes (gathers) made LLVM spend over ten minutes on one
                   harris schedule with a sliding window.
``f_unroll``       the innermost loop of ``f_order`` is split by this factor and the inner part,
                   just outside the vector lanes, unrolled (clamped to what is left of the loop).
``f_parallel``     the outermost loop runs in parallel.
=================  =========================================================================

Known constraints (added with ``manipulator.add_constraint`` as expressions, so techniques avoid
them): tiles are no larger than the output extent; storage is never placed outside a parallel
consumer loop (Halide forbids storage shared across parallel iterations); a producer computed at a
consumer loop computes at most ``MAX_RECOMPUTE`` (4) times as many points as the output has (a
loop order that puts the compute loop inside the tile loops, or a producer tile far larger than
the region it must cover, otherwise recomputes it thousands of times: minutes per run, never the
best schedule; :func:`recompute_expression`).  Knobs that cannot matter are ignored rather than
constrained, so random configurations stay mostly feasible: the knobs of an inlined Func, the
store knob of a Func computed inline or at root, and vector/unroll factors larger than the loop
they split (clamped to it, :func:`clamped_factors`).

Everything else Halide checks itself and is left as a *hidden* constraint: computing at a loop
that does not enclose every use (a producer with several consumers), parallelising the reduction
variable ``k`` (a race), a region that grows past the input margin, ... raise
``HalideError`` when the schedule is applied, compiled or run, and the tuner records those as
INFEASIBLE.

:func:`apply_schedule` applies a configuration to a freshly defined :class:`~pipelines.Algorithm`.
``halide`` is imported lazily; :func:`build_space` and :func:`default_config` do not need it.
"""
from __future__ import annotations

import json
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from pipelines import Algorithm, PipelineSpec, StageSpec
from tunerlib.parameters import (BooleanParameter, ConfigurationManipulator, EnumParameter,
                                 PowerOfTwoParameter, ScheduleParameter)

#: consumer loops a producer may be computed at (outermost tile loop to innermost row)
LEVELS = ("yo", "xo", "yi")
#: loop-order precedence (innermost first): each tile's inner loop stays inside its outer loop
TILE_NESTING = {"xo": ["xi"], "yo": ["yi"]}
#: store placements relative to the compute level
STORE_OPTIONS = ("compute", "outer", "root")
#: a producer computed at a consumer loop may compute at most this many times the output's points
#: (known constraint: more is never the best schedule and can take minutes to run)
MAX_RECOMPUTE = 4
#: largest tile factor, vector width and unroll factor in the space
MAX_TILE, MAX_VECTOR, MAX_UNROLL = 256, 16, 8


def knob(stage: str, name: str) -> str:
    """Parameter name of knob ``name`` of ``stage`` (e.g. ``blur_x_tile_x``)."""
    return f"{stage}_{name}"


def stage_loops(stage: StageSpec) -> List[str]:
    """The loops ``f_order`` permutes, in the seed order (innermost first)."""
    return ["xi", "yi", *stage.rvars, "xo", "yo"]


def placement_targets(spec: PipelineSpec, stage: StageSpec) -> List[str]:
    """Consumers whose loops ``stage`` may be computed at: its only direct consumer, and the output."""
    targets = [stage.consumers[0]] if len(stage.consumers) == 1 else []
    if spec.output_name not in targets:
        targets.append(spec.output_name)
    return targets


def compute_options(spec: PipelineSpec, stage: StageSpec) -> List[str]:
    """Values of ``f_compute`` for a non-output stage."""
    head = ["inline", "root"] if stage.inlinable else ["root"]
    return head + [f"{t}.{lvl}" for t in placement_targets(spec, stage) for lvl in LEVELS]


def max_tile(extent: int) -> int:
    """Largest tile factor offered for an output ``extent``: the power of two at or above it,
    capped at :data:`MAX_TILE` (the known constraint ``tile <= extent`` trims the rest)."""
    tile = 1
    while tile < extent and tile < MAX_TILE:
        tile *= 2
    return tile


def build_space(spec: PipelineSpec, width: int, height: int) -> ConfigurationManipulator:
    """The search space for ``spec`` with an output of ``width`` x ``height`` (see module docstring)."""
    m = ConfigurationManipulator()
    for stage in spec.stages:
        s = stage.name
        if s != spec.output_name:
            m.add_parameter(EnumParameter(knob(s, "compute"), compute_options(spec, stage)))
            m.add_parameter(EnumParameter(knob(s, "store"), list(STORE_OPTIONS)))
        m.add_parameter(PowerOfTwoParameter(knob(s, "tile_x"), 1, max_tile(width)))
        m.add_parameter(PowerOfTwoParameter(knob(s, "tile_y"), 1, max_tile(height)))
        m.add_parameter(ScheduleParameter(knob(s, "order"), stage_loops(stage), TILE_NESTING))
        m.add_parameter(PowerOfTwoParameter(knob(s, "vectorize"), 1, MAX_VECTOR))
        m.add_parameter(PowerOfTwoParameter(knob(s, "unroll"), 1, MAX_UNROLL))
        m.add_parameter(BooleanParameter(knob(s, "parallel")))
    for stage in spec.stages:           # constraints read other stages' knobs: add them last
        _add_constraints(m, spec, stage, width, height)
    return m


def _add_constraints(m: ConfigurationManipulator, spec: PipelineSpec, stage: StageSpec,
                     width: int, height: int) -> None:
    """Known constraints of one stage (expressions, so they are saved with the space)."""
    s = stage.name
    tx, ty = knob(s, "tile_x"), knob(s, "tile_y")
    m.add_constraint(f"{tx} <= {width}", name=f"{s}: tile_x <= output width")
    m.add_constraint(f"{ty} <= {height}", name=f"{s}: tile_y <= output height")
    if s != spec.output_name:
        _add_placement_constraints(m, spec, stage, width, height)


def _add_placement_constraints(m: ConfigurationManipulator, spec: PipelineSpec, stage: StageSpec,
                               width: int, height: int) -> None:
    """No storage outside a parallel consumer loop; bounded recomputation at a consumer loop."""
    s = stage.name
    store, compute = knob(s, "store"), knob(s, "compute")
    for target in placement_targets(spec, stage):
        here = [f"{target}.{lvl}" for lvl in LEVELS]
        par = knob(target, "parallel")
        m.add_constraint(f"{store} != 'root' or not {par} or {compute} not in {here!r}",
                         name=f"{s}: no root storage outside parallel {target}")
        last = len(stage_loops(spec.stage(target))) - 1
        for lvl in LEVELS:   # 'outer' of the outermost loop is root
            m.add_constraint(f"{store} != 'outer' or not {par} or {compute} != '{target}.{lvl}' or "
                             f"index({knob(target, 'order')}, '{lvl}') != {last}",
                             name=f"{s}: no outer storage outside parallel {target}.{lvl}")
            m.add_constraint(f"{compute} != '{target}.{lvl}' or "
                             f"{recompute_expression(s, target, lvl, width, height)}",
                             name=f"{s}: recompute at {target}.{lvl} <= {MAX_RECOMPUTE}x")


def recompute_expression(s: str, target: str, level: str, width: int, height: int) -> str:
    """Expression: points of ``s`` computed when it sits at ``target.level`` <= MAX_RECOMPUTE x the
    output area (``width * height``).

    ``target`` runs loops ``xi, xo, yi, yo`` of extents ``tile_x, ceil(width/tile_x), tile_y,
    ceil(height/tile_y)``.  ``s`` is computed once per iteration of every loop at or outside
    ``level``; each time over the bounding box of the loops inside ``level`` (the full width when
    ``xo`` is inside, the tile when only ``xi`` is, one column otherwise; likewise for y), rounded
    up to its own tile.  Stencil halos are ignored (a slight underestimate); ``target`` is assumed
    to be computed at root (true of every pipeline here: targets are the output or compute root).
    """
    order, tx, ty = knob(target, "order"), knob(target, "tile_x"), knob(target, "tile_y")
    extents = {"xi": tx, "xo": f"(({width} + {tx} - 1) // {tx})",
               "yi": ty, "yo": f"(({height} + {ty} - 1) // {ty})"}

    def pos(loop: str) -> str:
        return f"index({order}, '{loop}')"

    calls = " * ".join(f"(1 + int({pos(lp)} >= {pos(level)}) * ({ext} - 1))" for lp, ext in extents.items())
    region = []
    for axis, full, tile in (("x", width, tx), ("y", height, ty)):
        region.append(f"max(int({pos(axis + 'o')} < {pos(level)}) * {full}, "
                      f"int({pos(axis + 'i')} < {pos(level)}) * {tile}, 1, {knob(s, 'tile_' + axis)})")
    return f"{calls} * {region[0]} * {region[1]} <= {MAX_RECOMPUTE * width * height}"


def default_config(spec: PipelineSpec) -> Dict[str, Any]:
    """Halide's default schedule written in this space (what the search starts from).

    Everything inline except the output, no splitting (tiles of 1), ``x`` innermost, no
    vectorisation, unrolling or parallelism.  A Func with an update definition cannot be inlined:
    unscheduled, Halide computes it at the innermost loop of its consumer, one point per iteration
    (matmul's ``prod`` as a per-point accumulator, not a buffer at root), which this space writes as
    ``<consumer>.xo`` of a consumer whose tiles are 1 (:func:`default_placement`).
    """
    cfg: Dict[str, Any] = {}
    for stage in spec.stages:
        s = stage.name
        if s != spec.output_name:
            cfg[knob(s, "compute")] = "inline" if stage.inlinable else default_placement(spec, stage)
            cfg[knob(s, "store")] = "compute"
        cfg.update({knob(s, "tile_x"): 1, knob(s, "tile_y"): 1, knob(s, "order"): stage_loops(stage),
                    knob(s, "vectorize"): 1, knob(s, "unroll"): 1, knob(s, "parallel"): False})
    return cfg


def default_placement(spec: PipelineSpec, stage: StageSpec) -> str:
    """Where Halide computes an unscheduled Func that cannot be inlined: the innermost loop of its
    consumer, here ``<consumer>.xo`` (the consumer's tiles are 1 in the default schedule), the
    output's when its direct consumer is inlined there or it has several consumers."""
    direct = placement_targets(spec, stage)[0]
    inlined = direct != spec.output_name and spec.stage(direct).inlinable
    return f"{spec.output_name if inlined else direct}.xo"


#: vector width and output tile of the schedule templates (8 float32 lanes fill an AVX2 register)
TEMPLATE_VECTOR, TEMPLATE_TILES = 8, (32, 64, 256)
#: rows of the register-block templates (unrolled; the largest unroll factor of the space)
TEMPLATE_ROWS = 8


def template_configs(spec: PipelineSpec, width: int, height: int) -> List[Dict[str, Any]]:
    """The classic hand-written Halide schedule shapes, as starting points for the search.

    * ``inline``: producers inlined (reductions at root), the output tiled, vectorised and
      parallel over tile rows;
    * ``root``: every stage computed at root, vectorised, parallel over rows;
    * ``fused``: every producer computed per tile of the output (at its ``xo`` loop), vectorised,
      the output tiled and parallel;
    * ``fused-inline``: as ``fused``, but the output's direct producers are inlined into it
      (cheap pointwise-from-tile stages), the earlier ones computed per output tile;

    the fused shapes for each tile size of :data:`TEMPLATE_TILES`, and both once more as register
    blocks: one vector wide and :data:`TEMPLATE_ROWS` rows high, the rows innermost and unrolled
    ("vectorise x, unroll y", the shape of Halide's tutorial and Adams2019 stencil schedules).

    Generic templates (the shapes Halide's tutorials and autoschedulers start from), not tuned per
    pipeline; the caller drops those that violate the known constraints.
    """
    out = []
    rows = min(TEMPLATE_ROWS, max_tile(height))
    for kind in ("fused", "fused-inline"):
        out.append(_template(spec, kind, min(TEMPLATE_VECTOR, max_tile(width)), rows, unroll_rows=True))
    for tile in TEMPLATE_TILES:
        tx, ty = min(tile, max_tile(width)), min(tile, max_tile(height))
        out.append(_template(spec, "fused", tx, ty))
        out.append(_template(spec, "fused-inline", tx, ty))
        if tile == 64:
            out.append(_template(spec, "inline", tx, ty))
            out.append(_template(spec, "root", tx, ty))
    return out


def _template(spec: PipelineSpec, kind: str, tx: int, ty: int, unroll_rows: bool = False) -> Dict[str, Any]:
    cfg = default_config(spec)
    out = spec.output_name
    for stage in spec.stages:
        s = stage.name
        tiled = s == out or kind == "root"
        # a producer computed per tile: x split by the vector width so its lanes are vectorised
        cfg.update({knob(s, "vectorize"): TEMPLATE_VECTOR, knob(s, "parallel"): s == out or kind == "root",
                    knob(s, "tile_x"): tx if tiled else TEMPLATE_VECTOR, knob(s, "tile_y"): ty if tiled else 1})
        if s == out:
            if unroll_rows:   # the tile's rows innermost (inside the vector lanes' loop) and unrolled
                loops = list(stage_loops(stage))
                cfg[knob(s, "order")] = ["yi"] + [v for v in loops if v != "yi"]
                cfg[knob(s, "unroll")] = min(ty, MAX_UNROLL)
            continue
        if kind == "fused-inline" and stage.inlinable and tuple(stage.consumers) == (out,):
            cfg[knob(s, "compute")] = "inline"
        elif kind.startswith("fused"):
            cfg[knob(s, "compute")] = f"{out}.xo"
            cfg[knob(s, "parallel")] = False
        elif kind == "root" or not stage.inlinable:
            cfg[knob(s, "compute")] = "root"
            cfg[knob(s, "parallel")] = True
    return cfg


def effective_key(spec: PipelineSpec, cfg: Mapping[str, Any], width: int, height: int) -> str:
    """Canonical JSON of the knobs that change the Halide schedule of ``cfg``.

    Two configurations with the same key apply identical directives: the knobs of an inlined Func
    and the store knob of a Func computed inline or at root are ignored, vector and unroll factors
    count as clamped, and ``outer`` storage of a Func computed at its consumer's outermost loop is
    the same as ``root``.
    """
    key: Dict[str, Any] = {}
    for stage in spec.stages:
        s = stage.name
        where = cfg.get(knob(s, "compute"), "root")
        if where == "inline":
            key[s] = "inline"
            continue
        entry = {k: cfg[knob(s, k)] for k in ("tile_x", "tile_y", "order", "parallel")}
        entry["vectorize"], entry["unroll"] = clamped_factors(cfg, s, width, height)
        entry["compute"] = where
        if where != "root":
            store = cfg[knob(s, "store")]
            if store == "outer" and outer_loop(cfg[knob(where.split(".")[0], "order")],
                                               where.split(".")[1]) is None:
                store = "root"
            entry["store"] = store
        key[s] = entry
    return json.dumps(key, sort_keys=True, separators=(",", ":"))


def describe(spec: PipelineSpec, cfg: Mapping[str, Any]) -> List[str]:
    """Human-readable lines, one per stage, e.g. ``blur_x: compute blur_y.yi, tile 8x32, ...``."""
    lines = []
    for stage in spec.stages:
        s = stage.name
        where = cfg.get(knob(s, "compute"), "root")
        if where == "inline":
            lines.append(f"{s}: inline")
            continue
        store = cfg.get(knob(s, "store"), "compute")
        lines.append(f"{s}: compute {where}" + ("" if store == "compute" else f" store {store}")
                     + f", tile {cfg[knob(s, 'tile_x')]}x{cfg[knob(s, 'tile_y')]}, loops (inner first) "
                     + " ".join(cfg[knob(s, "order")]) + f", vectorize {cfg[knob(s, 'vectorize')]}, "
                     f"unroll {cfg[knob(s, 'unroll')]}" + (", parallel" if cfg[knob(s, "parallel")] else ""))
    return lines


# ------------------------------------------------------------------------------- application
def apply_schedule(alg: Algorithm, spec: PipelineSpec, cfg: Mapping[str, Any], width: int,
                   height: int) -> None:
    """Schedule the Funcs of ``alg`` (fresh from ``Instance.define``) as ``cfg`` says, for an
    output of ``width`` x ``height``.

    Raises ``halide.HalideError`` when Halide rejects a directive (more errors may surface later,
    at compile or realize time); raises KeyError when ``cfg`` lacks a parameter.
    """
    for stage in spec.stages:
        func = alg.funcs[stage.name]
        if stage.name != spec.output_name and cfg[knob(stage.name, "compute")] == "inline":
            func.compute_inline()
            continue
        _schedule_loops(func, stage, alg, cfg, width, height)
    for stage in spec.stages[:-1]:
        if cfg[knob(stage.name, "compute")] != "inline":
            _place(alg, spec, stage, cfg)


def _loop_vars(stage: StageSpec, alg: Algorithm) -> Dict[str, Any]:
    import halide as hl
    loops: Dict[str, Any] = {name: hl.Var(name) for name in ("xi", "yi", "xo", "yo")}
    loops.update({name: alg.rvars[name] for name in stage.rvars})
    return loops


def _schedule_loops(func: Any, stage: StageSpec, alg: Algorithm, cfg: Mapping[str, Any],
                    width: int, height: int) -> None:
    """Tile, vectorise (x lanes innermost), unroll, reorder and parallelise the working stage."""
    s = stage.name
    work = func.update(0) if stage.rvars else func
    if stage.rvars:
        _schedule_init(func, alg, cfg, s)
    loops = _loop_vars(stage, alg)
    work.split(alg.x, loops["xo"], loops["xi"], cfg[knob(s, "tile_x")])
    work.split(alg.y, loops["yo"], loops["yi"], cfg[knob(s, "tile_y")])
    order: Sequence[str] = cfg[knob(s, "order")]
    vector, unroll = clamped_factors(cfg, s, width, height)
    inner = [_split_off(work, loops, "xi", vector, "v"), _split_off(work, loops, order[0], unroll, "u")]
    work.reorder(*[v for v in inner if v is not None], *[loops[name] for name in order])
    if inner[0] is not None:
        work.vectorize(inner[0])
    if inner[1] is not None:
        work.unroll(inner[1])
    if cfg[knob(s, "parallel")]:
        work.parallel(loops[order[-1]])


def loop_extent(cfg: Mapping[str, Any], s: str, loop: str, width: int, height: int) -> Optional[int]:
    """Extent of loop ``loop`` of stage ``s`` over a ``width`` x ``height`` region (None for ``k``)."""
    tx, ty = cfg[knob(s, "tile_x")], cfg[knob(s, "tile_y")]
    return {"xi": tx, "yi": ty, "xo": -(-width // tx), "yo": -(-height // ty)}.get(loop)


def clamped_factors(cfg: Mapping[str, Any], s: str, width: int, height: int) -> Tuple[int, int]:
    """(vector width, unroll factor) of stage ``s``, each clamped to what is left of the loop it
    splits: the vector lanes split ``xi`` (the tile width), the unrolled loop splits the innermost
    loop of the order (after the lanes when that is ``xi``).  A factor too large is halved until
    it fits."""
    order = cfg[knob(s, "order")]
    vector = _fit(cfg[knob(s, "vectorize")], cfg[knob(s, "tile_x")])
    extent = loop_extent(cfg, s, order[0], width, height)
    if extent is not None and order[0] == "xi":
        extent = -(-extent // vector)
    return vector, _fit(cfg[knob(s, "unroll")], extent)


def _fit(factor: int, extent: Optional[int]) -> int:
    while extent is not None and factor > max(1, extent):
        factor //= 2
    return factor


def _schedule_init(func: Any, alg: Algorithm, cfg: Mapping[str, Any], s: str) -> None:
    """The pure (initialisation) stage of a Func with an update: vectorise x, parallel y."""
    import halide as hl
    width = cfg[knob(s, "vectorize")]
    if width > 1:
        xv = hl.Var("x_init_v")
        func.split(alg.x, alg.x, xv, width).vectorize(xv)
    if cfg[knob(s, "parallel")]:
        func.parallel(alg.y)


def _split_off(work: Any, loops: Dict[str, Any], name: str, factor: int, suffix: str) -> Any:
    """Split loop ``name`` by ``factor`` (when > 1); returns the new inner loop variable or None."""
    import halide as hl
    if factor <= 1:
        return None
    outer = loops[name]
    inner = hl.RVar(f"{name}_{suffix}") if isinstance(outer, hl.RVar) else hl.Var(f"{name}_{suffix}")
    work.split(outer, outer, inner, factor)
    return inner


def _place(alg: Algorithm, spec: PipelineSpec, stage: StageSpec, cfg: Mapping[str, Any]) -> None:
    """compute_root / compute_at and store_root / store_at for a non-output stage."""
    import halide as hl
    func = alg.funcs[stage.name]
    where = cfg[knob(stage.name, "compute")]
    if where == "root":
        func.compute_root()
        return
    target, level = where.split(".")
    consumer = alg.funcs[target]
    func.compute_at(consumer, hl.Var(level))
    store = cfg[knob(stage.name, "store")]
    if store == "root":
        func.store_root()
    elif store == "outer":
        outside = outer_loop(cfg[knob(target, "order")], level)
        if outside is None:
            func.store_root()
        else:
            func.store_at(consumer, _named(alg, spec.stage(target), outside))


def _named(alg: Algorithm, stage: StageSpec, name: str) -> Any:
    import halide as hl
    return alg.rvars[name] if name in stage.rvars else hl.Var(name)


def outer_loop(order: Sequence[str], level: str) -> Any:
    """The loop just outside ``level`` in a stage whose loop order is ``order`` (innermost first),
    or None when ``level`` is the outermost loop."""
    pos = list(order).index(level)
    return order[pos + 1] if pos + 1 < len(order) else None
