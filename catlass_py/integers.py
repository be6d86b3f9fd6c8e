"""Integers as every argument check of catlass_py sees them: a Python ``int`` or a numpy integer scalar (such as
``np.int64(2)`` or an element of an array's shape arithmetic), never a ``bool``; values are kept as Python ints
so that sizes never wrap."""

from __future__ import annotations

import numbers

import numpy as np


def is_int(value) -> bool:
    """True for a Python ``int`` or a numpy integer scalar, False for ``bool`` / ``np.bool_`` and anything else."""
    return isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, (bool, np.bool_))


def as_int(value):
    """``int(value)`` for an integer accepted by :func:`is_int`; any other value unchanged (for the caller's
    check to reject with its own message)."""
    return int(value) if is_int(value) else value


__all__ = ["as_int", "is_int"]
