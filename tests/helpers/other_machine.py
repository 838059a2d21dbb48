"""Tables "from another machine": a shipped table perturbed as a recording elsewhere would differ.

Rows are dropped, OK times scaled and noised, the columns reordered (the objective last, after the
fidelity columns) and the file renamed; optionally the thread counts are remapped (another CPU).
Kernel Tuner caches keep their format: entries dropped, times scaled and noised, device renamed.
The shared tables are read from ``../shared`` (:data:`SHARED`); tests skip when it is absent.
"""
import csv
import gzip
import io
import json
import random
from pathlib import Path
from typing import Callable, Dict, List, Optional

import pytest

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
TACO_CACHE = SHARED / "data" / "taco_cache"
RISE_BACO = SHARED / "data" / "gpu_cache" / "rise_baco"
KT_HUB = SHARED / "data" / "gpu_cache" / "kerneltuner_hub"
OBJECTIVE = "compute_time"

needs_taco = pytest.mark.skipif(not (TACO_CACHE / "spmm_7742.csv.gz").is_file(),
                                reason=f"shared TACO tables not found under {TACO_CACHE}")
needs_rise = pytest.mark.skipif(not (RISE_BACO / "kmeans_rtxtitan.csv.gz").is_file(),
                                reason=f"shared RISE tables not found under {RISE_BACO}")
needs_kt = pytest.mark.skipif(not (KT_HUB / "convolution_milo" / "A4000.trimmed.json.gz").is_file(),
                              reason=f"shared Kernel Tuner caches not found under {KT_HUB}")


def _read_csv(path: Path) -> List[Dict[str, str]]:
    with gzip.open(path, "rt", newline="") as fh:
        return list(csv.DictReader(fh))


def _time(text: str, rng: random.Random, scale: float, noise: float) -> str:
    t = float(text)
    return text if t == 0.0 else repr(t * scale * (1 + noise * rng.uniform(-1, 1)))


def perturb_csv(src: Path, dst: Path, seed: int = 0, drop: float = 0.2, scale: float = 1.3,
                noise: float = 0.05, threads: Optional[Callable[[int], int]] = None,
                extra: Optional[Dict[str, str]] = None) -> Path:
    """Write ``dst`` (.csv.gz): ``src``'s rows less ``drop`` of them, times x ``scale`` +/- ``noise``,
    columns shuffled with the objective last, thread counts through ``threads``, constant ``extra``
    columns added."""
    rng = random.Random(seed)
    rows = _read_csv(src)
    others = [c for c in rows[0] if c != OBJECTIVE] + list(extra or {})
    rng.shuffle(others)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=others + [OBJECTIVE], lineterminator="\n")
    writer.writeheader()
    for row in rows:
        if rng.random() < drop:
            continue
        row = dict(row, **(extra or {}))
        row[OBJECTIVE] = _time(row[OBJECTIVE], rng, scale, noise)
        if threads is not None:
            row["omp_num_threads"] = str(threads(int(row["omp_num_threads"])))
        writer.writerow(row)
    dst.write_bytes(gzip.compress(out.getvalue().encode()))
    return dst


def perturb_kt_cache(src: Path, dst: Path, seed: int = 0, drop: float = 0.1, scale: float = 1.2,
                     noise: float = 0.05) -> Path:
    """Write ``dst`` (.json.gz): ``src``'s Kernel Tuner cache with entries dropped and times
    scaled and noised, recorded on "another GPU"."""
    rng = random.Random(seed)
    with gzip.open(src, "rt") as fh:
        data = json.load(fh)
    cache = {}
    for key, entry in data["cache"].items():
        if rng.random() < drop:
            continue
        if isinstance(entry.get("time"), (int, float)):
            entry = dict(entry, time=entry["time"] * scale * (1 + noise * rng.uniform(-1, 1)))
        cache[key] = entry
    data.update(cache=cache, device_name="another GPU")
    dst.write_bytes(gzip.compress(json.dumps(data).encode()))
    return dst
