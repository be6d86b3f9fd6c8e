"""Argument checks shared by the numpy-in / numpy-out operators: clear ArgumentErrors before anything runs."""

from __future__ import annotations

import numpy as np

from catlass_py.errors import ArgumentError
from catlass_py.numerics.dtypes import get_dtype


def as_array(name: str, x, dtypes, ndim: int) -> np.ndarray:
    """``x`` as a numpy array, checked for one of ``dtypes`` (registry names) and rank ``ndim``. Never copies
    or modifies the caller's array."""
    if not isinstance(x, np.ndarray):
        raise ArgumentError(f"{name}: expected a numpy array, got {type(x).__name__}")
    names = (dtypes,) if isinstance(dtypes, str) else tuple(dtypes)
    try:
        got = get_dtype(x.dtype).name
    except ArgumentError:
        got = str(x.dtype)
    if got not in names:
        raise ArgumentError(f"{name}: expected dtype {' or '.join(names)}, got {got}")
    if x.ndim != ndim:
        raise ArgumentError(f"{name}: expected a {ndim}-D array, got shape {x.shape}")
    return x


def check_shape(name: str, x: np.ndarray, expected: tuple, what: str) -> None:
    if tuple(x.shape) != tuple(expected):
        raise ArgumentError(f"{name}: expected shape {tuple(expected)} ({what}), got {tuple(x.shape)}")


def check_core_num(core_num, arch) -> int:
    if isinstance(core_num, bool) or not isinstance(core_num, (int, np.integer)) or not 1 <= core_num <= arch.core_num:
        raise ArgumentError(f"core_num: expected an int in 1..{arch.core_num} ({arch.name} AI cores), got {core_num!r}")
    return int(core_num)


def check_group_list(group_list, group_count: int, total: int, *, axis: str = "m") -> np.ndarray:
    """A prefix-sum group list: int64, one entry per group, non-decreasing, in [0, total]."""
    gl = as_array("group_list", group_list, "int64", 1)
    if gl.shape[0] != group_count:
        raise ArgumentError(f"group_list: expected {group_count} entries (one per group of b), got {gl.shape[0]}")
    if group_count and gl.min() < 0:
        raise ArgumentError(f"group_list: prefix sums must be >= 0, got {int(gl.min())} at index {int(np.argmin(gl))}")
    if group_count > 1:
        dec = np.flatnonzero(np.diff(gl) < 0)
        if dec.size:
            i = int(dec[0])
            raise ArgumentError(
                f"group_list: prefix sums must not decrease, got {int(gl[i])} then {int(gl[i + 1])} at index {i + 1}"
            )
    if group_count and gl.max() > total:
        raise ArgumentError(f"group_list: prefix sums must be <= {axis} = {total}, got {int(gl.max())}")
    return gl
