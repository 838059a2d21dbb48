"""Analysis in Python: the results of a results database, and the performance records of the
cross-session store, as pandas DataFrames (extra ``[analysis]``; pandas is imported only when one of
these is called).

* :func:`load_results` one row per result: the columns of ``tunerlib export`` (parameters, objective
  value, state, technique, seconds into the run, label ...) plus the objective's ``unit`` and the
  program ``version``;
* :func:`load_store_records` one row per technique performance snapshot of the store.
"""
from .frames import load_results, load_store_records

__all__ = ["load_results", "load_store_records"]
