# Analysis in Python: a results database as a pandas DataFrame (pip install 'tunerlib[analysis]').
import tunerlib
from tunerlib.parameters import ConfigurationManipulator, EnumParameter, IntegerParameter

# Two short runs to analyse, one per technique, each with its own label.
space = ConfigurationManipulator([IntegerParameter("block", 1, 64), EnumParameter("order", ["ij", "ji"])])
cost = lambda cfg: abs(cfg["block"] - 24) + (3 if cfg["order"] == "ji" else 0) + 1.0  # noqa: E731
for label, technique in (("random", ["PureRandom"]), ("bandit", ["AUCBanditMetaTechniqueA"])):
    tunerlib.tune_function(space, cost, test_limit=30, technique=technique, seed=1,
                           database="analysis.db", label=label)

# One row per result: parameters, objective value and unit, state, technique, seconds into the run, label.
results = tunerlib.load_results("analysis.db")
print(results[["label", "evaluation", "block", "order", "value", "state", "technique"]].head())

# The best value of each label, and the evaluation that found it.
best = results.loc[results.groupby("label")["value"].idxmin(), ["label", "value", "evaluation", "block", "order"]]
print(best.to_string(index=False))

# Which technique proposed the new bests.
print(results[results["was_new_best"]].groupby(["label", "technique"]).size())

# The mean objective per value of a parameter (what `tunerlib plot --kind slice` draws).
print(results.groupby("order")["value"].mean().round(2))

# The cross-session store's technique records: upload the runs, then one row per snapshot.
from tunerlib.cli import main  # noqa: E402
main(["upload", "analysis.db"])
records = tunerlib.load_store_records()
final = records[records["final"]]
print(final[["program", "technique", "requests", "new_bests", "affinity"]].to_string(index=False))
