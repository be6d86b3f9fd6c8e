"""numpy references computed the way CATLASS's host goldens compute them.

Each function names the CATLASS golden it mirrors (``examples/common/golden/matmul.hpp``) and keeps its
rounding points: exact integer dot products wrapped to ``int32``, and ``float`` (IEEE binary32, round to
nearest even) for every floating-point operation the C++ performs in ``float``. Dot products run as BLAS
matrix products where that is exact. Inputs are never modified.
"""

from __future__ import annotations

import numpy as np

from catlass_py.errors import ArgumentError
from catlass_py.numerics.compare import (
    CompareResult,
    ErrorMetrics,
    compare_data,
    compare_data_bfloat16,
    compare_exact,
    error_metrics,
)

__all__ = [
    "CompareResult",
    "ErrorMetrics",
    "compare_data",
    "compare_data_bfloat16",
    "compare_exact",
    "error_metrics",
    "grouped_matmul_slice_m_per_token_dequant",
    "matmul",
]

# |int8 * int8| <= 2^14, so a K-long int8 dot product (and every partial sum of it, in any order) is an
# integer of magnitude <= K * 2^14. float64 holds every integer below 2^53 exactly, so a float64 BLAS
# product is exact while K * 2^14 < 2^53, i.e. K < 2^39; beyond that the int64 path is used.
_INT8_PRODUCT_BOUND = 1 << 14
_FLOAT64_EXACT_INT = 1 << 53


def _as_array(name: str, x, ndim: int) -> np.ndarray:
    if not isinstance(x, np.ndarray):
        raise ArgumentError(f"{name}: expected a numpy array, got {type(x).__name__}")
    if x.ndim != ndim:
        raise ArgumentError(f"{name}: expected {ndim} dimensions, got shape {x.shape}")
    return x


def _check_int8(name: str, x: np.ndarray) -> None:
    if x.dtype != np.int8:
        raise ArgumentError(f"{name}: expected dtype int8, got {x.dtype}")


def _check_float(name: str, x: np.ndarray) -> None:
    # ml_dtypes' bfloat16 is not numpy kind 'f'; it is accepted by name
    if x.dtype.kind == "f" or x.dtype.name == "bfloat16":
        return
    raise ArgumentError(f"{name}: expected a floating dtype (bfloat16, float16, float32), got {x.dtype}")


def _int8_dot_int32(a_rows: np.ndarray, b_mat: np.ndarray, *, use_float64: bool | None = None) -> np.ndarray:
    """``int32`` results of ``sum_k int32(a[i,k]) * int32(b[k,j])`` for int8 operands.

    The exact sum is computed (float64 BLAS when exact, else int64 matmul, which wraps modulo 2^64 and so
    is exact modulo 2^32) and then wrapped to int32, which equals C++ int32 accumulation with
    two's-complement wrap-around (overflow needs K >= 2^17 adversarial values).
    """
    k = a_rows.shape[1]
    if use_float64 is None:
        use_float64 = k * _INT8_PRODUCT_BOUND < _FLOAT64_EXACT_INT
    if use_float64:
        acc = np.matmul(a_rows.astype(np.float64), b_mat.astype(np.float64))
        acc64 = acc.astype(np.int64)
    else:
        acc64 = np.matmul(a_rows.astype(np.int64), b_mat.astype(np.int64))
    return acc64.astype(np.int32)  # wraps modulo 2^32 like C++ int32 arithmetic


def grouped_matmul_slice_m_per_token_dequant(a: np.ndarray, b: np.ndarray, group_list: np.ndarray,
                                             scale: np.ndarray, per_token_scale: np.ndarray) -> np.ndarray:
    """``golden::ComputeGroupedMatmulPerTokenDequant`` (``examples/common/golden/matmul.hpp``, example 10).

    ``a`` int8 ``[m, k]``, ``b`` int8 ``[G, k, n]``, ``group_list`` integer ``[G]`` (inclusive prefix sums of
    group row counts), ``scale`` ``[G, n]`` and ``per_token_scale`` ``[m]`` of a floating dtype (bf16 in
    example 10). Returns float32 ``[m, n]``: for group ``g`` and its rows ``i`` in ``[group_list[g-1],
    group_list[g])`` (the first group starts at row 0)::

        acc = sum_k int32(a[i, k]) * int32(b[g, k, j])              # exact, wrapped to int32
        out[i, j] = float(acc) * float(scale[g, j]) * float(per_token_scale[i])

    where ``float(acc)`` rounds to nearest even and the two products are separate float32 multiplies,
    left to right (C++ ``float`` semantics; they are *not* one float64 product rounded once). Rows not
    covered by any group (at or past ``group_list[-1]``) stay 0, as in the C++ zero-initialised vector.
    Like the C++ loop, each group starts where the previous group's value ended, so a non-monotonic
    list makes later groups (re)write the rows they cover. Values must lie in ``[0, m]``.
    """
    a = _as_array("a", a, 2)
    b = _as_array("b", b, 3)
    group_list = _as_array("group_list", group_list, 1)
    scale = _as_array("scale", scale, 2)
    per_token_scale = _as_array("per_token_scale", per_token_scale, 1)
    _check_int8("a", a)
    _check_int8("b", b)
    m, k = a.shape
    groups, kb, n = b.shape
    if kb != k:
        raise ArgumentError(f"b: expected shape [G, k={k}, n], got {b.shape}")
    if group_list.dtype.kind not in "iu":
        raise ArgumentError(f"group_list: expected an integer dtype, got {group_list.dtype}")
    if group_list.shape != (groups,):
        raise ArgumentError(f"group_list: expected shape ({groups},) (one entry per group of b), got {group_list.shape}")
    if scale.shape != (groups, n):
        raise ArgumentError(f"scale: expected shape ({groups}, {n}), got {scale.shape}")
    if per_token_scale.shape != (m,):
        raise ArgumentError(f"per_token_scale: expected shape ({m},), got {per_token_scale.shape}")
    _check_float("scale", scale)
    _check_float("per_token_scale", per_token_scale)
    ends = [int(v) for v in group_list]
    for g, e in enumerate(ends):
        if not 0 <= e <= m:
            raise ArgumentError(f"group_list: expected values in [0, m={m}], got group_list[{g}] = {e}")

    scale32 = scale.astype(np.float32)  # bf16/fp16 -> float is exact
    pts32 = per_token_scale.astype(np.float32)
    out = np.zeros((m, n), dtype=np.float32)
    start = 0
    for g, end in enumerate(ends):
        if end > start:
            acc = _int8_dot_int32(a[start:end], b[g])
            x = acc.astype(np.float32)  # int32 -> float, round to nearest even
            x *= scale32[g][None, :]  # float32 multiply
            x *= pts32[start:end, None]  # float32 multiply
            out[start:end] = x
        start = end
    return out


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``golden::ComputeMatmul`` with ``ElementGolden = float`` (``examples/common/golden/matmul.hpp``).

    ``a`` ``[m, k]``, ``b`` ``[k, n]`` of any numeric dtype numpy/ml_dtypes can cast (fp16, bf16, fp32,
    integers); returns float32 ``[m, n]``. Each element is converted exactly to float64, the dot product
    is a float64 BLAS product and the result is rounded once to float32.

    Deviation, by design: the C++ accumulates ``float(a) * float(b)`` sequentially in ``float`` (and a
    host compiler may fuse the multiply-add), so its result can differ from this one in the last bits of
    float32; this one is the more accurate of the two and well inside CATLASS's compare tolerance. For
    fp16/bf16 inputs every product is exact in float64 and so is the sum while ``k`` is moderate.
    """
    a = _as_array("a", a, 2)
    b = _as_array("b", b, 2)
    if a.shape[1] != b.shape[0]:
        raise ArgumentError(f"b: expected shape ({a.shape[1]}, n) to match a {a.shape}, got {b.shape}")
    for name, x in (("a", a), ("b", b)):
        if not (x.dtype.kind in "fiu" or x.dtype.name == "bfloat16" or x.dtype.name.startswith("float")):
            raise ArgumentError(f"{name}: expected a numeric dtype, got {x.dtype}")
    return np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
