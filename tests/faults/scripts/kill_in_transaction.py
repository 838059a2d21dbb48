"""The toy tuner, SIGKILLed inside one of the serial run's write transactions, for the fault-injection tests.

    python kill_in_transaction.py METHOD:WHEN:N [toy tuner options]

On the N-th call of ``ResultsDB.METHOD`` (``request_and_claim``: the serial loop writes a request already
claimed; ``complete``: a result is stored) the process kills itself with SIGKILL: ``before`` its commit
(every statement of the transaction has run, nothing is committed) or ``after`` it (committed, before the
method returns).
"""
import os
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[2] / "core" / "scripts"))

from toy_tuner import ToyTuner  # noqa: E402

from tunerlib.db import ResultsDB  # noqa: E402


def kill_in(method: str, when: str, n: int) -> None:
    original = getattr(ResultsDB, method)
    calls = [0]

    def killing(db, *args, **kwargs):
        calls[0] += 1
        if calls[0] != n:
            return original(db, *args, **kwargs)
        if when == "before":
            db._runner().commit = lambda: os.kill(os.getpid(), signal.SIGKILL)
        answer = original(db, *args, **kwargs)
        os.kill(os.getpid(), signal.SIGKILL)
        return answer
    setattr(ResultsDB, method, killing)


if __name__ == "__main__":
    method, when, n = sys.argv.pop(1).split(":")
    kill_in(method, when, int(n))
    sys.exit(ToyTuner.main())
