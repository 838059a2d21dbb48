"""The in-memory store gives back JSON values as a database column does: what their JSON text decodes to
(tuples as lists, keys as strings, 1.0 stays a float), a new copy on every read."""
import json

from hypothesis import given, settings, strategies as st

from tunerlib.db import ResultRecord
from tunerlib.db.memory import MemoryStore
from tunerlib.db.migrations import json_dumps

_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=4)
_VALUES = st.recursive(_SCALARS | st.tuples(_SCALARS), lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(st.text(max_size=4) | st.integers(), inner, max_size=3), max_leaves=10)
_DICTS = st.dictionaries(st.text(min_size=1, max_size=4), _VALUES, max_size=4)


def _decoded(value):
    return json.loads(json_dumps(value))


def _same(a, b):
    """Equal, with the same JSON types (1 and 1.0, True and 1 differ)."""
    return json_dumps(a) == json_dumps(b)


@settings(max_examples=60, deadline=None)
@given(config=_DICTS, extra=_DICTS, state=_VALUES)
def test_values_come_back_as_their_json_text_decodes_and_are_never_shared(config, extra, state):
    store = MemoryStore()
    pv = store.program_version_id("p", "q", "1", "{}")
    run_id, _ = store.create_run(pv, None, {"a": (1, 2)})
    claim = store.request_and_claim(run_id, pv, "a" * 64, config, "T", 0, None, "w")
    store.complete(claim.dr_id, ResultRecord("OK", time=1.0, extra=extra))
    store.save_technique_state(run_id, "T", state)
    first, second = store.run_results(run_id)[0], store.run_results(run_id)[0]
    assert _same(claim.config_data, _decoded(config)) and _same(first.config_data, _decoded(config))
    assert _same(first.extra, _decoded(extra)) and _same(store.load_technique_state(run_id, "T"), _decoded(state))
    assert store.runs_of(pv)[0]["args"] == {"a": [1, 2]}
    assert first.config_data is not second.config_data and first.extra is not second.extra
    assert first.config_data is not claim.config_data
