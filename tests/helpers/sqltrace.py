"""Record the SQL a tuning run sends its SQLite store, and where each poll of its search falls in it."""
from typing import List, Tuple

from tunerlib import TuningOptions, TuningRun
from tunerlib.db import storage


def traced_run(monkeypatch, interface_class, opts: TuningOptions) -> Tuple[object, List[str], List[int]]:
    """Run ``interface_class(opts)`` to its end with every statement of the store's sqlite3 connection
    recorded; returns the run's summary, the statements in order and, for each poll of the search, the
    number of statements sent before it."""
    seen: List[str] = []
    polls: List[int] = []
    connect = storage.ResultsDB._runner

    def traced(self):
        runner = connect(self)
        if not getattr(runner, "_traced", False):
            runner.db.set_trace_callback(seen.append)
            runner._traced = True
        return runner
    monkeypatch.setattr(storage.ResultsDB, "_runner", traced)
    run = TuningRun(interface_class(opts), opts)
    poll = run.search.poll

    def counted():
        polls.append(len(seen))
        return poll()
    run.search.poll = counted
    return run.run(), seen, polls
