"""The DataFrames of :mod:`tunerlib.analysis` (see its docstring)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Optional, Sequence, Union

from ..db import DatabaseError
from ..objectives import UNIT_KEY
from ..report.data import ReportError, open_results, read_run, select_runs
from ..report.export import export_rows

if TYPE_CHECKING:  # annotations only: pandas is an optional extra
    import pandas

__all__ = ["EXTRA_COLUMNS", "STORE_COLUMNS", "load_results", "load_store_records"]

#: columns of :func:`load_results` beyond those of ``tunerlib export``: (name, comes after)
EXTRA_COLUMNS = (("version", "program"), ("unit", "value"))
#: export columns that hold numbers or nothing (NaN in the DataFrame)
_FLOATS = ("value", "best_so_far", "time", "accuracy", "energy", "size", "collection_cost")
#: the columns of :func:`load_store_records`, in order
STORE_COLUMNS = ("run_uuid", "project", "program", "version", "objective", "representation", "search",
                 "machine_class", "run_state", "run_tests", "run_best_value", "technique", "technique_root",
                 "seconds", "tests", "requests", "new_bests", "improvement", "best_value", "affinity", "final")


def _pandas() -> Any:
    """The pandas module; ImportError naming the extra when it is not installed."""
    try:
        import pandas
    except ImportError:
        raise ImportError("tunerlib's DataFrames need pandas: pip install 'tunerlib[analysis]'") from None
    return pandas


def _chosen(infos: Sequence[dict], run: Union[None, str, Sequence[str]], where: str) -> List[dict]:
    """The runs named by ``run`` (UUIDs or unique prefixes; all when None); ReportError for a prefix
    that names no run or several."""
    if run is None:
        return list(infos)
    wanted = [run] if isinstance(run, str) else list(run)
    found = []
    for prefix in wanted:
        hits = [i for i in infos if i["uuid"].startswith(prefix)]
        if len(hits) != 1:
            raise ReportError(f"run {prefix!r}: {'no' if not hits else len(hits)} runs match in {where}; "
                              "`tunerlib runs` lists them")
        found += [h for h in hits if h not in found]
    return found


def _columns(exported: List[str]) -> List[str]:
    columns = list(exported)
    for name, after in EXTRA_COLUMNS:
        columns.insert(columns.index(after) + 1, name)
    return columns


def load_results(url: str, run: Union[None, str, Sequence[str]] = None,
                 labels: Sequence[str] = ()) -> "pandas.DataFrame":
    """Every result of the results database at ``url`` (a file path or SQLAlchemy URL), of the runs
    ``run`` (a UUID, a unique UUID prefix, or a list of them; default every run) with one of ``labels``
    (default any), as a DataFrame; called by users, nothing in tunerlib calls it.

    One row per result, in run and result order. The columns are those of ``tunerlib export`` (run,
    label, program, objective, result id, evaluation, state, objective ``value`` (NaN unless OK),
    ``best_so_far``, ``was_new_best``, technique, requestor, metrics, ``collection_date`` (Unix
    seconds), ``collection_time`` (a timezone-aware timestamp), ``seconds_into_run``, machine, worker,
    error, then one column per parameter, named as the parameter or ``param:<name>`` where that name
    is a fixed column's) plus ``version`` (the program's) and ``unit`` (the objective's unit as the run
    recorded it; None when unitless or not recorded). Structured parameter values (permutations,
    arrays) stay Python lists. Nothing is written to the database.

    ImportError naming the ``[analysis]`` extra without pandas; :class:`~tunerlib.report.data.ReportError`
    (a UsageError) for a missing database, an unknown run or label."""
    pd = _pandas()
    with open_results(url) as store:
        try:
            infos = select_runs(store.list_runs(), labels, url)
            runs = [read_run(store, info) for info in _chosen(infos, run, url)]
        except DatabaseError as exc:
            raise ReportError(f"cannot read {url}: {exc}") from None
    exported, rows = export_rows(runs)
    extra = {r.uuid: {"version": r.version, "unit": r.args.get(UNIT_KEY)} for r in runs}
    for row in rows:
        row.update(extra[row["run_uuid"]])
    frame = pd.DataFrame.from_records(rows, columns=_columns(exported))
    frame["collection_time"] = pd.to_datetime(frame["collection_date"], unit="s", utc=True)
    for column in ("result_id", "evaluation"):
        frame[column] = frame[column].astype("int64")
    for column in _FLOATS:
        frame[column] = frame[column].astype("float64")
    frame["was_new_best"] = frame["was_new_best"].astype(bool)
    return frame


def _store_query() -> Any:
    from sqlalchemy import select
    from ..store import schema as S
    tp, run = S.TechniquePerformance, S.TuningRun
    return (select(run.uuid, S.Program.project, S.Program.name, S.Program.version, S.Program.objective,
                   S.Representation.name, S.MetaTechnique.name, S.MachineClass.name, run.state, run.tests,
                   run.best_value, S.Technique.name, S.Technique.root, tp.seconds, tp.tests, tp.requests,
                   tp.new_bests, tp.improvement, tp.best_value)
            .join(run, run.id == tp.tuning_run_id)
            .join(S.Technique, S.Technique.id == tp.technique_id)
            .join(S.Representation, S.Representation.id == run.representation_id)
            .join(S.Program, S.Program.id == S.Representation.program_id)
            .outerjoin(S.MetaTechnique, S.MetaTechnique.id == run.meta_technique_id)
            .outerjoin(S.MachineClass, S.MachineClass.id == run.machine_class_id)
            .order_by(run.id, S.Technique.name, tp.tests))


def load_store_records(store: Optional[str] = None) -> "pandas.DataFrame":
    """The technique performance records of the cross-session store at ``store`` (a file path or
    SQLAlchemy URL; default ``$TUNERLIB_STORE`` or the user data directory) as a DataFrame; called by
    users.

    One row per snapshot of one technique in one uploaded run (taken at 10, 20, 50, 100 ... results
    and at the end; ``final`` marks each technique's last one), columns :data:`STORE_COLUMNS`: the
    run, its program, representation, search (the meta-technique), machine class, state, tests and
    best value; the technique and its root; the snapshot's ``seconds``, ``tests``, ``requests``,
    ``new_bests``, summed relative ``improvement``, ``best_value`` and ``affinity`` (new bests per
    request, the search affinity the recommendation bandits use).

    ImportError naming the ``[analysis]`` extra without pandas; StoreError when there is no store."""
    pd = _pandas()
    from ..store import CrossSessionStore
    with CrossSessionStore(store, create=False) as opened:
        with opened.engine.connect() as conn:
            rows = [tuple(r) for r in conn.execute(_store_query())]
    frame = pd.DataFrame.from_records(rows, columns=list(STORE_COLUMNS[:-2]))
    frame["affinity"] = (frame["new_bests"] / frame["requests"].where(frame["requests"] > 0)).fillna(0.0)
    last = frame.groupby(["run_uuid", "technique"])["tests"].transform("max") if len(frame) else frame["tests"]
    frame["final"] = (frame["tests"] == last).astype(bool)
    return frame

