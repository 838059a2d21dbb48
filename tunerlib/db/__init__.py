"""tunerlib.db: the results database (schema, ResultsDB storage API, opening and schema migrations).

Imports nothing else of tunerlib: configurations, run arguments and result extras are plain JSON values.
"""
from .models import (DESIRED_RESULT_STATES, RESULT_STATES, RUN_STATES, SCHEMA_VERSION, AlreadyCompleteError, Claim,
                     DatabaseError, DesiredResultRow, NotFoundError, ResultPlace, ResultRecord, ResultRow,
                     SchemaVersionError)
from .migrations import DEFAULT_URL, MIGRATIONS, migrate, open_engine, resolve_url
from .storage import ResultsDB
from .protocol import MEMORY_URL, ResultsStore, open_store
from .memory import MemoryStore
from .admin import format_run, list_runs, migrate_database

__all__ = [
    "DESIRED_RESULT_STATES", "RESULT_STATES", "RUN_STATES", "SCHEMA_VERSION",
    "Claim", "DesiredResultRow", "ResultPlace", "ResultRecord", "ResultRow",
    "AlreadyCompleteError", "DatabaseError", "NotFoundError", "SchemaVersionError",
    "DEFAULT_URL", "MIGRATIONS", "migrate", "open_engine", "resolve_url",
    "ResultsDB", "ResultsStore", "MemoryStore", "MEMORY_URL", "open_store",
    "format_run", "list_runs", "migrate_database",
]
