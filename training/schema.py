"""The building blocks of config sections (``training.config``, and each algorithm's own
section in ``training.algorithms``): strict sections and the numbers a float key takes."""
from __future__ import annotations

import math
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field


def _number(value):
    """YAML reads 3e-4 (no dot) as a string and 1 as an int: both are numbers for a float key.
    A bool is not, nor is any other string: the strict float check refuses them."""
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:  # an integer too big for a float
            return math.inf
    return value


Number = Annotated[float, Field(allow_inf_nan=False), BeforeValidator(_number)]
COEF_MAX = 10.0  # loss coefficients: common values are 0.001-1; far above that the loss overflows


class Section(BaseModel):
    """A config section: unknown keys are errors, and values are strict (true is not 1, "5" is
    not 5), except the numbers a float key takes (``Number``)."""
    model_config = ConfigDict(extra="forbid", strict=True)


