"""Argument checks shared by the numpy-in / numpy-out operators: clear ArgumentErrors before anything runs."""

from __future__ import annotations

import numpy as np

from catlass_py.errors import ArgumentError
from catlass_py.numerics.dtypes import get_dtype

#: operand dtypes of the float-only operators, and the outputs their fixpipe or vector cast can give
FLOAT_TYPES = ("float16", "bfloat16")
FLOAT_OUT_TYPES = ("float16", "bfloat16", "float32")


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


def check_matmul_operands(a, b, dtypes) -> tuple[int, int, int, str]:
    """``a`` [m, k] (one of ``dtypes``) and ``b`` [k, n] of the same dtype; returns (m, n, k, element)."""
    a = as_array("a", a, dtypes, 2)
    element = str(a.dtype)
    b = as_array("b", b, element, 2)
    m, k = a.shape
    if b.shape[0] != k:
        raise ArgumentError(f"b: expected shape ({k}, n) to match a's k = {k}, got {b.shape}")
    return m, b.shape[1], k, element


def float_out_dtype(element: str, out_dtype) -> str:
    """The output dtype name of a float operator: ``out_dtype`` (a name) if one of :data:`FLOAT_OUT_TYPES`,
    by default the input ``element``."""
    out = element if out_dtype is None else str(out_dtype)
    if out not in FLOAT_OUT_TYPES:
        raise ArgumentError(f"out_dtype: expected one of {FLOAT_OUT_TYPES}, got {out_dtype!r}")
    return out


def check_shape(name: str, x: np.ndarray, expected: tuple, what: str) -> None:
    if tuple(x.shape) != tuple(expected):
        raise ArgumentError(f"{name}: expected shape {tuple(expected)} ({what}), got {tuple(x.shape)}")


def check_core_num(core_num, arch) -> int:
    if isinstance(core_num, bool) or not isinstance(core_num, (int, np.integer)) or not 1 <= core_num <= arch.core_num:
        raise ArgumentError(f"core_num: expected an int in 1..{arch.core_num} ({arch.name} AI cores), got {core_num!r}")
    return int(core_num)


def check_kernel_group_list(kernel, group_list_dtype: str) -> None:
    """A kernel passed in by the caller must have been assembled for the group list's element type."""
    if kernel.element_group_list.name != group_list_dtype:
        raise ArgumentError(f"group_list: the kernel was assembled for {kernel.element_group_list} group lists, "
                            f"got {group_list_dtype}")


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
