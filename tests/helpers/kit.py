"""Settings the technique kits share: BayesianOptimization runs with light acquisition and fitting
settings (the same code paths, a fraction of the CPU); its search quality is tested in tests/techniques/bo."""

LIGHT_BO = ("BayesianOptimization;n_random_samples,200;n_starts,3;max_local_steps,4;hp_samples,8;"
            "hp_starts,2;hp_warm_starts,1;hp_maxiter,25;max_observations,80")


#: the model-based techniques the kits run with :data:`LIGHT_BO`'s options
LIGHT = {name: name + LIGHT_BO[len("BayesianOptimization"):] for name in ("BayesianOptimization", "MultiObjectiveBO")}


def light(name):
    """The technique name a legality/determinism kit runs for ``name``: a model-based technique (options
    included, as in ``"MultiObjectiveBO;extreme_every,2"``) gets :data:`LIGHT_BO`'s options for those
    it does not give itself."""
    base, _, given = name.partition(";")
    if base not in LIGHT:
        return name
    named = {part.split(",", 1)[0].strip() for part in given.split(";") if part.strip()}
    kept = [part for part in LIGHT_BO.split(";")[1:] if part.split(",", 1)[0] not in named]
    return ";".join([base, *kept, *([given] if given else [])])


def core_path(database):
    """Run a ResultsDB on SQLite through SQLAlchemy Connections, the path every other dialect takes
    (by default SQLite statements run on the sqlite3 connection directly)."""
    database._fast = False
    return database


def pending_count(store, run_id):
    """The run's requests that are REQUESTED or RUNNING (through the storage protocol)."""
    return sum(d.state in ("REQUESTED", "RUNNING") for d in store.desired_results(run_id))
