"""Everything that measures a run's requests: in the run's process, a local process pool, remote
``tunerlib worker`` processes holding leases, and a Dask cluster."""
