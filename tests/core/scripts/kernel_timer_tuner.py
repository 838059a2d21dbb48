"""A tuner script in the common HPC pattern: a C program, compiled per configuration, loads its input
(here a sleep of --setup-ms stands for reading it), runs its kernel 3 times, times each run with its own
timer and prints the fastest; ``run()`` reports that kernel time and runs the program with
``call_program(cmd, limit=limit)``, so the limit is enforced on the whole process (exec, set-up, 3 runs)."""
import os
import sys
import tempfile
from dataclasses import dataclass, field

from tunerlib import MeasurementInterface, Result, TuningOptions
from tunerlib.parameters import ConfigurationManipulator, IntegerParameter

SOURCE = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
int main(int argc, char **argv) {
    long n = 20000, block = atol(argv[1]), setup_ms = atol(argv[2]);
    struct timespec pause = {setup_ms / 1000, (setup_ms % 1000) * 1000000L};
    nanosleep(&pause, NULL);                      /* the input set-up */
    double *a = malloc(n * sizeof *a), best = 1e30, sum = 0;
    for (long i = 0; i < n; i++) a[i] = (double)(i % 7);
    for (int rep = 0; rep < 3; rep++) {           /* the kernel, timed by the program itself */
        double t0 = now();
        for (long b = 0; b < n; b += block)
            for (long i = b; i < b + block && i < n; i++) sum += a[i] * a[i];
        double t = now() - t0;
        if (t < best) best = t;
    }
    printf("%.9f %g\n", best, sum);
    return 0;
}
"""


@dataclass
class KernelOptions(TuningOptions):
    setup_ms: int = field(default=200, metadata={"help": "milliseconds the program spends loading its input"})


class KernelTimerTuner(MeasurementInterface):
    Options = KernelOptions

    def program_name(self):
        return "kernel-timer"

    def manipulator(self):
        return ConfigurationManipulator([IntegerParameter("block", 1, 64)])

    def run(self, desired_result, input, limit):
        block = desired_result.configuration.data["block"]
        with tempfile.TemporaryDirectory() as tmp:
            src, exe = os.path.join(tmp, "k.c"), os.path.join(tmp, "k")
            with open(src, "w") as fh:
                fh.write(SOURCE)
            built = self.call_program(["gcc", "-O1", "-o", exe, src])   # no limit: not the measured command
            if built.returncode != 0:
                return Result(state="ERROR", extra={"stderr": built.stderr[-2000:]})
            out = self.call_program([exe, str(block), str(self.options.setup_ms)], limit=limit)
        if out.timeout:
            return Result(state="TIMEOUT")
        if out.returncode != 0:
            return Result(state="ERROR", extra={"stderr": out.stderr[-2000:]})
        return Result(time=float(out.stdout.split()[0]))


if __name__ == "__main__":
    sys.exit(KernelTimerTuner.main())
