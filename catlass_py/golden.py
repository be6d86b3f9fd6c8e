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

# |int8 * int8| <= 2^14, so a dot product of at most 1024 int8 products (and every partial sum of it, in any
# order) is an integer of magnitude <= 2^24, which float32 holds exactly: float32 BLAS on K chunks of 1024 is
# exact for any int8 operands. The chunk results are accumulated in int32, wrapping like C++ int32.
_K_CHUNK = 1024


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


def _int8_chunk_products(a_rows: np.ndarray, b_mat: np.ndarray, a32: np.ndarray | None = None,
                          b_buf: np.ndarray | None = None):
    """float32 products ``a_rows[:, ks] @ b_mat[ks, :]`` of the K chunks ``ks`` of at most ``_K_CHUNK``, each
    exact (integers of magnitude <= 2^24). ``a32``: ``a_rows`` already in float32; ``b_buf``: float32
    scratch of at least ``(min(k, _K_CHUNK), n)`` for the chunks of B (allocated when omitted)."""
    k = a_rows.shape[1]
    n = b_mat.shape[1]
    if a32 is None:
        a32 = a_rows.astype(np.float32)
    if b_buf is None:
        b_buf = np.empty((min(k, _K_CHUNK), n), dtype=np.float32)
    for k0 in range(0, k, _K_CHUNK):
        k1 = min(k, k0 + _K_CHUNK)
        b32 = b_buf[:k1 - k0, :n]
        np.copyto(b32, b_mat[k0:k1])  # int8 -> float32 is exact
        yield np.matmul(a32[:, k0:k1], b32)


def _int8_dot_int32(a_rows: np.ndarray, b_mat: np.ndarray, *, a32: np.ndarray | None = None,
                    b_buf: np.ndarray | None = None) -> np.ndarray:
    """``int32`` results of ``sum_k int32(a[i,k]) * int32(b[k,j])`` for int8 operands: the exact float32
    products of K chunks (:func:`_int8_chunk_products`, same ``a32``/``b_buf``) summed in int32 with
    two's-complement wrap-around, which is C++ int32 accumulation (overflow needs K >= 2^17 adversarial
    values)."""
    acc = np.zeros((a_rows.shape[0], b_mat.shape[1]), dtype=np.int32)
    part = None
    for prod in _int8_chunk_products(a_rows, b_mat, a32, b_buf):
        if part is None:
            part = np.empty(prod.shape, dtype=np.int32)
        np.copyto(part, prod, casting="unsafe")  # integral float32 -> int32, exact
        acc += part
    return acc


def _int8_dot_float32(a_rows: np.ndarray, b_mat: np.ndarray, *, a32: np.ndarray | None = None,
                      b_buf: np.ndarray | None = None) -> np.ndarray:
    """``float(acc)`` (int32 -> float32, round to nearest even) of :func:`_int8_dot_int32`'s ``acc``. With
    one K chunk the float32 product is already that value (an integer of magnitude <= 2^24); with two, their
    float32 sum is: IEEE addition rounds the exact sum of its operands once, to nearest even, and the exact sum
    of the two exact chunk products is ``acc`` itself (no int32 wrap-around below 2^31)."""
    if a_rows.shape[1] <= 2 * _K_CHUNK:
        total = None
        for prod in _int8_chunk_products(a_rows, b_mat, a32, b_buf):
            if total is None:
                total = prod
            else:
                total += prod
        if total is None:  # k == 0
            return np.zeros((a_rows.shape[0], b_mat.shape[1]), dtype=np.float32)
        return total
    return _int8_dot_int32(a_rows, b_mat, a32=a32, b_buf=b_buf).astype(np.float32)


def _int8_operands(a: np.ndarray, b: np.ndarray) -> tuple[int, int, int]:
    """(m, n, k) of int8 ``a [m, k]`` and int8 ``b [k, n]`` (arrays already checked for rank)."""
    _check_int8("a", a)
    _check_int8("b", b)
    m, k = a.shape
    if b.shape[0] != k:
        raise ArgumentError(f"b: expected shape ({k}, n) to match a {a.shape}, got {b.shape}")
    return m, b.shape[1], k


def _dequant(acc: np.ndarray, scale: np.ndarray, per_token_scale: np.ndarray) -> np.ndarray:
    """CATLASS's golden per-token dequant of int32 ``acc [rows, n]``: ``float(acc) * float(scale[j]) *
    float(per_token_scale[i])``, the int32 -> float conversion rounding to nearest even and the two products
    separate float32 multiplies, left to right (C++ ``float`` semantics, not one float64 product rounded once).
    ``acc`` may also be float32 holding ``float(acc)`` already (it is then scaled in place)."""
    x = acc if acc.dtype == np.float32 else acc.astype(np.float32)
    x *= scale.astype(np.float32)[None, :]  # bf16/fp16 -> float is exact
    x *= per_token_scale.astype(np.float32)[:, None]
    return x


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

    out = np.zeros((m, n), dtype=np.float32)
    # A converted once; one float32 scratch for B's K chunks, reused by every group (converting B_g is the
    # floor of an exact BLAS computation; tiny groups pay nothing else)
    a32 = a[:max(ends, default=0)].astype(np.float32)
    b_buf = np.empty((min(k, _K_CHUNK), n), dtype=np.float32)
    scale32 = scale.astype(np.float32)
    pts32 = per_token_scale.astype(np.float32)
    start = 0
    for g, end in enumerate(ends):
        if end > start:
            x = _int8_dot_float32(a[start:end], b[g], a32=a32[start:end], b_buf=b_buf)
            np.multiply(x, scale32[g][None, :], out=out[start:end])
            out[start:end] *= pts32[start:end, None]
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


# --------------------------------------------------------------------------------------------------
# Issue-4 kernels: element-wise epilogues, quant matmul, grouped slice-K per-token dequant
# --------------------------------------------------------------------------------------------------


def matmul_add(a: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``golden::ComputeMatmulElemWiseAdd`` (example 03): ``float(sum_k a*b) + float(x)``, float32 ``[m, n]``.

    The dot product follows :func:`matmul` (exact products, one rounding to float32); the addition is one
    float32 addition, as in the C++ (``accumulator + static_cast<float>(x)``).
    """
    acc = matmul(a, b)
    x = _as_array("x", x, 2)
    if x.shape != acc.shape:
        raise ArgumentError(f"x: expected shape {acc.shape} (m, n), got {x.shape}")
    _check_float("x", x)
    return acc + x.astype(np.float32)


def _sigmoid32(v: np.ndarray) -> np.ndarray:
    one = np.float32(1)
    with np.errstate(over="ignore"):
        return one / (one + np.exp(-v))


def matmul_gelu(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``golden::ComputeMatmulElemWiseGelu`` (example 27): float32 ``gelu(sum_k a*b)`` with CATLASS's golden
    formula ``x * sigmoid(1.59576912 * (x + 0.044715 * x^3))``, every operation in float32 left to right
    (``x*x*x``, then ``0.044715 * x^3``, ``x + .``, ``kScale * .``, ``1 / (1 + exp(-v))``, ``x * .``)."""
    x = matmul(a, b)
    k_scale, k_cubic = np.float32(1.59576912), np.float32(0.044715)
    x_cubed = x * x * x
    inner = x + k_cubic * x_cubed
    return x * _sigmoid32(k_scale * inner)


def matmul_silu(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``golden::ComputeMatmulElemWiseSilu`` (example 28): float32 ``x * (1 / (1 + exp(-x)))`` of
    ``x = sum_k a*b``."""
    x = matmul(a, b)
    return x * _sigmoid32(x)


def quant_matmul(a: np.ndarray, b: np.ndarray, scale: np.ndarray, per_token_scale: np.ndarray) -> np.ndarray:
    """``golden::QuantMatmul`` (example 12): ``float(acc) * float(scale[j]) * float(per_token_scale[i])`` with
    ``acc`` the exact int32 dot product of int8 ``a [m, k]`` and ``b [k, n]`` (logical shapes, whatever the
    GM layouts), float32 ``[m, n]``, products left to right."""
    a = _as_array("a", a, 2)
    b = _as_array("b", b, 2)
    scale = _as_array("scale", scale, 1)
    per_token_scale = _as_array("per_token_scale", per_token_scale, 1)
    m, n, k = _int8_operands(a, b)
    if scale.shape != (n,):
        raise ArgumentError(f"scale: expected shape ({n},), got {scale.shape}")
    if per_token_scale.shape != (m,):
        raise ArgumentError(f"per_token_scale: expected shape ({m},), got {per_token_scale.shape}")
    _check_float("scale", scale)
    _check_float("per_token_scale", per_token_scale)
    return _dequant(_int8_dot_float32(a, b), scale, per_token_scale)


def grouped_matmul_slice_k_per_token_dequant(a: np.ndarray, b: np.ndarray, group_list: np.ndarray,
                                             scale: np.ndarray, per_token_scale: np.ndarray) -> np.ndarray:
    """``golden::ComputeGroupedMatmulSliceKPerTokenDequant`` (example 11), float32 ``[G, m, n]``.

    ``a`` int8 ``[m, k]`` and ``b`` int8 ``[k, n]`` (logical shapes), ``group_list`` ``[G]`` inclusive prefix
    sums over k, ``scale`` ``[G, n]``, ``per_token_scale`` ``[G, m]``. For group g with k range
    ``[group_list[g-1], group_list[g])``: ``out[g] = float(a[:, ks] @ b[ks, :]) * scale[g][None] *
    per_token_scale[g][:, None]`` (an empty range gives 0). K past ``group_list[-1]`` is never used.
    """
    a = _as_array("a", a, 2)
    b = _as_array("b", b, 2)
    group_list = _as_array("group_list", group_list, 1)
    scale = _as_array("scale", scale, 2)
    per_token_scale = _as_array("per_token_scale", per_token_scale, 2)
    m, n, k = _int8_operands(a, b)
    groups = group_list.shape[0]
    if group_list.dtype.kind not in "iu":
        raise ArgumentError(f"group_list: expected an integer dtype, got {group_list.dtype}")
    if scale.shape != (groups, n):
        raise ArgumentError(f"scale: expected shape ({groups}, {n}), got {scale.shape}")
    if per_token_scale.shape != (groups, m):
        raise ArgumentError(f"per_token_scale: expected shape ({groups}, {m}), got {per_token_scale.shape}")
    _check_float("scale", scale)
    _check_float("per_token_scale", per_token_scale)
    out = np.zeros((groups, m, n), dtype=np.float32)
    start = 0
    for g in range(groups):
        end = int(group_list[g])
        if not 0 <= end <= k:
            raise ArgumentError(f"group_list: expected values in [0, k={k}], got group_list[{g}] = {end}")
        acc = np.zeros((m, n), np.float32) if end <= start else _int8_dot_float32(a[:, start:end], b[start:end])
        out[g] = _dequant(acc, scale[g], per_token_scale[g])
        start = end
    return out


__all__ += [
    "grouped_matmul_slice_k_per_token_dequant",
    "matmul_add",
    "matmul_gelu",
    "matmul_silu",
    "quant_matmul",
]


# --------------------------------------------------------------------------------------------------
# Issue-4 kernels: basic / batched / grouped matmuls, bias, ReLU
# --------------------------------------------------------------------------------------------------


def matmul_int32(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``golden::ComputeMatmul`` with ``ElementGolden = int32_t``: the exact int32 product of int8 ``a [m, k]``
    and ``b [k, n]`` (wrapping like C++ int32), for the bit-exact int8 paths."""
    a = _as_array("a", a, 2)
    b = _as_array("b", b, 2)
    _int8_operands(a, b)
    return _int8_dot_int32(a, b)


def _product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """int8 x int8 -> exact int32 (:func:`matmul_int32`); anything else -> float32 (:func:`matmul`)."""
    if a.dtype == np.int8 and b.dtype == np.int8:
        return matmul_int32(a, b)
    return matmul(a, b)


def _out_dtype(a: np.ndarray, b: np.ndarray):
    return np.int32 if a.dtype == np.int8 and b.dtype == np.int8 else np.float32


def batched_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``golden::ComputeBatchedMatmul`` (example 01): ``out[i] = a[i] @ b[i]`` for ``a [B, m, k]``,
    ``b [B, k, n]``; float32 (int32, exact, for int8 operands) ``[B, m, n]``."""
    a = _as_array("a", a, 3)
    b = _as_array("b", b, 3)
    if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise ArgumentError(f"b: expected shape ({a.shape[0]}, {a.shape[2]}, n) to match a {a.shape}, got {b.shape}")
    out = np.zeros((a.shape[0], a.shape[1], b.shape[2]), _out_dtype(a, b))
    for i in range(a.shape[0]):
        out[i] = _product(a[i], b[i])
    return out


def _group_sizes_from_list(group_list: np.ndarray, total: int, segmented: bool, axis: str) -> list[int]:
    gl = _as_array("group_list", group_list, 1)
    if gl.dtype.kind not in "iu":
        raise ArgumentError(f"group_list: expected an integer dtype, got {gl.dtype}")
    vals = [int(v) for v in gl]
    sizes = vals if segmented else [v - (vals[i - 1] if i else 0) for i, v in enumerate(vals)]
    if any(s < 0 for s in sizes) or sum(sizes) > total:
        what = "group sizes" if segmented else "prefix sums"
        raise ArgumentError(f"group_list: expected non-negative {what} covering at most {axis} = {total}, got {vals}")
    return sizes


def grouped_matmul_slice_m(a: np.ndarray, b: np.ndarray, group_list: np.ndarray, *, segmented: bool = False) -> np.ndarray:
    """``golden::ComputeGroupedMatmul`` as example 02 calls it: ``a [m, k]`` split along M by ``group_list``
    (inclusive prefix sums, or group sizes when ``segmented``), ``b [G, k, n]`` (logical per-group matrices);
    ``out[rows_g] = a[rows_g] @ b[g]``. float32 (int32 for int8) ``[m, n]``; rows past the last group are 0."""
    a = _as_array("a", a, 2)
    b = _as_array("b", b, 3)
    m, k = a.shape
    if b.shape[1] != k:
        raise ArgumentError(f"b: expected shape (G, {k}, n) to match a {a.shape}, got {b.shape}")
    sizes = _group_sizes_from_list(group_list, m, segmented, "m")
    if len(sizes) != b.shape[0]:
        raise ArgumentError(f"group_list: expected {b.shape[0]} entries (one per group of b), got {len(sizes)}")
    out = np.zeros((m, b.shape[2]), _out_dtype(a, b))
    start = 0
    for g, size in enumerate(sizes):
        if size:
            out[start:start + size] = _product(a[start:start + size], b[g])
        start += size
    return out


def grouped_matmul_slice_k(a: np.ndarray, b: np.ndarray, group_list: np.ndarray) -> np.ndarray:
    """``golden::ComputeGroupedMatmul`` as example 05 calls it: ``a [m, k]`` and ``b [k, n]`` (logical shapes)
    split along K by ``group_list`` (inclusive prefix sums); ``out[g] = a[:, ks_g] @ b[ks_g, :]``, 0 for an
    empty slice. float32 (int32 for int8) ``[G, m, n]``."""
    a = _as_array("a", a, 2)
    b = _as_array("b", b, 2)
    m, k = a.shape
    if b.shape[0] != k:
        raise ArgumentError(f"b: expected shape ({k}, n) to match a {a.shape}, got {b.shape}")
    sizes = _group_sizes_from_list(group_list, k, False, "k")
    out = np.zeros((len(sizes), m, b.shape[1]), _out_dtype(a, b))
    start = 0
    for g, size in enumerate(sizes):
        if size:
            out[g] = _product(a[:, start:start + size], b[start:start + size])
        start += size
    return out


def grouped_matmul(a_list, b_list) -> list:
    """``golden::ComputeGroupedMatmul`` (example 08): ``[a_g @ b_g for each group]`` for lists of logical
    ``[m_g, k_g]`` and ``[k_g, n_g]`` matrices; float32 (int32 for int8) results (zeros when ``k_g == 0``)."""
    if len(a_list) != len(b_list):
        raise ArgumentError(f"b_list: expected {len(a_list)} matrices (one per a), got {len(b_list)}")
    out = []
    for g, (a, b) in enumerate(zip(a_list, b_list)):
        a = _as_array(f"a_list[{g}]", a, 2)
        b = _as_array(f"b_list[{g}]", b, 2)
        if a.shape[1] != b.shape[0]:
            raise ArgumentError(f"b_list[{g}]: expected shape ({a.shape[1]}, n) to match {a.shape}, got {b.shape}")
        out.append(_product(a, b))
    return out


def matmul_bias(a: np.ndarray, b: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """``golden::ComputeMatmulBias`` (example 20): the accumulator starts at ``float(bias[j])`` and adds the
    products; here ``bias + a @ b`` in float64 rounded once to float32 (same deviation as :func:`matmul`).
    int8 operands with an int32 bias give the exact int32 result (wrapping)."""
    a = _as_array("a", a, 2)
    b = _as_array("b", b, 2)
    bias = _as_array("bias", bias, 1)
    if bias.shape != (b.shape[1],):
        raise ArgumentError(f"bias: expected shape ({b.shape[1]},) (one per column), got {bias.shape}")
    if a.dtype == np.int8 and b.dtype == np.int8:
        acc = matmul_int32(a, b).astype(np.int64) + bias.astype(np.int64)[None, :]
        return acc.astype(np.int32)
    if a.shape[1] != b.shape[0]:
        raise ArgumentError(f"b: expected shape ({a.shape[1]}, n) to match a {a.shape}, got {b.shape}")
    _check_float("bias", bias)
    acc = np.matmul(a.astype(np.float64), b.astype(np.float64)) + bias.astype(np.float64)[None, :]
    return acc.astype(np.float32)


def matmul_relu(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``golden::ComputeMatmulElemWiseRelu`` (example 26): ``max(float(a @ b), 0)``, float32 ``[m, n]``
    (int32 for int8 operands)."""
    acc = _product(_as_array("a", a, 2), _as_array("b", b, 2))
    return np.maximum(acc, acc.dtype.type(0))


__all__ += [
    "batched_matmul",
    "grouped_matmul",
    "grouped_matmul_slice_k",
    "grouped_matmul_slice_m",
    "matmul_bias",
    "matmul_int32",
    "matmul_relu",
]


# --------------------------------------------------------------------------------------------------
# pypto-gym transpose_quant_batch_matmul (MXFP8 batch matmul, seed 004)


def transpose_quant_batch_matmul(x1: np.ndarray, x2: np.ndarray, x1_scale: np.ndarray, x2_scale: np.ndarray, *,
                                 perm_x2=(0, 1, 2), out_dtype="bfloat16") -> np.ndarray:
    """pypto-gym ``compute_golden_result`` of ``transpose_quant_batch_matmul`` (pto-mx-semantics 7), in float32.

    ``x1`` fp8 ``[M, B, K]``; ``x2`` fp8 ``[B, K, N]`` (``perm_x2=(0, 1, 2)``) or ``[B, N, K]`` (``(0, 2, 1)``);
    ``x1_scale`` E8M0 ``[M, B, K//64, 2]``; ``x2_scale`` ``[B, K//64, N, 2]`` or ``[B, N, K//64, 2]`` (uint8 bytes
    or ``float8_e8m0fnu``). Each scale covers 32 consecutive k (the trailing pair splits a 64-block)::

        x1h[m, b, k] = float32(x1[m, b, k]) * 2**(x1_scale[m, b, k // 64, (k // 32) % 2] - 127)
        x2h[b, k, n] = float32(x2[b](k, n)) * 2**(x2_scale[b](k // 64, n, (k // 32) % 2) - 127)
        out[m, b, n] = cast(sum_k x1h[m, b, k] * x2h[b, k, n])          # float32 matmul per batch

    with E8M0 0xFF = NaN and ``cast`` round-to-nearest-even to ``out_dtype`` (``"bfloat16"`` or ``"float16"``).
    Returns ``[M, B, N]`` of ``out_dtype``.
    """
    import ml_dtypes

    x1 = _as_array("x1", x1, 3)
    x2 = _as_array("x2", x2, 3)
    x1_scale = _as_array("x1_scale", x1_scale, 4)
    x2_scale = _as_array("x2_scale", x2_scale, 4)
    out_np = {"bfloat16": ml_dtypes.bfloat16, "float16": np.float16}.get(str(out_dtype))
    if out_np is None:
        raise ArgumentError(f"out_dtype: expected 'bfloat16' or 'float16', got {out_dtype!r}")
    perm_x2 = tuple(perm_x2)
    if perm_x2 not in ((0, 1, 2), (0, 2, 1)):
        raise ArgumentError(f"perm_x2: expected (0, 1, 2) or (0, 2, 1), got {perm_x2}")
    m, batch, k = x1.shape
    if k % 64:
        raise ArgumentError(f"x1: K must be a multiple of 64, got {k}")

    def scales(s: np.ndarray) -> np.ndarray:
        if s.dtype == np.uint8:
            s = s.view(ml_dtypes.float8_e8m0fnu)
        if s.dtype != np.dtype(ml_dtypes.float8_e8m0fnu):
            raise ArgumentError(f"scales: expected uint8 E8M0 bytes or float8_e8m0fnu, got {s.dtype}")
        return s.astype(np.float32)  # 0x00 -> 2**-127, 0xFF -> NaN

    s1 = scales(x1_scale).reshape(m, batch, k // 32)  # (k // 64, (k // 32) % 2) flattens to k // 32
    x2_kn = x2 if perm_x2 == (0, 1, 2) else x2.transpose(0, 2, 1)  # [B, K, N]
    n = x2_kn.shape[2]
    if perm_x2 == (0, 1, 2):
        s2 = scales(x2_scale).transpose(0, 1, 3, 2).reshape(batch, k // 32, n)  # [B, K/64, 2, N]
    else:
        s2 = scales(x2_scale).reshape(batch, n, k // 32).transpose(0, 2, 1)
    out = np.empty((m, batch, n), dtype=out_np)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        for b in range(batch):
            a = x1[:, b, :].astype(np.float32) * np.repeat(s1[:, b, :], 32, axis=1)
            w = x2_kn[b].astype(np.float32) * np.repeat(s2[b], 32, axis=0)
            out[:, b, :] = (a @ w).astype(out_np)
    return out


__all__.append("transpose_quant_batch_matmul")


# --------------------------------------------------------------------------------------------------
# Memory the goldens need (the examples' memory budget)


def _float_dot_bytes(m: int, n: int, k: int) -> int:
    # matmul(): float64 copies of both operands, the float64 product and its float32 rounding
    return 8 * (m * k + k * n + m * n) + 4 * m * n


def _int8_dot_bytes(m: int, n: int, k: int) -> int:
    # _int8_dot_*: float32 A, one float32 chunk of B, the chunk product, and (K > one chunk) the int32 part and
    # accumulator with the final float32 conversion
    chunked = 3 * 4 * m * n if k > _K_CHUNK else 0
    return 4 * m * k + 4 * min(k, _K_CHUNK) * n + 4 * m * n + chunked


def _dot_bytes(m: int, n: int, k: int, int8: bool) -> int:
    return _int8_dot_bytes(m, n, k) if int8 else _float_dot_bytes(m, n, k)


def peak_bytes(name: str, *, m: int, n: int, k: int, batch: int = 1, groups: int = 1, int8: bool = False) -> int:
    """Bytes the golden ``name`` (a function of this module) allocates at most for ``[m, k] x [k, n]`` problems
    (``batch`` of them, or ``groups`` groups; ``int8`` operands take the exact integer path): its result and
    the temporaries alive with it, an estimate from the code above (numpy's own scratch not counted). Used by
    the examples to check their memory budget before generating anything."""
    m, n, k, batch, groups = (int(v) for v in (m, n, k, batch, groups))
    mn = 4 * m * n  # one float32 / int32 [m, n]
    if name in ("matmul", "matmul_int32"):
        return _dot_bytes(m, n, k, int8 or name == "matmul_int32")
    if name == "matmul_relu":
        return _dot_bytes(m, n, k, int8) + mn
    if name == "matmul_add":
        return _float_dot_bytes(m, n, k) + 2 * mn
    if name in ("matmul_gelu", "matmul_silu"):
        return _float_dot_bytes(m, n, k) + 4 * mn
    if name == "matmul_bias":
        return _dot_bytes(m, n, k, int8) + 4 * mn
    if name == "quant_matmul":
        return _int8_dot_bytes(m, n, k) + mn
    if name == "batched_matmul":
        return batch * mn + _dot_bytes(m, n, k, int8)
    if name == "grouped_matmul_slice_m":
        return mn + _dot_bytes(m, n, k, int8)
    if name == "grouped_matmul_slice_k":
        return groups * mn + _dot_bytes(m, n, k, int8)
    if name == "grouped_matmul_slice_m_per_token_dequant":
        return mn + _int8_dot_bytes(m, n, k)
    if name == "grouped_matmul_slice_k_per_token_dequant":
        return groups * mn + _int8_dot_bytes(m, n, k) + mn
    if name == "sparse_matmul":  # the expanded B in int64, A in int64, the int64 product, then int32
        return 8 * k * n + 8 * m * k + 2 * 8 * m * n
    if name == "transpose_quant_batch_matmul":
        # per batch: A and W in float32 with their repeated scales, the float32 product; the scales in float32
        return 2 * batch * m * n + 8 * (m * k + k * n) + mn + 4 * batch * (m + n) * (k // 32)
    raise ArgumentError(f"name: expected a golden of this module, got {name!r}")


def sparse_matmul(a: np.ndarray, dense: np.ndarray, index: np.ndarray) -> np.ndarray:
    """The golden of example 41 (``sparse_gen_data.py``'s ``gen_sparse_golden``): int32 C [m, n] of int8 ``a``
    [m, k] and the 4:2-compressed B, ``dense`` [n, k/2] int8 (one row per column of B) with its ``index`` [n, k/8]
    uint8 in row order (ND, before the NZ layout). Each 2-bit index (low bits first) places its dense value in
    its group of four along K: the first value of a group at the index, the second one past it; then the exact
    integer product, wrapped to int32 like C++."""
    a = _as_array("a", a, 2)
    dense = _as_array("dense", dense, 2)
    index = _as_array("index", index, 2)
    _check_int8("a", a)
    _check_int8("dense", dense)
    if index.dtype != np.uint8:
        raise ArgumentError(f"index: expected uint8, got {index.dtype}")
    m, k = a.shape
    n = dense.shape[0]
    if dense.shape != (n, k // 2) or index.shape != (n, k // 8) or k % 8:
        raise ArgumentError(f"dense/index: expected [n, k/2] and [n, k/8] for k = {k} (a multiple of 8), got "
                            f"{dense.shape} and {index.shape}")
    bits = np.unpackbits(index[..., None], axis=-1, bitorder="little").reshape(n, k // 8, 4, 2)
    code = (bits[..., 0] + 2 * bits[..., 1]).reshape(n, k // 2).astype(np.int64)
    if (code > 2).any():
        raise ArgumentError("index: an index of 3 names no element (valid indices are 0, 1, 2)")
    slot = np.arange(k // 2)
    column = 4 * (slot // 2) + slot % 2 + code           # where each dense value sits along K
    expanded = np.zeros((n, k), np.int64)
    np.add.at(expanded, (np.repeat(np.arange(n), k // 2), column.ravel()), dense.astype(np.int64).ravel())
    c = a.astype(np.int64) @ expanded.T
    return c.astype(np.int32)


__all__.append("peak_bytes")
__all__.append("sparse_matmul")
