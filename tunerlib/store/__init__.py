"""The cross-session store (DeepTuner thesis ch. 5-6; docs/concepts/store.md): uploaded runs, their problems,
techniques and performance snapshots, and the queries the recommendation bandits use.

* :mod:`.schema` tables and version; :mod:`.store` opening and writing (one transaction per run);
* :mod:`.representation` the canonical parameter-structure string and the parameter distance;
* :mod:`.performance` replaying a run into snapshots; :mod:`.export` a results-database run as stored;
* :mod:`.queries` affinities and similarity; :mod:`.recommender` answers for a recommendation bandit;
* :mod:`.upload` ``tunerlib upload``; :mod:`.warm` ``--warm-start``;
* :mod:`.starter` the starter history shipped as package data, and :func:`.starter.recommendation_table`:
  the user's store, or else the starter history.
"""
from .schema import STORE_SCHEMA_VERSION, StoreError
from .crosssession import ENV_VAR, CrossSessionStore, default_store_url
from .starter import STARTER_PATH, read_starter, recommendation_table, write_starter
from .upload import upload

__all__ = ["CrossSessionStore", "ENV_VAR", "STARTER_PATH", "STORE_SCHEMA_VERSION", "StoreError", "default_store_url",
           "read_starter", "recommendation_table", "upload", "write_starter"]
