"""Hand-built cross-session stores for tests: runs with chosen affinities, no tuning needed."""
import itertools
import uuid as uuid_module
from typing import Dict, Optional, Tuple

from tunerlib.store.export import StoredRun
from tunerlib.store.performance import Snapshot

PERMUTATION = '[[["PermutationParameter"],1]]'
_count = itertools.count()


def hand_run(program: str, affinities: Dict[str, Tuple[int, int]], representation: str = PERMUTATION,
             project: str = "tests", configurations=(), space_hash: str = "0" * 64,
             uuid: Optional[str] = None, tests: Optional[int] = None) -> StoredRun:
    """A stored run whose techniques had ``affinities`` = {name: (new bests, requests)} at its end."""
    total = tests or sum(r for _, r in affinities.values())
    snaps = [Snapshot(name, 1.0, total, requests, bests, bests * 0.01, 1.0)
             for name, (bests, requests) in sorted(affinities.items())]
    snaps.append(Snapshot(None, 1.0, total, total, sum(b for b, _ in affinities.values()), 0.1, 1.0))
    return StoredRun(uuid=uuid or str(uuid_module.UUID(int=next(_count) + 1)), project=project, program=program,
                     version="1", objective="minimize time", representation=representation,
                     space_hash=space_hash, log10_space_size=10.0, machine_class=None,
                     meta=("AUCBanditMetaTechnique", "AUCBandit"),
                     techniques={n: ("Hand", None) for n in affinities}, state="COMPLETE", start_date=1.0,
                     end_date=2.0, tests=total, best_value=1.0, snapshots=snaps,
                     configurations=list(configurations))


def affinity_pairs(values: Dict[str, float], requests: int = 100) -> Dict[str, Tuple[int, int]]:
    """{name: affinity} as (new bests, requests) pairs with ``requests`` requests each."""
    return {n: (round(a * requests), requests) for n, a in values.items()}
