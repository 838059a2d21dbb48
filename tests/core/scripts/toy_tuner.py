"""A small real tuner script used by the end-to-end tests (run as a subprocess or in-process)."""
import math
import os
import signal
import sys
import time
from dataclasses import dataclass, field
from typing import Optional

from tunerlib import MeasurementInterface, MinimizeAttribute, Result, TuningOptions
from tunerlib.parameters import (ConfigurationManipulator, EnumParameter, FloatParameter,
                                 IntegerParameter, PermutationParameter)


@dataclass
class ToyOptions(TuningOptions):
    sleep: float = field(default=0.0, metadata={"help": "seconds each measurement sleeps"})
    mode: str = field(default="ok", metadata={"help": "ok | raise | raise-all | bad-return | no-metric",
                                              "choices": ["ok", "raise", "raise-all", "bad-return",
                                                          "no-metric"]})
    marker: Optional[str] = field(default=None, metadata={"help": "append a line per measurement here"})
    child_sleep: float = field(default=0.0, metadata={
        "help": "each measurement also runs `sleep S` as a child process (call_program, with the limit)"})
    faults: str = field(default="", metadata={
        "help": "comma list of faults some configurations (chosen by x) have: hang (a child that sleeps "
                "100 s), segv (a child killed by SIGSEGV), memory (a child that allocates 2 GB under a "
                "256 MB limit), raise (run() raises), die (the measuring process kills itself with "
                "SIGSEGV; use with --parallelism > 1 only)"})
    hang_limit: float = field(default=0.5, metadata={
        "help": "seconds the hang fault's child gets before call_program stops it (always TIMEOUT)"})
    rendezvous: int = field(default=0, metadata={
        "help": "each measurement first adds its pid to --marker, then waits (up to 120 s) until this many "
                "distinct pids are there: every measuring process takes part, however slowly it started"})
    cost_unit: Optional[str] = field(default=None, metadata={"help": "the unit of the cost objective (default: none)"})
    kill_once: Optional[str] = field(default=None, metadata={
        "help": "the first measurement that creates this file (writing its request id and pid) kills its "
                "own process with SIGKILL after --sleep; the others measure normally (for executors)"})
    kill_config: Optional[str] = field(default=None, metadata={
        "help": "the first measurement of a request id >= --kill-from that creates this file writes its "
                "configuration's hash there; it and every later measurement of that configuration kill "
                "their own process with SIGKILL after --sleep, as the OOM killer would"})
    kill_from: int = field(default=1, metadata={"help": "see --kill-config"})


class ToyTuner(MeasurementInterface):
    Options = ToyOptions

    def program_name(self):
        return "toy"

    def manipulator(self):
        m = ConfigurationManipulator()
        m.add_parameter(IntegerParameter("x", -20, 20))
        m.add_parameter(FloatParameter("y", -5.0, 5.0))
        m.add_parameter(EnumParameter("mode", ["a", "b", "c"]))
        m.add_parameter(PermutationParameter("order", ["i", "j", "k", "l"]))
        m.add_constraint("x + y < 18")
        return m

    def objective(self):
        return MinimizeAttribute("cost", unit=self.options.cost_unit)

    def run(self, desired_result, input, limit):
        cfg = desired_result.configuration.data
        fault = self._fault(cfg)
        if fault is not None:
            return fault
        if self.options.rendezvous:
            self._rendezvous()
        if self.options.child_sleep:
            out = self.call_program(["sleep", str(self.options.child_sleep)], limit=limit)
            if out.timeout:
                return Result(state="TIMEOUT")
        if self.options.sleep:
            time.sleep(self.options.sleep)
        if self.options.kill_once:
            self._kill_once(desired_result.id)
        if self.options.kill_config:
            self._kill_config(desired_result.id, desired_result.configuration.hash)
        if self.options.marker and not self.options.rendezvous:
            self._mark()
        if self.options.mode == "raise" and cfg["mode"] == "b" or self.options.mode == "raise-all":
            raise RuntimeError("simulated crash in run()")
        if self.options.mode == "bad-return":
            return 42.0
        if self.options.mode == "no-metric":
            return Result()
        penalty = {"a": 0.0, "b": 1.0, "c": 2.5}[cfg["mode"]]
        inversions = sum(1 for a in range(4) for b in range(a + 1, 4) if cfg["order"][a] > cfg["order"][b])
        cost = (cfg["x"] - 3) ** 2 + (cfg["y"] - 1.5) ** 2 + penalty + inversions + math.sin(cfg["y"])
        return Result(extra={"cost": cost})


    def _mark(self):
        with open(self.options.marker, "a") as fh:
            fh.write(f"{os.getpid()}\n")

    def _rendezvous(self):
        """Wait until --rendezvous distinct processes have measured (each adds its pid to --marker)."""
        self._mark()
        end = time.monotonic() + 120
        while time.monotonic() < end:
            with open(self.options.marker) as fh:
                if len(set(fh.read().split())) >= self.options.rendezvous:
                    return
            time.sleep(0.01)

    def _kill_once(self, request_id):
        try:
            fd = os.open(self.options.kill_once, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return
        os.write(fd, f"{request_id} {os.getpid()}\n".encode())
        os.close(fd)
        os.kill(os.getpid(), signal.SIGKILL)

    def _kill_config(self, request_id, config_hash):
        if request_id < self.options.kill_from and not os.path.exists(self.options.kill_config):
            return
        try:
            fd = os.open(self.options.kill_config, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            os.write(fd, config_hash.encode())
            os.close(fd)
        except FileExistsError:
            with open(self.options.kill_config) as fh:
                if fh.read() != config_hash:
                    return
        os.kill(os.getpid(), signal.SIGKILL)

    def _fault(self, cfg):
        """The result of a faulty configuration (None: this one measures normally)."""
        kinds = [k for k in self.options.faults.split(",") if k]
        if not kinds or cfg["x"] % 3 != 0:
            return None
        kind = kinds[(cfg["x"] // 3) % len(kinds)]
        if kind == "hang":
            out = self.call_program(["sleep", "100"], limit=self.options.hang_limit)
            return Result(state="TIMEOUT" if out.timeout else "ERROR")
        # the children's interpreters skip site (-I -S): they start in milliseconds, far within the short
        # --measurement-timeout of the fault tests even on a loaded machine (with site: about 0.3 s)
        if kind == "segv":
            out = self.call_program([sys.executable, "-I", "-S", "-c",
                                     "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"])
            return Result(state="ERROR", extra={"error": f"exit {out.returncode}"})
        if kind == "memory":
            out = self.call_program([sys.executable, "-I", "-S", "-c", "b = bytearray(2 * 10**9)"],
                                    memory_limit=256 * 2**20)
            return Result(state="ERROR" if out.returncode else "OK", extra={"cost": 99.0, "stderr": out.stderr[-300:]})
        if kind == "raise":
            raise RuntimeError(f"simulated failure for x={cfg['x']}")
        if kind == "die":
            os.kill(os.getpid(), signal.SIGSEGV)
        return None


if __name__ == "__main__":
    sys.exit(ToyTuner.main())
