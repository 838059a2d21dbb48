import csv
import itertools

from tunerlib.replay import ReplayInterface

# a measurement CSV: one column per parameter and compute_time (milliseconds; 0 means failed)
with open("measured.csv", "w", newline="") as fh:
    out = csv.writer(fh)
    out.writerow(["block", "unroll", "compute_time"])
    for block, unroll in itertools.product([8, 16, 32, 64, 128], [1, 2, 4]):
        out.writerow([block, unroll, abs(block - 32) / 10 + abs(unroll - 2) + 1.0])

# tune over the recorded values: every "measurement" is a lookup, so a run takes a fraction of a second
ReplayInterface.main(["--data", "measured.csv", "--test-limit", "10", "--seed", "1", "--quiet"])
