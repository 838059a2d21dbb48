"""tools/bench_overhead.py with the technique snapshots' periodic save turned off, for instruction
counts under valgrind: a run saves the technique's state every 25 results at most once a second, so
under valgrind (about 50 times slower) the number of saves would follow the machine's speed.  Run from
the repository's root, with bench_overhead's arguments."""
import math
import sys

sys.path.insert(0, "tools")
from tunerlib.engine import callbacks  # noqa: E402

init = callbacks.TechniqueSnapshots.__init__


def no_periodic_save(self, save, every=25, seconds=1.0, clock=None):
    init(self, save, every, math.inf)
    self.last = 0.0


callbacks.TechniqueSnapshots.__init__ = no_periodic_save
import bench_overhead  # noqa: E402

sys.exit(bench_overhead.main(sys.argv[1:]))
