"""tunerlib.db: the results database (schema, ResultsDB storage API, schema migrations).

Imports nothing else of tunerlib: configurations, run arguments and result extras are plain JSON values.
"""
from .models import (DESIRED_RESULT_STATES, RESULT_STATES, RUN_STATES, SCHEMA_VERSION, Claim,
                     DatabaseError, DesiredResultRow, NotFoundError, ResultRow, SchemaVersionError)
from .storage import DEFAULT_URL, ResultsDB, open_engine, resolve_url
from .migrations import MIGRATIONS, migrate

__all__ = [
    "DESIRED_RESULT_STATES", "RESULT_STATES", "RUN_STATES", "SCHEMA_VERSION",
    "Claim", "DesiredResultRow", "ResultRow",
    "DatabaseError", "NotFoundError", "SchemaVersionError",
    "DEFAULT_URL", "ResultsDB", "open_engine", "resolve_url",
    "MIGRATIONS", "migrate",
]
