"""Structured moves through the Halide schedule space (``schedule.py``): a search technique.

A good Halide schedule couples knobs: a stage is fast when it is tiled *and* its tile is at least
one vector wide *and* it is vectorised *and* (at root) parallel; a producer moved to a consumer
loop needs its own vector width; a register block is "rows innermost, unrolled by the tile height,
one vector wide".  Generic mutation changes one or two parameters at a time and treats the tile,
vector and parallel knobs as unrelated numbers, so from Halide's scalar default schedule it needs
several lucky steps in a row, each of which alone is rarely faster (a vector width is clamped to a
tile width of 1; a parallel loop over single points is slower).  :class:`ScheduleMoves` mutates the
best schedules (or one of the few best) with *moves* that change such a group of knobs together:

``simd``      vector width 4/8/16, the tile widened to hold it, parallel when computed at root;
``tile``      tile width and height drawn together (width at least the vector), a tiled loop order;
``block``     register block: one vector wide, 4-32 rows, rows innermost and unrolled (up to 8);
``place``     a producer's compute level drawn afresh, with a vector width and storage to match;
``nudge``     one of tile width/height, vector, unroll doubled or halved, parallel flipped, or
              another legal loop order (the fine-tuning step);
``copy``      one stage's tile, vector and unroll copied from another scheduled stage.

The stage structure is read from the parameter names (``<stage>_order`` and its siblings) and
bounds of the space, so the technique needs no pipeline object; it only proposes configurations
that satisfy the known constraints and whose schedule (ignoring knobs of inlined stages) it has not
seen.  The Halide tuner runs it in an AUC bandit with the default technique's members
(``halide_tuner.DEFAULT_TECHNIQUES``).
"""
from __future__ import annotations

import itertools
import json
from typing import Any, Dict, List, Optional, Tuple

from tunerlib.techniques import Feedback, GreedyMutation

Config = Dict[str, Any]   # a configuration: parameter name -> value

#: vector widths the moves choose from (4 and 8 float32 lanes fill SSE/AVX2 registers)
VECTORS = (4, 8, 16)
#: move name -> weight (``place`` only where a stage can be placed)
MOVES = {"simd": 0.2, "tile": 0.2, "block": 0.1, "place": 0.2, "nudge": 0.25, "copy": 0.05}
#: numeric knobs ``nudge`` doubles or halves
NUDGED = ("tile_x", "tile_y", "vectorize", "unroll")


class ScheduleMoves(GreedyMutation):
    """Mutate the best Halide schedules with moves that change coupled knobs together (on a space that
    is not a Halide schedule space, plain greedy mutation, so the technique runs anywhere)."""

    description = ("Halide schedule moves: tile, vector, unroll, parallel and placement knobs of a stage "
                   "changed together (examples/halide/moves.py)")

    def __init__(self, name: Optional[str] = None, top: int = 5, p_best: float = 0.7,
                 max_tries: int = 60) -> None:
        """``top``: how many of the fastest schedules a move may start from; ``p_best``: how often it
        starts from the fastest; ``max_tries``: attempts at a new feasible schedule per proposal."""
        super().__init__(name or "ScheduleMoves", mutation_rate=0.1, must_mutate=1)
        self.top, self.p_best, self.max_tries = top, p_best, max_tries
        self._top: List[Tuple[float, Config]] = []
        self._seen: set = set()

    def bind(self, manipulator, rng, path=None) -> None:
        """Read the stages and their bounds from ``manipulator`` (see the module docstring)."""
        super().bind(manipulator, rng, path)
        names = set(manipulator.names)
        self.stages = [n[:-len("_order")] for n in manipulator.names if n.endswith("_order")]
        if any(f"{s}_{k}" not in names for s in self.stages for k in NUDGED + ("parallel",)):
            self.stages = []                   # not a Halide schedule space: generic greedy mutation
        self.placeable = [s for s in self.stages if f"{s}_compute" in manipulator.names]
        self.orders = {s: legal_orders(manipulator.parameter(f"{s}_order")) for s in self.stages}

    def observe(self, feedback: Feedback) -> None:
        """Remember every schedule seen and the ``top`` fastest."""
        super().observe(feedback)
        self._seen.add(self.schedule_key(feedback.config))
        if feedback.ok:
            self._top.append((feedback.value, feedback.config))
            self._top.sort(key=lambda pair: pair[0])
            del self._top[self.top:]

    def desired_configuration(self) -> Optional[Config]:
        """A feasible, unseen schedule one or two moves away from one of the fastest; None when
        nothing was measured yet or no move found one."""
        m = self.manipulator
        if not self.stages:
            return super().desired_configuration()
        if not self._top:
            return None
        for _ in range(self.max_tries):
            pick = 0 if self.rng.random() < self.p_best else self.rng.randrange(len(self._top))
            child = m.copy(self._top[pick][1])
            for _ in range(1 + (self.rng.random() < 0.3)):
                self.move(child)
            key = self.schedule_key(child)
            if key not in self._seen and m.is_feasible(child):
                self._seen.add(key)
                return child
        return None

    def schedule_key(self, cfg: Config) -> str:
        """The configuration without the knobs of inlined stages (they change no schedule)."""
        kept = {k: v for k, v in cfg.items()
                if not any(k.startswith(s + "_") and k != f"{s}_compute" and cfg.get(f"{s}_compute") == "inline"
                           for s in self.placeable)}
        return json.dumps(kept, sort_keys=True, default=str)

    # ------------------------------------------------------------------------------- moves
    def move(self, cfg: Config) -> str:
        """Apply one move (drawn by :data:`MOVES` weight) to a random stage; returns its name."""
        names = [n for n in MOVES if n != "place" or self.placeable]
        name = self.rng.choices(names, [MOVES[n] for n in names])[0]
        if name == "place":
            self.place(cfg, self.rng.choice(self.placeable))
            return name
        stage = self.rng.choice(self.scheduled(cfg))
        getattr(self, name)(cfg, stage)
        return name

    def scheduled(self, cfg: Config) -> List[str]:
        """Stages with loops of their own (not inlined)."""
        return [s for s in self.stages if cfg.get(f"{s}_compute") != "inline"]

    def _pow2(self, cfg: Config, s: str, knob: str, low: int = 1) -> int:
        """A random power of two in ``[max(low, min), max]`` of knob ``s_knob``."""
        p = self.manipulator.parameter(f"{s}_{knob}")
        choices = [v for v in powers(int(p.min), int(p.max)) if v >= min(low, int(p.max))]
        return self.rng.choice(choices)

    def _at_root(self, cfg: Config, s: str) -> bool:
        return cfg.get(f"{s}_compute", "root") == "root"

    def simd(self, cfg: Config, s: str) -> None:
        """Vectorise: width 4/8/16, tile at least that wide, parallel when at root."""
        vector = self.rng.choice(VECTORS)
        cfg[f"{s}_vectorize"] = vector
        if cfg[f"{s}_tile_x"] < vector:
            cfg[f"{s}_tile_x"] = self._pow2(cfg, s, "tile_x", vector)
        if self._at_root(cfg, s):
            cfg[f"{s}_parallel"] = True

    def tile(self, cfg: Config, s: str) -> None:
        """Draw tile width (>= the vector) and height together, with a tiled loop order."""
        cfg[f"{s}_tile_x"] = self._pow2(cfg, s, "tile_x", cfg[f"{s}_vectorize"])
        cfg[f"{s}_tile_y"] = self._pow2(cfg, s, "tile_y")
        tiled = [o for o in self.orders[s] if o[-2:] in (["xo", "yo"], ["yo", "xo"])]
        cfg[f"{s}_order"] = list(self.rng.choice(tiled or self.orders[s]))

    def block(self, cfg: Config, s: str) -> None:
        """Register block: one vector wide, rows innermost and unrolled."""
        vector = self.rng.choice(VECTORS)
        rows = self.rng.choice((4, 8, 16, 32))
        cfg[f"{s}_vectorize"] = cfg[f"{s}_tile_x"] = min(vector, int(self.manipulator.parameter(f"{s}_tile_x").max))
        cfg[f"{s}_tile_y"] = min(rows, int(self.manipulator.parameter(f"{s}_tile_y").max))
        cfg[f"{s}_order"] = ["yi"] + [v for v in cfg[f"{s}_order"] if v != "yi"]
        cfg[f"{s}_unroll"] = min(cfg[f"{s}_tile_y"], int(self.manipulator.parameter(f"{s}_unroll").max))
        if self._at_root(cfg, s):
            cfg[f"{s}_parallel"] = True

    def place(self, cfg: Config, s: str) -> None:
        """A new compute level for producer ``s``, vectorised (one vector wide, one row high at a
        consumer loop, so it covers no more than the consumer needs); a consumer that is not tiled
        yet gets a tile or register block, since computing per point of it recomputes ``s``."""
        options = self.manipulator.parameter(f"{s}_compute").options
        where = cfg[f"{s}_compute"] = self.rng.choice([o for o in options if o != cfg[f"{s}_compute"]] or options)
        if where == "inline":
            return
        cfg[f"{s}_store"] = self.rng.choice(("compute", "compute", "outer", "root"))
        self.simd(cfg, s)
        cfg[f"{s}_parallel"] = where == "root"
        if where != "root":
            cfg[f"{s}_tile_x"], cfg[f"{s}_tile_y"] = cfg[f"{s}_vectorize"], 1
            target = where.split(".")[0]
            if cfg[f"{target}_tile_x"] * cfg[f"{target}_tile_y"] == 1:
                (self.block if self.rng.random() < 0.5 else self.tile)(cfg, target)

    def nudge(self, cfg: Config, s: str) -> None:
        """One small step: a factor doubled or halved, parallel flipped, or another loop order."""
        what = self.rng.choice(NUDGED + ("parallel", "order"))
        if what == "parallel":
            cfg[f"{s}_parallel"] = not cfg[f"{s}_parallel"]
        elif what == "order":
            cfg[f"{s}_order"] = list(self.rng.choice(self.orders[s]))
        else:
            p = self.manipulator.parameter(f"{s}_{what}")
            value = cfg[f"{s}_{what}"] * self.rng.choice((2, 0.5))
            cfg[f"{s}_{what}"] = int(min(max(value, p.min), p.max))

    def copy(self, cfg: Config, s: str) -> None:
        """Tile, vector and unroll of ``s`` copied from another scheduled stage."""
        others = [t for t in self.scheduled(cfg) if t != s]
        if others:
            t = self.rng.choice(others)
            for knob in NUDGED:
                p = self.manipulator.parameter(f"{s}_{knob}")
                cfg[f"{s}_{knob}"] = int(min(max(cfg[f"{t}_{knob}"], p.min), p.max))


def powers(low: int, high: int) -> List[int]:
    """Powers of two from ``low`` to ``high`` (both powers of two)."""
    out, v = [], max(1, low)
    while v <= high:
        out.append(v)
        v *= 2
    return out


def legal_orders(param: Any) -> List[List[Any]]:
    """Every permutation of a ``ScheduleParameter``'s items that respects its ``deps`` (an item after
    every item listed for it; innermost first here: ``xi`` before ``xo``)."""
    deps: Dict[Any, List[Any]] = param.deps
    out = []
    for perm in itertools.permutations(param.items):
        pos = {item: i for i, item in enumerate(perm)}
        if all(pos[b] < pos[a] for a, before in deps.items() for b in before):
            out.append(list(perm))
    return out
