"""One tuning run: setup, the search driver, the run loop over an executor, events and callbacks,
resume and finish.  It sees the tuner script only through the protocols of ``engine.contracts``."""
