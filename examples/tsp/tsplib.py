"""TSPLIB reader, random instance generator and tour length (pure numpy).

This module has no tunerlib imports: it is the "model" half of the TSP example and can be used on its
own::

    inst = read_instance("berlin52.tsp")          # Instance(name, kind, dimension, matrix, coords, ...)
    tour = read_tour("berlin52.opt.tour")         # 0-based numpy array
    tour_length(inst.matrix, tour)                # -> 7542
    lookup_optimum("berlin52.tsp")                # -> 7542.0 (from bestSolutions_*.txt next to the file)
    random_instance(40, seed=0)                   # EUC_2D instance in a 1000 x 1000 square

Supported (TSPLIB95, Reinelt 1991): TYPE TSP / ATSP (extra text after the type is tolerated, e.g. si175);
EDGE_WEIGHT_TYPE EUC_2D, EUC_3D, CEIL_2D, ATT, GEO, MAN_2D, MAN_3D, MAX_2D, MAX_3D and EXPLICIT with
EDGE_WEIGHT_FORMAT FULL_MATRIX, UPPER_ROW, LOWER_ROW, UPPER_DIAG_ROW, LOWER_DIAG_ROW, UPPER_COL,
LOWER_COL, UPPER_DIAG_COL, LOWER_DIAG_COL (EDGE_WEIGHT_FORMAT FUNCTION on coordinate types is accepted);
sections NODE_COORD_SECTION, EDGE_WEIGHT_SECTION, DISPLAY_DATA_SECTION, EOF. Matrices are indexed
0-based, row = from, column = to (this matters for ATSP). Tour files are 1-based, as in TSPLIB.

Every problem in a file raises :class:`TSPLIBError` with a one-line message naming the file, the line
where possible, and the fix.
"""

import math
import os
import random
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

__all__ = [
    "TSPLIBError", "Instance", "read_instance", "parse_instance", "read_tour", "parse_tour",
    "tour_length", "read_best_solutions", "lookup_optimum", "random_instance", "geo_distance",
    "att_distance",
    "COORD_WEIGHT_TYPES", "EXPLICIT_FORMATS",
]

#: EDGE_WEIGHT_TYPEs computed from coordinates -> number of coordinates per node.
COORD_WEIGHT_TYPES: Dict[str, int] = {
    "EUC_2D": 2, "EUC_3D": 3, "CEIL_2D": 2, "ATT": 2, "GEO": 2,
    "MAN_2D": 2, "MAN_3D": 3, "MAX_2D": 2, "MAX_3D": 3,
}
#: EDGE_WEIGHT_FORMATs understood for EDGE_WEIGHT_TYPE: EXPLICIT.
EXPLICIT_FORMATS = (
    "FULL_MATRIX", "UPPER_ROW", "LOWER_ROW", "UPPER_DIAG_ROW", "LOWER_DIAG_ROW",
    "UPPER_COL", "LOWER_COL", "UPPER_DIAG_COL", "LOWER_DIAG_COL",
)
_SECTIONS = ("NODE_COORD_SECTION", "EDGE_WEIGHT_SECTION", "DISPLAY_DATA_SECTION", "TOUR_SECTION")
# Sections of other TSPLIB problem types (CVRP, ...) whose data is skipped.
_SKIPPED_SECTIONS = ("DEPOT_SECTION", "DEMAND_SECTION", "FIXED_EDGES_SECTION", "EDGE_DATA_SECTION")
# TSPLIB's constants for GEO distances (deliberately not math.pi: the published optima use these).
_GEO_PI = 3.141592
_GEO_RRR = 6378.388
# The ATSP best-solutions list names some instances differently from their files.
_OPTIMUM_ALIASES = {"kro124p": "kro124"}


class TSPLIBError(ValueError):
    """A TSPLIB file (or tour / best-solutions list) that cannot be used; the message is one line."""

    def __init__(self, path: Optional[str], problem: str, fix: str, line: Optional[int] = None):
        where = str(path) if path is not None else "<string>"
        if line is not None:
            where += f":{line}"
        message = f"{where}: {problem}; {fix}"
        super().__init__(" ".join(message.split()))   # guarantee a single line


@dataclass
class Instance:
    """One TSP/ATSP instance.

    ``matrix[i, j]`` is the cost of going from node i to node j (0-based; TSPLIB node k is index k-1),
    int64 when every weight is integral, float64 otherwise. ``coords`` holds the NODE_COORD_SECTION
    (shape (n, 2) or (n, 3)) or None; ``display`` holds 2-D drawing coordinates (the
    DISPLAY_DATA_SECTION, or the node coordinates when DISPLAY_DATA_TYPE is COORD_DISPLAY) or None.
    """

    name: str
    kind: str                          # "TSP" or "ATSP"
    dimension: int
    matrix: np.ndarray
    coords: Optional[np.ndarray] = None
    edge_weight_type: str = "EXPLICIT"
    edge_weight_format: Optional[str] = None
    comment: str = ""
    display: Optional[np.ndarray] = None
    path: Optional[str] = None


# --------------------------------------------------------------------------------------------- tokens

@dataclass
class _Section:
    name: str
    line: int                               # 1-based line number of the section keyword
    rows: List[Tuple[int, str]]             # (line number, text) of the data lines


def _is_keyword_line(text: str) -> bool:
    """True for lines that start a header entry, a section or EOF (first character a letter)."""
    return bool(text) and text[0].isalpha()


def _split_file(text: str, path: Optional[str]):
    """Split TSPLIB text into header entries {KEY: (value, line)} and a list of sections."""
    header: Dict[str, Tuple[str, int]] = {}
    sections: List[_Section] = []
    current: Optional[_Section] = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if not _is_keyword_line(line):
            if current is None:
                raise TSPLIBError(path, f"data line {line[:40]!r} outside any section",
                                  "put numbers only after a *_SECTION keyword", number)
            current.rows.append((number, line))
            continue
        key, sep, value = line.partition(":")
        key = key.strip().upper()
        if key == "EOF":
            break
        if key.endswith("_SECTION"):
            if any(s.name == key for s in sections):
                raise TSPLIBError(path, f"{key} appears twice", "keep a single copy of the section",
                                  number)
            current = _Section(key, number, [])
            sections.append(current)
            continue
        if not sep:
            if current is not None:
                raise TSPLIBError(path, f"non-numeric line {line[:40]!r} in {current.name}",
                                  "section data must be numbers", number)
            raise TSPLIBError(path, f"header line {line[:40]!r} has no ':'",
                              "write header entries as 'KEY : VALUE'", number)
        current = None
        header[key] = (value.strip(), number)
    return header, sections


def _numbers(section: _Section, path: Optional[str]) -> np.ndarray:
    """All numbers of a section as one float64 array (fast path: one numpy conversion)."""
    text = " ".join(row for _, row in section.rows)
    try:
        values = np.array(text.split(), dtype=np.float64)
        if np.all(np.isfinite(values)):
            return values
    except ValueError:
        pass
    for number, row in section.rows:              # slow path only to locate the bad token
        for token in row.split():
            try:
                if not math.isfinite(float(token)):
                    raise ValueError(token)
            except ValueError:
                raise TSPLIBError(path, f"non-numeric value {token[:30]!r} in {section.name}",
                                  "section data must be numbers", number) from None
    raise TSPLIBError(path, f"unreadable numbers in {section.name}", "check the section data",
                      section.line)


# ---------------------------------------------------------------------------------------- distances

def _nint(x: np.ndarray) -> np.ndarray:
    """TSPLIB's nint(): (int)(x + 0.5) for the non-negative values used here."""
    return np.floor(x + 0.5).astype(np.int64)


def _coordinate_matrix(coords: np.ndarray, weight_type: str) -> np.ndarray:
    """Distance matrix (int64) of a coordinate EDGE_WEIGHT_TYPE, with TSPLIB's exact rounding."""
    if weight_type == "GEO":
        return _geo_matrix(coords)
    diff = np.abs(coords[:, None, :] - coords[None, :, :])
    if weight_type in ("EUC_2D", "EUC_3D"):
        matrix = _nint(np.sqrt((diff ** 2).sum(axis=2)))
    elif weight_type == "CEIL_2D":
        matrix = np.ceil(np.sqrt((diff ** 2).sum(axis=2))).astype(np.int64)
    elif weight_type == "ATT":
        r = np.sqrt((diff ** 2).sum(axis=2) / 10.0)
        t = _nint(r)
        matrix = np.where(t < r, t + 1, t)
    elif weight_type in ("MAN_2D", "MAN_3D"):
        matrix = _nint(diff.sum(axis=2))
    elif weight_type in ("MAX_2D", "MAX_3D"):
        matrix = _nint(diff).max(axis=2)
    else:  # pragma: no cover - guarded by COORD_WEIGHT_TYPES
        raise AssertionError(weight_type)
    np.fill_diagonal(matrix, 0)
    return matrix


def _geo_radians(values: np.ndarray) -> np.ndarray:
    """TSPLIB GEO: DDD.MM (degrees.minutes) -> radians, with PI = 3.141592 and truncation."""
    deg = np.trunc(values)
    minutes = values - deg
    return _GEO_PI * (deg + 5.0 * minutes / 3.0) / 180.0


def _geo_matrix(coords: np.ndarray) -> np.ndarray:
    """TSPLIB GEO distances: int(RRR * acos(...) + 1.0), x = latitude, y = longitude."""
    lat = _geo_radians(coords[:, 0])
    lon = _geo_radians(coords[:, 1])
    q1 = np.cos(lon[:, None] - lon[None, :])
    q2 = np.cos(lat[:, None] - lat[None, :])
    q3 = np.cos(lat[:, None] + lat[None, :])
    arg = np.clip(0.5 * ((1.0 + q1) * q2 - (1.0 - q1) * q3), -1.0, 1.0)
    matrix = (_GEO_RRR * np.arccos(arg) + 1.0).astype(np.int64)   # int() truncates (all >= 1)
    np.fill_diagonal(matrix, 0)
    return matrix


def geo_distance(a: Sequence[float], b: Sequence[float]) -> int:
    """GEO distance between two (latitude, longitude) points in TSPLIB's DDD.MM notation."""
    return int(_geo_matrix(np.array([a, b], dtype=np.float64))[0, 1])


def att_distance(a: Sequence[float], b: Sequence[float]) -> int:
    """ATT (pseudo-Euclidean) distance between two points."""
    return int(_coordinate_matrix(np.array([a, b], dtype=np.float64), "ATT")[0, 1])


def _explicit_matrix(values: np.ndarray, n: int, fmt: str, path, line: int) -> np.ndarray:
    """Build the n x n matrix from the EDGE_WEIGHT_SECTION numbers in format ``fmt``."""
    if fmt == "FULL_MATRIX":
        expected = n * n
    elif "DIAG" in fmt:
        expected = n * (n + 1) // 2
    else:
        expected = n * (n - 1) // 2
    if values.size != expected:
        raise TSPLIBError(path, f"EDGE_WEIGHT_SECTION has {values.size} numbers but {fmt} with "
                          f"DIMENSION {n} needs {expected}",
                          "check DIMENSION and EDGE_WEIGHT_FORMAT against the data", line)
    if fmt == "FULL_MATRIX":
        return values.reshape(n, n).copy()
    offset = 0 if "DIAG" in fmt else 1
    # numpy lists triangle indices row by row. The column-wise upper triangle visits (i, j) in the
    # order of the row-wise lower triangle's (j, i), and vice versa; as the matrix is filled
    # symmetrically below, UPPER_COL reads like LOWER_ROW and LOWER_COL like UPPER_ROW.
    if fmt.startswith("UPPER") == fmt.endswith("ROW"):
        rows, cols = np.triu_indices(n, offset)
    else:
        rows, cols = np.tril_indices(n, -offset)
    matrix = np.zeros((n, n), dtype=np.float64)
    matrix[rows, cols] = values
    matrix[cols, rows] = values
    return matrix


def _as_int_if_integral(matrix: np.ndarray) -> np.ndarray:
    if matrix.dtype.kind == "f" and np.all(np.isfinite(matrix)) and np.all(matrix == np.round(matrix)):
        return matrix.astype(np.int64)
    return matrix


# ------------------------------------------------------------------------------------------ parsing

def _node_table(section: _Section, n: int, width: int, path) -> np.ndarray:
    """Read 'id c1 .. c_width' lines (ids 1..n, any order) into an (n, width) float array."""
    if not section.rows:
        raise TSPLIBError(path, f"{section.name} is empty", f"list {n} lines 'id x y'", section.line)
    values = _numbers(section, path)
    if values.size != n * (width + 1):
        for number, row in section.rows:
            if len(row.split()) != width + 1:
                raise TSPLIBError(path, f"{section.name} line has {len(row.split())} numbers, "
                                  f"expected {width + 1} (node id and {width} coordinates)",
                                  "write one node per line as 'id x y'", number)
        raise TSPLIBError(path, f"{section.name} has {len(section.rows)} nodes but DIMENSION is {n}",
                          "list every node exactly once or fix DIMENSION", section.line)
    table = values.reshape(n, width + 1)
    ids = table[:, 0]
    if np.any(ids != np.round(ids)) or not np.array_equal(np.sort(ids), np.arange(1, n + 1)):
        raise TSPLIBError(path, f"{section.name} node ids are not 1..{n} each once",
                          "number the nodes 1..DIMENSION", section.line)
    out = np.empty((n, width), dtype=np.float64)
    out[ids.astype(np.int64) - 1] = table[:, 1:]
    return out


def _header_value(header, key: str, path, required: bool = True) -> Optional[str]:
    if key in header:
        return header[key][0]
    if required:
        raise TSPLIBError(path, f"missing {key} header", f"add a line '{key} : ...' before the sections")
    return None


def _parse_kind(header, path) -> str:
    value = _header_value(header, "TYPE", path, required=False)
    if value is None:
        return "ATSP" if str(path).lower().endswith(".atsp") else "TSP"
    kind = value.split()[0].upper() if value.split() else ""
    if kind not in ("TSP", "ATSP"):
        raise TSPLIBError(path, f"TYPE {value!r} is not supported", "this reader handles TYPE TSP or ATSP",
                          header["TYPE"][1])
    return kind


def _parse_dimension(header, path) -> int:
    value = _header_value(header, "DIMENSION", path)
    try:
        n = int(value)
    except ValueError:
        raise TSPLIBError(path, f"DIMENSION {value!r} is not an integer",
                          "write the number of nodes, e.g. 'DIMENSION : 52'", header["DIMENSION"][1]) from None
    if n < 2:
        raise TSPLIBError(path, f"DIMENSION {n} is too small", "an instance needs at least 2 nodes",
                          header["DIMENSION"][1])
    return n


def parse_instance(text: str, path: Optional[str] = None) -> Instance:
    """Parse the text of a .tsp/.atsp file; ``path`` is only used in error messages and the name."""
    header, sections = _split_file(text, path)
    by_name = {s.name: s for s in sections}
    for s in sections:
        if s.name not in _SECTIONS and s.name not in _SKIPPED_SECTIONS:
            raise TSPLIBError(path, f"unknown section {s.name}",
                              f"use one of {', '.join(_SECTIONS[:3])}", s.line)
    kind = _parse_kind(header, path)
    n = _parse_dimension(header, path)
    weight_type = (_header_value(header, "EDGE_WEIGHT_TYPE", path) or "").upper()
    fmt = _header_value(header, "EDGE_WEIGHT_FORMAT", path, required=False)
    fmt = fmt.upper() if fmt else None
    coords = None
    if weight_type == "EXPLICIT":
        if fmt not in EXPLICIT_FORMATS:
            line = header["EDGE_WEIGHT_FORMAT"][1] if "EDGE_WEIGHT_FORMAT" in header else None
            raise TSPLIBError(path, f"EDGE_WEIGHT_FORMAT {fmt!r} is not supported for EXPLICIT weights",
                              f"use one of {', '.join(EXPLICIT_FORMATS)}", line)
        section = by_name.get("EDGE_WEIGHT_SECTION")
        if section is None:
            raise TSPLIBError(path, "EDGE_WEIGHT_TYPE is EXPLICIT but EDGE_WEIGHT_SECTION is missing",
                              "add the EDGE_WEIGHT_SECTION with the weights")
        matrix = _as_int_if_integral(_explicit_matrix(_numbers(section, path), n, fmt, path, section.line))
    elif weight_type in COORD_WEIGHT_TYPES:
        section = by_name.get("NODE_COORD_SECTION")
        if section is None:
            raise TSPLIBError(path, f"EDGE_WEIGHT_TYPE is {weight_type} but NODE_COORD_SECTION is missing",
                              "add the NODE_COORD_SECTION with one 'id x y' line per node")
        coords = _node_table(section, n, COORD_WEIGHT_TYPES[weight_type], path)
        matrix = _coordinate_matrix(coords, weight_type)
    else:
        raise TSPLIBError(path, f"EDGE_WEIGHT_TYPE {weight_type!r} is not supported",
                          f"use EXPLICIT or one of {', '.join(COORD_WEIGHT_TYPES)}",
                          header["EDGE_WEIGHT_TYPE"][1])
    display = None
    if "DISPLAY_DATA_SECTION" in by_name:
        display = _node_table(by_name["DISPLAY_DATA_SECTION"], n, 2, path)
    elif coords is not None and coords.shape[1] == 2:
        display = coords
    default_name = os.path.splitext(os.path.basename(path))[0] if path else "instance"
    name = (_header_value(header, "NAME", path, required=False) or default_name).split()[0]
    if name.lower().endswith((".tsp", ".atsp")):      # e.g. ulysses16: "NAME: ulysses16.tsp"
        name = os.path.splitext(name)[0]
    return Instance(name=name, kind=kind, dimension=n, matrix=matrix, coords=coords,
                    edge_weight_type=weight_type, edge_weight_format=fmt,
                    comment=_header_value(header, "COMMENT", path, required=False) or "",
                    display=display, path=str(path) if path is not None else None)


def _read_text(path) -> str:
    try:
        with open(path, "r", encoding="ascii", errors="replace") as handle:
            return handle.read()
    except OSError as exc:
        raise TSPLIBError(path, f"cannot read file ({exc.strerror or exc})",
                          "check the path passed to --instance") from None


def read_instance(path) -> Instance:
    """Read a TSPLIB .tsp/.atsp file; raises TSPLIBError (one line) on any problem."""
    return parse_instance(_read_text(path), str(path))


# -------------------------------------------------------------------------------------------- tours

def parse_tour(text: str, path: Optional[str] = None, dimension: Optional[int] = None) -> np.ndarray:
    """Parse a TSPLIB tour file (1-based TOUR_SECTION ending in -1); returns the first tour 0-based."""
    header, sections = _split_file(text, path)
    section = next((s for s in sections if s.name == "TOUR_SECTION"), None)
    if section is None:
        raise TSPLIBError(path, "missing TOUR_SECTION", "add TOUR_SECTION followed by the node ids")
    values = _numbers(section, path)
    end = np.flatnonzero(values == -1)
    tour = values[: end[0]] if end.size else values
    n = dimension
    if n is None and "DIMENSION" in header:
        n = _parse_dimension(header, path)
    if n is None:
        n = tour.size
    if tour.size != n or np.any(tour != np.round(tour)) or not np.array_equal(np.sort(tour),
                                                                                np.arange(1, n + 1)):
        raise TSPLIBError(path, f"TOUR_SECTION is not a permutation of 1..{n} ({tour.size} ids read)",
                          "list every node id once, then -1", section.line)
    return tour.astype(np.int64) - 1


def read_tour(path, dimension: Optional[int] = None) -> np.ndarray:
    """Read a .tour/.opt.tour file; returns a 0-based int64 array (TSPLIB files are 1-based)."""
    return parse_tour(_read_text(path), str(path), dimension)


def tour_length(matrix: np.ndarray, tour: Sequence[int]):
    """Length of the closed tour (0-based node indices), returning to the first node; row = from."""
    order = np.asarray(tour, dtype=np.int64)
    if order.size == 0:
        return matrix.dtype.type(0)
    return matrix[order, np.roll(order, -1)].sum()


# ------------------------------------------------------------------------------------------ optima

_BEST_LINE = re.compile(r"^\s*([^\s:]+)\s*:\s*([-+0-9.eE]+)\s*(?:\(.*\))?\s*$")


def read_best_solutions(path) -> Dict[str, float]:
    """Parse a TSPLIB bestSolutions list ('name : value' per line) into {name: value}."""
    result: Dict[str, float] = {}
    for number, raw in enumerate(_read_text(path).splitlines(), start=1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        match = _BEST_LINE.match(raw)
        try:
            value = float(match.group(2)) if match else None
        except ValueError:
            value = None
        if value is None:
            raise TSPLIBError(path, f"line {raw.strip()[:40]!r} is not 'name : value'",
                              "write one 'name : number' entry per line", number)
        result[match.group(1)] = value
    return result


def lookup_optimum(instance_path, name: Optional[str] = None) -> Optional[float]:
    """Published optimum for an instance file from the bestSolutions*.txt lists in its folder, or None.

    The file's stem is looked up first, then ``name`` (the NAME header); lists are read in name order.
    """
    folder = os.path.dirname(os.path.abspath(str(instance_path)))
    stem = os.path.basename(str(instance_path)).split(".")[0]
    keys = [k for k in (stem, name) if k]
    keys += [_OPTIMUM_ALIASES[k] for k in keys if k in _OPTIMUM_ALIASES]
    try:
        lists = sorted(f for f in os.listdir(folder) if f.startswith("bestSolutions") and f.endswith(".txt"))
    except OSError:
        return None
    for filename in lists:
        known = read_best_solutions(os.path.join(folder, filename))
        for key in keys:
            if key in known:
                return known[key]
    return None


# ------------------------------------------------------------------------------------------ random

def random_instance(n: int, seed: int = 0) -> Instance:
    """A random EUC_2D instance: n points uniform in a 1000 x 1000 square, deterministic in ``seed``."""
    if not isinstance(n, (int, np.integer)) or n < 2:
        raise ValueError(f"random instance size {n!r} is too small; use at least 2 nodes")
    rng = random.Random(seed)
    coords = np.array([[round(rng.uniform(0.0, 1000.0), 1) for _ in range(2)] for _ in range(n)])
    return Instance(name=f"random{n}-seed{seed}", kind="TSP", dimension=int(n),
                    matrix=_coordinate_matrix(coords, "EUC_2D"), coords=coords,
                    edge_weight_type="EUC_2D", comment=f"random uniform points, seed {seed}",
                    display=coords)


def random_asymmetric_instance(n: int, seed: int = 0, detour: float = 0.2, one_way: float = 0.2) -> Instance:
    """A random road-like ATSP: the points of :func:`random_instance` ``(n, seed)``; each direction of
    each pair costs its Euclidean distance times ``1 + U(0, detour)`` (drawn per direction), plus half
    the distance on a fraction ``one_way`` of the directed pairs (one-way streets), rounded."""
    base = random_instance(n, seed)
    rng = np.random.default_rng([seed, n])
    D = np.asarray(base.matrix, dtype=np.float64)
    M = D * (1.0 + detour * rng.random((n, n))) + 0.5 * D * (rng.random((n, n)) < one_way)
    np.fill_diagonal(M, 0.0)
    return Instance(name=f"randomatsp{n}-seed{seed}", kind="ATSP", dimension=int(n),
                    matrix=np.round(M).astype(np.int64), coords=base.coords, edge_weight_type="EXPLICIT",
                    comment=f"random road-like asymmetric instance, seed {seed}", display=base.coords)
