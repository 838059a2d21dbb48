"""What a tuner author touches: the :class:`MeasurementInterface` a tuner script subclasses, its inputs,
the ask/tell API and the tuner script's command line.  Imports the engine; the engine never imports it."""
