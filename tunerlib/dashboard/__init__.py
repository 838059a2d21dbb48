"""tunerlib.dashboard: ``tunerlib dashboard DB_URL ...``, a local web page that follows tuning runs live.

It polls the results databases read-only (:mod:`.source`), follows each run incrementally
(:mod:`.follow`), answers a small JSON API (:mod:`.views`, :mod:`.server`) and serves a page that draws
it with Plotly's offline bundle from the installed ``plotly`` package (extra ``[dashboard]``).
"""
