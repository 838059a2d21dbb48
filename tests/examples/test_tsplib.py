"""Tests of the TSP example's TSPLIB reader (examples/tsp/tsplib.py)."""
import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data" / "tsplib"
NO_DATA = f"TSPLIB data folder {DATA} is absent (it lives next to the repository in shared/data/tsplib)"


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module          # dataclasses need the module registered
    spec.loader.exec_module(module)
    return module


tsplib = _load("tsplib_example", REPO / "examples" / "tsp" / "tsplib.py")
TSPLIBError = tsplib.TSPLIBError

# Published optima (TSPLIB95), independent of the bestSolutions lists, to check that lists' parsing.
KNOWN_OPTIMA = {
    "burma14": 3323, "ulysses16": 6859, "gr17": 2085, "gr21": 2707, "ulysses22": 7013, "gr24": 1272,
    "fri26": 937, "bayg29": 1610, "bays29": 2020, "dantzig42": 699, "swiss42": 1273, "att48": 10628,
    "gr48": 5046, "eil51": 426, "berlin52": 7542, "brazil58": 25395, "gr96": 55209, "gr120": 6942,
    "si175": 21407, "brg180": 1950, "br17": 39, "p43": 5620, "ftv44": 1613, "ry48p": 14422,
    "ft53": 6905, "ftv170": 2755, "rbg323": 1326,
}


def _instances():
    if not DATA.is_dir():
        return []
    return sorted(DATA.glob("*.tsp")) + sorted(DATA.glob("*.atsp"))


def _instance_for_tour(tour_path: Path) -> Path:
    stem = tour_path.name[: -len(".opt.tour")]
    for ext in (".tsp", ".atsp"):
        if (tour_path.parent / (stem + ext)).exists():
            return tour_path.parent / (stem + ext)
    raise AssertionError(f"no instance file for {tour_path.name}")


TOURS = sorted(DATA.glob("*.opt.tour")) if DATA.is_dir() else []


# ------------------------------------------------------------------------------- real TSPLIB files

@pytest.mark.skipif(not DATA.is_dir(), reason=NO_DATA)
def test_data_folder_has_tours():
    assert len(TOURS) >= 10


@pytest.mark.skipif(not DATA.is_dir(), reason=NO_DATA)
@pytest.mark.parametrize("tour_path", TOURS, ids=[p.name for p in TOURS])
def test_opt_tour_reproduces_published_optimum(tour_path):
    inst_path = _instance_for_tour(tour_path)
    inst = tsplib.read_instance(inst_path)
    optimum = tsplib.lookup_optimum(inst_path, inst.name)
    assert optimum is not None, f"{inst.name} missing from the bestSolutions lists"
    if inst.name in KNOWN_OPTIMA:
        assert optimum == KNOWN_OPTIMA[inst.name]
    tour = tsplib.read_tour(tour_path, inst.dimension)
    assert sorted(tour.tolist()) == list(range(inst.dimension))
    assert tsplib.tour_length(inst.matrix, tour) == optimum


@pytest.mark.skipif(not DATA.is_dir(), reason=NO_DATA)
@pytest.mark.parametrize("path", _instances(), ids=[p.name for p in _instances()])
def test_every_instance_parses(path):
    inst = tsplib.read_instance(path)
    n = inst.dimension
    assert inst.matrix.shape == (n, n)
    assert inst.matrix.dtype == np.int64
    assert inst.kind == ("ATSP" if path.suffix == ".atsp" else "TSP")
    assert path.stem == inst.name
    if inst.kind == "TSP":
        assert np.array_equal(inst.matrix, inst.matrix.T)
        assert np.all(np.diag(inst.matrix) == 0)
    else:
        assert not np.array_equal(inst.matrix, inst.matrix.T)
    off = inst.matrix[~np.eye(n, dtype=bool)]
    assert off.min() >= 0
    if path.stem in KNOWN_OPTIMA:
        assert tsplib.lookup_optimum(path, inst.name) == KNOWN_OPTIMA[path.stem]


def _held_karp(matrix: np.ndarray) -> float:
    """Exact shortest closed tour (Held-Karp DP over subsets, vectorised per subset size)."""
    n = matrix.shape[0]
    m = n - 1                                     # nodes 1..n-1 as bits 0..m-1; node 0 is the start
    dp = np.full((1 << m, m), np.inf)
    for j in range(m):
        dp[1 << j, j] = matrix[0, j + 1]
    masks = np.arange(1 << m)
    popcount = np.array([bin(x).count("1") for x in range(1 << m)])
    inner = matrix[1:, 1:].astype(np.float64)
    for size in range(2, m + 1):
        layer = masks[popcount == size]
        for j in range(m):
            sub = layer[(layer >> j) & 1 == 1]
            prev = sub ^ (1 << j)
            dp[sub, j] = np.min(dp[prev] + inner[:, j][None, :], axis=1)
    return float(np.min(dp[(1 << m) - 1] + matrix[1:, 0]))


@pytest.mark.skipif(not DATA.is_dir(), reason=NO_DATA)
@pytest.mark.parametrize("name", ["burma14.tsp", "gr17.tsp", "br17.atsp"])
def test_exact_optimum_without_tour_file(name):
    """GEO/FUNCTION (burma14), LOWER_DIAG_ROW (gr17) and ATSP row=from (br17) checked by exact DP."""
    path = DATA / name
    if not path.exists():
        pytest.skip(f"{name} not in {DATA}")
    inst = tsplib.read_instance(path)
    assert _held_karp(inst.matrix) == tsplib.lookup_optimum(path, inst.name) == KNOWN_OPTIMA[inst.name]


@pytest.mark.skipif(not DATA.is_dir(), reason=NO_DATA)
def test_dantzig42_identity_tour_is_optimal():
    inst = tsplib.read_instance(DATA / "dantzig42.tsp")
    assert tsplib.tour_length(inst.matrix, np.arange(42)) == 699


@pytest.mark.skipif(not DATA.is_dir(), reason=NO_DATA)
def test_best_solution_lists():
    tsp = tsplib.read_best_solutions(DATA / "bestSolutions_tsp.txt")
    atsp = tsplib.read_best_solutions(DATA / "bestSolutions_atsp.txt")
    assert tsp["berlin52"] == 7542 and tsp["kroA100"] == 21282
    assert atsp["br17"] == 39 and atsp["kro124"] == 36230
    assert len(tsp) > 100 and len(atsp) > 20


# ---------------------------------------------------------------------------- hand-written fixtures

# Symmetric 4x4 matrix with a distinctive diagonal (used by the *_DIAG_* formats).
FULL = np.array([[11, 1, 2, 3],
                 [1, 12, 4, 5],
                 [2, 4, 13, 6],
                 [3, 5, 6, 14]])
NO_DIAG = FULL - np.diag(np.diag(FULL))
EXPLICIT_CASES = {
    "FULL_MATRIX": ("11 1 2 3\n1 12 4 5\n2 4 13 6\n3 5 6 14", FULL),
    "UPPER_ROW": ("1 2 3\n4 5\n6", NO_DIAG),
    "LOWER_ROW": ("1\n2 4\n3 5 6", NO_DIAG),
    "UPPER_DIAG_ROW": ("11 1 2 3\n12 4 5\n13 6\n14", FULL),
    "LOWER_DIAG_ROW": ("11\n1 12\n2 4 13\n3 5 6 14", FULL),
    "UPPER_COL": ("1\n2 4\n3 5 6", NO_DIAG),           # column j lists rows 0..j-1
    "LOWER_COL": ("1 2 3\n4 5\n6", NO_DIAG),           # column j lists rows j+1..n-1
    "UPPER_DIAG_COL": ("11\n1 12\n2 4 13\n3 5 6 14", FULL),
    "LOWER_DIAG_COL": ("11 1 2 3\n12 4 5\n13 6\n14", FULL),
}


def _explicit_text(fmt: str, data: str, n: int = 4, kind: str = "TSP") -> str:
    return (f"NAME : tiny\nTYPE : {kind}\nCOMMENT : hand-written\nDIMENSION : {n}\n"
            f"EDGE_WEIGHT_TYPE : EXPLICIT\nEDGE_WEIGHT_FORMAT : {fmt}\n"
            f"EDGE_WEIGHT_SECTION\n{data}\nEOF\n")


@pytest.mark.parametrize("fmt", sorted(EXPLICIT_CASES))
def test_explicit_formats(tmp_path, fmt):
    data, expected = EXPLICIT_CASES[fmt]
    path = tmp_path / f"tiny_{fmt.lower()}.tsp"
    path.write_text(_explicit_text(fmt, data))
    inst = tsplib.read_instance(path)
    assert inst.name == "tiny" and inst.kind == "TSP" and inst.dimension == 4
    assert inst.edge_weight_format == fmt
    assert inst.matrix.dtype == np.int64
    assert np.array_equal(inst.matrix, expected)
    # TSPLIB allows any line breaking inside a section
    flat = tmp_path / "flat.tsp"
    flat.write_text(_explicit_text(fmt, " ".join(data.split())))
    assert np.array_equal(tsplib.read_instance(flat).matrix, expected)


def test_atsp_full_matrix_row_is_from(tmp_path):
    path = tmp_path / "tiny.atsp"
    path.write_text(_explicit_text("FULL_MATRIX", "0 1 2\n3 0 4\n5 6 0", n=3, kind="ATSP"))
    inst = tsplib.read_instance(path)
    assert inst.kind == "ATSP"
    assert tsplib.tour_length(inst.matrix, [0, 1, 2]) == 1 + 4 + 5
    assert tsplib.tour_length(inst.matrix, [0, 2, 1]) == 2 + 6 + 3


def test_type_with_trailing_text_and_display_section(tmp_path):
    text = ("NAME: tiny\nTYPE: TSP (M.~Hofmeister)\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EXPLICIT\n"
            "EDGE_WEIGHT_FORMAT: UPPER_ROW \nDISPLAY_DATA_TYPE: TWOD_DISPLAY\nEDGE_WEIGHT_SECTION   \n"
            "1 2\n3\nDISPLAY_DATA_SECTION\n 3 5.0 6.0\n 1 1.0 2.0\n 2 3.0 4.0\n EOF\n")
    path = tmp_path / "tiny.tsp"
    path.write_text(text)
    inst = tsplib.read_instance(path)
    assert inst.kind == "TSP"
    assert np.array_equal(inst.matrix, [[0, 1, 2], [1, 0, 3], [2, 3, 0]])
    assert np.array_equal(inst.display, [[1, 2], [3, 4], [5, 6]])
    assert inst.coords is None


@pytest.mark.parametrize("weight_type, expected", [
    ("EUC_2D", 5), ("CEIL_2D", 5), ("MAN_2D", 7), ("MAX_2D", 4), ("ATT", 2)])
def test_coordinate_weight_types(tmp_path, weight_type, expected):
    text = (f"NAME: c\nTYPE: TSP\nDIMENSION: 2\nEDGE_WEIGHT_TYPE: {weight_type}\nNODE_COORD_SECTION\n"
            "2 3 4\n1 0 0\nEOF\n")
    path = tmp_path / "c.tsp"
    path.write_text(text)
    inst = tsplib.read_instance(path)
    assert inst.matrix[0, 1] == inst.matrix[1, 0] == expected
    assert np.array_equal(inst.coords, [[0, 0], [3, 4]])


def test_euclidean_rounding(tmp_path):
    # distance sqrt(2) = 1.414: EUC_2D rounds to 1, CEIL_2D rounds up to 2; sqrt(6.5^2) = 6.5 -> 7
    for weight_type, coords, expected in [("EUC_2D", "1 0 0\n2 1 1", 1), ("CEIL_2D", "1 0 0\n2 1 1", 2),
                                          ("EUC_2D", "1 0 0\n2 6.5 0", 7)]:
        path = tmp_path / "r.tsp"
        path.write_text(f"NAME: r\nTYPE: TSP\nDIMENSION: 2\nEDGE_WEIGHT_TYPE: {weight_type}\n"
                        f"NODE_COORD_SECTION\n{coords}\nEOF\n")
        assert tsplib.read_instance(path).matrix[0, 1] == expected


def test_att_pseudo_euclidean_pair():
    # r = sqrt((10^2 + 0) / 10) = 3.162..; nint(r) = 3 < r, so ATT gives 4 (EUC_2D would give 10)
    assert tsplib.att_distance((0, 0), (10, 0)) == 4
    # att48 nodes 1 and 2: r = sqrt((4501^2 + 1443^2) / 10) = 1494.70; nint = 1495 >= r
    assert tsplib.att_distance((6734, 1453), (2233, 10)) == 1495


def _geo_reference(a, b):
    """Scalar transcription of TSPLIB95's GEO formula (PI = 3.141592, deg = (int) x)."""
    def rad(v):
        deg = int(v)
        return 3.141592 * (deg + 5.0 * (v - deg) / 3.0) / 180.0
    lat_i, lon_i, lat_j, lon_j = rad(a[0]), rad(a[1]), rad(b[0]), rad(b[1])
    q1, q2, q3 = math.cos(lon_i - lon_j), math.cos(lat_i - lat_j), math.cos(lat_i + lat_j)
    return int(6378.388 * math.acos(0.5 * ((1.0 + q1) * q2 - (1.0 - q1) * q3)) + 1.0)


def test_geo_known_pairs():
    # one degree of longitude on the equator: 6378.388 * 3.141592 / 180 = 111.32 -> int(112.32) = 112
    assert tsplib.geo_distance((0.0, 0.0), (0.0, 1.0)) == 112
    # DDD.MM notation: 0.30 is 30 minutes = half a degree -> int(55.66 + 1) = 56, also when negative
    # (TSPLIB truncates toward zero; floor would read -0.30 as -1 deg + 70 min and give 19)
    assert tsplib.geo_distance((0.0, 0.0), (0.0, 0.30)) == 56
    assert tsplib.geo_distance((0.0, 0.0), (0.0, -0.30)) == 56
    # TSPLIB's PI = 3.141592 matters here: math.pi would give 5621
    assert tsplib.geo_distance((0.0, 0.0), (0.0, 50.29)) == _geo_reference((0.0, 0.0), (0.0, 50.29)) == 5620
    # burma14 nodes 1 and 2, and two gr96 points with negative latitude
    for a, b in [((16.47, 96.10), (16.47, 94.44)), ((-18.55, 47.31), (-12.16, 49.17))]:
        assert tsplib.geo_distance(a, b) == _geo_reference(a, b)


# ---------------------------------------------------------------------------------- tours & optima

def test_read_tour_is_zero_based_and_validated(tmp_path):
    good = tmp_path / "t.opt.tour"
    good.write_text("NAME : t\nTYPE : TOUR\nDIMENSION : 4\nTOUR_SECTION\n3 1\n4 2\n-1\nEOF\n")
    assert tsplib.read_tour(good).tolist() == [2, 0, 3, 1]
    no_terminator = tmp_path / "u.opt.tour"
    no_terminator.write_text("NAME : u\nTYPE : TOUR\nDIMENSION : 3\nTOUR_SECTION\n1\n2\n3\n")
    assert tsplib.read_tour(no_terminator).tolist() == [0, 1, 2]
    bad = tmp_path / "b.opt.tour"
    bad.write_text("NAME : b\nTYPE : TOUR\nDIMENSION : 4\nTOUR_SECTION\n1 2 2 4\n-1\nEOF\n")
    with pytest.raises(TSPLIBError) as err:
        tsplib.read_tour(bad)
    assert "\n" not in str(err.value) and "b.opt.tour:4" in str(err.value)


def test_lookup_optimum(tmp_path):
    inst = tmp_path / "kro124p.atsp"
    inst.write_text("")
    assert tsplib.lookup_optimum(inst) is None                     # no list next to it
    (tmp_path / "bestSolutions_atsp.txt").write_text("br17: 39\nkro124: 36230\n\n")
    assert tsplib.lookup_optimum(inst) == 36230                    # TSPLIB's list spells it kro124
    assert tsplib.lookup_optimum(tmp_path / "br17.atsp") == 39
    assert tsplib.lookup_optimum(tmp_path / "x.tsp", name="br17") == 39
    (tmp_path / "bestSolutions_atsp.txt").write_text("br17: thirty-nine\n")
    with pytest.raises(TSPLIBError, match=r"bestSolutions_atsp.txt:1"):
        tsplib.lookup_optimum(inst)


@settings(max_examples=60, deadline=None)
@given(st.integers(3, 12), st.integers(0, 10_000), st.data())
def test_tour_length_properties(n, seed, data):
    inst = tsplib.random_instance(n, seed)
    tour = data.draw(st.permutations(list(range(n))))
    length = tsplib.tour_length(inst.matrix, tour)
    expected = sum(inst.matrix[tour[i], tour[(i + 1) % n]] for i in range(n))
    assert length == expected
    k = data.draw(st.integers(0, n - 1))
    assert tsplib.tour_length(inst.matrix, tour[k:] + tour[:k]) == length      # rotation
    assert tsplib.tour_length(inst.matrix, tour[::-1]) == length               # symmetric: reversal


def test_random_instance_deterministic():
    a, b = tsplib.random_instance(30, seed=7), tsplib.random_instance(30, seed=7)
    assert np.array_equal(a.coords, b.coords) and np.array_equal(a.matrix, b.matrix)
    assert a.name == "random30-seed7" and a.kind == "TSP" and a.dimension == 30
    c = tsplib.random_instance(30, seed=8)
    assert not np.array_equal(a.coords, c.coords)
    assert a.coords.shape == (30, 2) and a.coords.min() >= 0 and a.coords.max() <= 1000
    assert a.matrix.dtype == np.int64 and np.array_equal(a.matrix, a.matrix.T)
    d = np.sqrt(((a.coords[:, None] - a.coords[None]) ** 2).sum(axis=2))
    assert np.all(np.abs(a.matrix - d) <= 0.5)
    with pytest.raises(ValueError):
        tsplib.random_instance(1, 0)


def test_random_asymmetric_instance_is_a_deterministic_road_like_atsp():
    a, b = tsplib.random_asymmetric_instance(30, 7), tsplib.random_asymmetric_instance(30, 7)
    assert np.array_equal(a.matrix, b.matrix) and a.kind == "ATSP" and a.name == "randomatsp30-seed7"
    base = tsplib.random_instance(30, 7)
    assert np.array_equal(a.coords, base.coords) and np.all(np.diag(a.matrix) == 0)
    off = ~np.eye(30, dtype=bool)
    ratio = a.matrix[off] / np.maximum(base.matrix[off], 1)
    assert ratio.min() >= 0.9 and ratio.max() <= 1.75                   # detours and one-way penalties
    assert not np.array_equal(a.matrix, a.matrix.T)
    assert not np.array_equal(a.matrix, tsplib.random_asymmetric_instance(30, 8).matrix)


# ----------------------------------------------------------------------------------- malformed files

MALFORMED = {
    "missing_dimension": ("NAME: m\nTYPE: TSP\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n1 0 0\n2 1 1\nEOF\n",
                          "missing DIMENSION", None),
    "missing_coord_section": ("NAME: m\nTYPE: TSP\nDIMENSION: 2\nEDGE_WEIGHT_TYPE: EUC_2D\nEOF\n",
                              "NODE_COORD_SECTION is missing", None),
    "missing_weight_section": ("NAME: m\nTYPE: TSP\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EXPLICIT\n"
                               "EDGE_WEIGHT_FORMAT: UPPER_ROW\nEOF\n", "EDGE_WEIGHT_SECTION is missing", None),
    "wrong_weight_count": ("NAME: m\nTYPE: TSP\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EXPLICIT\n"
                           "EDGE_WEIGHT_FORMAT: UPPER_ROW\nEDGE_WEIGHT_SECTION\n1 2 3 4\nEOF\n",
                           "has 4 numbers but UPPER_ROW with DIMENSION 3 needs 3", 6),
    "unknown_weight_type": ("NAME: m\nTYPE: TSP\nDIMENSION: 2\nEDGE_WEIGHT_TYPE: XRAY1\nNODE_COORD_SECTION\n"
                            "1 0 0\n2 1 1\nEOF\n", "EDGE_WEIGHT_TYPE 'XRAY1' is not supported", 4),
    "unknown_format": ("NAME: m\nTYPE: TSP\nDIMENSION: 2\nEDGE_WEIGHT_TYPE: EXPLICIT\n"
                       "EDGE_WEIGHT_FORMAT: DIAGONAL\nEDGE_WEIGHT_SECTION\n1\nEOF\n", "DIAGONAL", 5),
    "non_numeric_weight": ("NAME: m\nTYPE: TSP\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EXPLICIT\n"
                           "EDGE_WEIGHT_FORMAT: UPPER_ROW\nEDGE_WEIGHT_SECTION\n1 2\n3x\nEOF\n",
                           "non-numeric value '3x'", 8),
    "non_numeric_coord": ("NAME: m\nTYPE: TSP\nDIMENSION: 2\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n"
                          "1 0 0\n2 one 1\nEOF\n", "non-numeric", 7),
    "bad_dimension": ("NAME: m\nTYPE: TSP\nDIMENSION: many\nEDGE_WEIGHT_TYPE: EUC_2D\nEOF\n",
                      "DIMENSION 'many' is not an integer", 3),
    "too_few_nodes": ("NAME: m\nTYPE: TSP\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n"
                      "1 0 0\n2 1 1\nEOF\n", "has 2 nodes but DIMENSION is 3", 5),
    "duplicate_node": ("NAME: m\nTYPE: TSP\nDIMENSION: 2\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n"
                       "1 0 0\n1 1 1\nEOF\n", "node ids are not 1..2", 5),
    "wrong_type": ("NAME: m\nTYPE: CVRP\nDIMENSION: 2\nEDGE_WEIGHT_TYPE: EUC_2D\nEOF\n",
                   "TYPE 'CVRP' is not supported", 2),
    "header_without_colon": ("NAME m\nTYPE: TSP\nEOF\n", "has no ':'", 1),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_file_gives_one_line_error(tmp_path, case):
    text, fragment, line = MALFORMED[case]
    path = tmp_path / f"{case}.tsp"
    path.write_text(text)
    with pytest.raises(TSPLIBError) as err:
        tsplib.read_instance(path)
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith(str(path) + (f":{line}:" if line else ":"))
    assert fragment in message
    assert ";" in message                   # problem; fix


def test_missing_file_is_one_line_error(tmp_path):
    with pytest.raises(TSPLIBError) as err:
        tsplib.read_instance(tmp_path / "nope.tsp")
    assert "\n" not in str(err.value) and "nope.tsp" in str(err.value)
    assert isinstance(err.value, ValueError)


# ------------------------------------------------------------------------------ the tuner end to end

def _core_available() -> bool:
    try:
        from tunerlib import MeasurementInterface  # noqa: F401
    except ImportError:
        return False
    return True


needs_core = pytest.mark.skipif(not _core_available(), reason="tunerlib core (MeasurementInterface) not importable")


@pytest.fixture(scope="module")
def tsp_tuner():
    return _load("tsp_tuner_example", REPO / "examples" / "tsp" / "tsp_tuner.py")


@needs_core
def test_tuner_random_instance(tsp_tuner, tmp_path, capsys):
    summary = tmp_path / "summary.json"
    code = tsp_tuner.TSPTuner.main(["--random", "12", "--test-limit", "50", "--seed", "3", "--database",
                                    str(tmp_path / "t.db"), "--quiet", "--summary-json", str(summary)])
    out = capsys.readouterr().out
    assert code == 0
    assert "best tour for random12-seed0" in out and "length: " in out
    assert "gap to optimum" not in out                       # unknown for random instances
    lines = out.splitlines()
    tour_line = lines[next(k for k, line in enumerate(lines) if line.startswith("best tour")) + 1]
    assert sorted(int(t) for t in tour_line.split()) == list(range(1, 13))
    assert tour_line.split()[0] == "1"


@needs_core
def test_tuner_reports_gap_from_best_solutions_list(tsp_tuner, tmp_path, capsys):
    inst = tmp_path / "square5.tsp"
    inst.write_text("NAME: square5\nTYPE: TSP\nDIMENSION: 5\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n"
                    "1 0 0\n2 0 10\n3 10 10\n4 10 0\n5 5 0\nEOF\n")
    (tmp_path / "bestSolutions_tsp.txt").write_text("square5 : 40\n")
    code = tsp_tuner.TSPTuner.main(["--instance", str(inst), "--test-limit", "30", "--seed", "1",
                                    "--database", str(tmp_path / "t.db"), "--quiet"])
    out = capsys.readouterr().out
    assert code == 0
    length = float(next(l for l in out.splitlines() if l.startswith("length: ")).split()[1])
    assert length >= 40
    assert f"gap to optimum: {100 * (length - 40) / 40:+.1f}% (optimum 40)" in out


@needs_core
def test_tuner_bad_instance_is_one_line_error(tsp_tuner, tmp_path, capsys):
    bad = tmp_path / "bad.tsp"
    bad.write_text("NAME: bad\nTYPE: TSP\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EUC_2D\nEOF\n")
    code = tsp_tuner.TSPTuner.main(["--instance", str(bad), "--database", str(tmp_path / "t.db")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "NODE_COORD_SECTION is missing" in err
    assert tsp_tuner.TSPTuner.main(["--random", "1", "--database", str(tmp_path / "t.db")]) == 2
    assert "--random 1 is too small" in capsys.readouterr().err


def test_tuner_helpers(tsp_tuner):
    assert tsp_tuner.format_gap(103.2, 100) == "gap to optimum: +3.2% (optimum 100)"
    assert tsp_tuner.format_gap(100, None) == ""
    assert tsp_tuner.tsplib_tour([2, 0, 1]) == [1, 2, 3]
