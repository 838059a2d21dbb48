"""tunerlib.parameters: parameter types, their operators, the search space and known constraints.

This package is the shared vocabulary of tunerlib and imports nothing else from it.
"""
from .operators import ARITY_N, OperatorSpec, operator
from .base import (ComplexParameter, Config, ConfigurationError, Parameter, ParameterError, PrimitiveParameter,
                   parameter_from_json)
from .numeric import FloatParameter, IntegerParameter, NumericParameter
from .scaled_numeric import LogFloatParameter, LogIntegerParameter, PowerOfTwoParameter, ScaledNumericParameter
from .categorical import BooleanParameter, EnumParameter, SwitchParameter
from .ordinal import OrdinalParameter
from .selector import SelectorParameter
from .permutation import PermutationParameter
from .schedule import ScheduleParameter
from .arrays import ArrayParameter, BooleanArray
from .numeric_arrays import FloatArray, IntegerArray
from .constraints import Constraint, ConstraintError, parse_expression
from .table import TableConstraint
from .feasible import FeasibleSpace
from .priors import Beta, Near, Prior, Probabilities
from .space_prior import SpacePrior
from .manipulator import ConfigurationManipulator

__all__ = [
    "ARITY_N", "ComplexParameter", "Config", "OperatorSpec", "Parameter", "ParameterError",
    "PrimitiveParameter", "operator", "parameter_from_json",
    "FloatParameter", "IntegerParameter", "LogFloatParameter", "LogIntegerParameter",
    "NumericParameter", "PowerOfTwoParameter", "ScaledNumericParameter",
    "BooleanParameter", "EnumParameter", "OrdinalParameter", "SelectorParameter", "SwitchParameter",
    "PermutationParameter", "ScheduleParameter",
    "ArrayParameter", "BooleanArray", "FloatArray", "IntegerArray",
    "Constraint", "ConstraintError", "parse_expression", "TableConstraint",
    "ConfigurationError", "ConfigurationManipulator", "FeasibleSpace",
    "Beta", "Near", "Prior", "Probabilities", "SpacePrior",
]
