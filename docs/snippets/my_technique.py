from tunerlib.techniques import Technique, register
from tunerlib.testing import check_technique


class OneChange(Technique):
    """From the best configuration so far (found by any technique), re-draw one parameter; never
    propose a configuration twice."""

    description = "re-draw one random parameter of the best configuration"

    def desired_configuration(self):
        if not hasattr(self, "proposed"):
            self.proposed = set()
        for _ in range(100):
            config = self.manipulator.random(self.rng)
            if self.best_config is not None and self.manipulator.parameters and self.rng.random() < 0.9:
                config = self.manipulator.copy(self.best_config)
                parameter = self.rng.choice(self.manipulator.parameters)
                parameter.set_value(config, parameter.random_value(self.rng))
            key = self.manipulator.hash_config(config)
            if key not in self.proposed and self.manipulator.is_feasible(config):
                self.proposed.add(key)
                return config
        return None                                    # nothing new found: ask again later


register("OneChange", OneChange, OneChange.description)
check_technique("OneChange")   # raises ConformanceError naming the first broken rule
