"""Reporting on results databases: ``tunerlib plot``, ``tunerlib report`` and ``tunerlib export``.

Modules, one job each: :mod:`.data` reads runs through the ResultsStore protocol, :mod:`.series`
computes curves, bands and allocations, :mod:`.encode` turns configurations into a matrix,
:mod:`.importance` fits the random forest behind parameter importance, :mod:`.figures` draws
(matplotlib, extra ``[plot]``, imported only when drawing), :mod:`.output` writes figures,
:mod:`.summary` and :mod:`.render` make the report, :mod:`.export` the CSV/JSON/Parquet tables and
:mod:`.cli` the commands. Importing this package imports neither matplotlib nor scikit-learn.
"""
