"""BayesianOptimization's options appear in its generated name, which --technique parses back."""
import pytest
from hypothesis import given, settings, strategies as st

from tunerlib.techniques import TechniqueError, create_technique, technique_name
from tunerlib.techniques.bo import BayesianOptimization


@settings(max_examples=40, deadline=None)
@given(st.fixed_dictionaries({}, optional={
    "n_starts": st.integers(1, 20), "n_random_samples": st.integers(10, 5000),
    "log_transform": st.sampled_from([None, True, False]), "feasibility_model": st.booleans(),
    "permutation_distance": st.sampled_from(["spearman", "kendall", "hamming"]),
    "permutation_distances": st.dictionaries(st.sampled_from(["p", "q r", "s;|"]),
                                             st.sampled_from(["kendall", "hamming"]), max_size=2),
    "max_feasibility_threshold": st.floats(0.0, 0.5), "copula_transform": st.booleans(),
    "copula_every": st.integers(0, 5),
    "power_transforms": st.lists(st.sampled_from(["0", "1", "-1", "0.5", "-0.25"]), min_size=1,
                                 max_size=4).map(",".join)}))
def test_options_round_trip_through_the_name(options):
    tech = BayesianOptimization(**options)
    name = technique_name(tech)
    assert " " not in name
    again = create_technique([name])
    assert isinstance(again, BayesianOptimization) and again.options == tech.options
    assert technique_name(again) == name == again.name


def test_default_options_give_the_registered_name():
    assert technique_name(BayesianOptimization()) == "BayesianOptimization"


def test_bad_option_in_name_is_one_line_error():
    with pytest.raises(TechniqueError, match="character 21 .*has no option .n_stars.") as err:
        create_technique(["BayesianOptimization;n_stars,5"])
    assert "\n" not in str(err.value)
