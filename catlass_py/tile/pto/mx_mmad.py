"""The arithmetic of the Ascend 950 cube: operand decoding, the dtype tables and the MX (scaled) product.

Counterpart of the computation inside Ascend C ``Mmad`` / ``MmadMx`` and PTO ``TMATMUL`` / ``TMATMUL_MX``
(pto-mx-semantics 4.2, 4.4, 4.5)::

    C[i, j] = init[i, j] + sum_k (A[i, k] * 2**(SA[i, k // 32] - 127)) * (B[k, j] * 2**(SB[k // 32, j] - 127))

with E8M0 0xFF a NaN scale (the spec; the PTO CPU simulator decodes it as 2**128, which this model does not
follow). Operands are decoded exactly to float32 through 256-entry (or 16-entry, fp4) tables, scaled by exact
powers of two, and multiplied as a float32 BLAS product; int8 x int8 accumulates exactly in int32 (wrapping).
The cube's internal summation order is undocumented, so float results are compared with a tolerance.

MX scale buffers (PTO ``TileLeftScale`` / ``TileRightScale``; Ascend C ``LoadData2DMX``): SA is an M x K/32
matrix in CATLASS ``zZ`` with 16 x 2 boxes, SB a K/32 x N matrix in ``nN`` with 2 x 16 boxes::

    SA byte(i, g) = ((i // 16) * (KG / 2) + g // 2) * 32 + (i % 16) * 2 + g % 2
    SB byte(g, j) = ((j // 16) * (KG / 2) + g // 2) * 32 + (j % 16) * 2 + g % 2      (KG = K / 32)
"""

from __future__ import annotations

import functools

import ml_dtypes
import numpy as np

from catlass_py.errors import ConfigError
from catlass_py.layout import nN, zZ
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.numerics.e1m2 import e1m2_values
from catlass_py.numerics.hif8 import hif8_values
from catlass_py.numerics.mx import e8m0_decode
from catlass_py.tile.mmad import matmul_exact_int

MX_GROUP = 32  # elements of K sharing one E8M0 scale
MX_K_ALIGN = 64  # K must cover whole pairs of 32-groups
FP8 = ("float8_e4m3fn", "float8_e5m2")
FP4 = ("float4_e2m1fn", "float4_e1m2")

#: Ascend 950 (Atlas 350) non-scaled Mmad: (A, B) -> C (MmadBitMode table 5, rows "不含缩放")
MMAD_950 = {("int8", "int8"): "int32", ("float16", "float16"): "float32", ("float32", "float32"): "float32",
            ("bfloat16", "bfloat16"): "float32", ("hifloat8", "hifloat8"): "float32",
            **{(a, b): "float32" for a in FP8 for b in FP8}}
#: Atlas A2/A3 TMATMUL (PTO docs/isa/TMATMUL.md)
MMAD_A2 = {("int8", "int8"): "int32", ("float16", "float16"): "float32", ("float32", "float32"): "float32",
           ("bfloat16", "bfloat16"): "float32"}
#: Ascend 950 scaled Mmad (MmadMx / TMATMUL_MX): fp4 x fp4 and fp8 x fp8 pairs, never mixed
MMAD_MX = {**{(a, b): "float32" for a in FP4 for b in FP4}, **{(a, b): "float32" for a in FP8 for b in FP8}}


def check_combo(a_dtype, b_dtype, c_dtype, *, mx: bool, arch, what: str):
    """Raise :class:`ConfigError` unless (A, B, C) is a supported cube combination; returns the C dtype."""
    a, b, c = get_dtype(a_dtype).name, get_dtype(b_dtype).name, get_dtype(c_dtype).name
    if mx:
        if arch.arch_code < 3510:
            raise ConfigError(f"{what}: the scaled (MX) matmul exists only on Ascend 950, not on {arch.name}")
        table = MMAD_MX
    else:
        table = MMAD_950 if arch.arch_code >= 3510 else MMAD_A2
    want = table.get((a, b))
    if want is None:
        hint = ""
        if not mx and (a, b) in MMAD_MX:
            hint = " (fp4 operands are supported only by the scaled matmul MmadMx / TMATMUL_MX)"
        elif mx and (a, b) in MMAD_950:
            hint = " (this pair is supported only by the non-scaled matmul)"
        pairs = ", ".join(f"{x} x {y}" for x, y in table)
        raise ConfigError(f"{what}: {a} x {b} is not a supported combination on {arch.name}{hint}; supported: {pairs}")
    if c != want:
        raise ConfigError(f"{what}: {a} x {b} accumulates in {want}, but the destination is {c}")
    return want


@functools.lru_cache(maxsize=None)
def _table(name: str) -> np.ndarray:
    """float32 value of every code of a 1-byte (or 4-bit) format."""
    if name in ("float4_e2m1fn",):
        return np.arange(16, dtype=np.uint8).view(ml_dtypes.float4_e2m1fn).astype(np.float32)
    if name == "float4_e1m2":
        return e1m2_values().astype(np.float32)
    if name == "hifloat8":
        return hif8_values().astype(np.float32)
    t = get_dtype(name)
    return np.arange(256, dtype=np.uint8).view(t.numpy).astype(np.float32)


def decode(values: np.ndarray, dtype) -> np.ndarray:
    """Exact float32 values of operand elements (fp8/fp4/HiF8 through tables; fp16/bf16/fp32 by widening)."""
    t = get_dtype(dtype)
    if t.bits <= 8 and t.kind == "float":
        return _table(t.name)[np.asarray(values).view(np.uint8)]
    return np.asarray(values).astype(np.float32)


def scaled(values: np.ndarray, dtype, scales: np.ndarray, axis: int) -> np.ndarray:
    """``decode(values) * 2**(scale - 127)`` with one scale per 32 elements along ``axis`` (1 for A's K, 0 for
    B's K); NaN where the scale byte is 0xFF."""
    v = decode(values, dtype)
    f = e8m0_decode(scales)
    k = v.shape[axis]
    f = np.repeat(f, MX_GROUP, axis=axis)
    f = f[:, :k] if axis == 1 else f[:k, :]
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        return v * f


def product(a: np.ndarray, a_dtype, b: np.ndarray, b_dtype) -> np.ndarray:
    """A @ B of the non-scaled cube: exact int32 for int8, float32 BLAS otherwise."""
    if get_dtype(a_dtype).name == "int8":
        return matmul_exact_int(np.asarray(a), np.asarray(b))
    with np.errstate(over="ignore", invalid="ignore"):
        return decode(a, a_dtype) @ decode(b, b_dtype)


def mx_product(a, a_dtype, sa, b, b_dtype, sb) -> np.ndarray:
    """The scaled product ``(SA (x) A) @ (SB (x) B)`` in float32 (``sa``: m x ceil(k/32), ``sb``: ceil(k/32) x n)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return scaled(a, a_dtype, sa, 1) @ scaled(b, b_dtype, sb, 0)


def accumulate(start, acc: np.ndarray, c_dtype) -> np.ndarray:
    """``start + acc`` in the accumulator type (int32 wraps like the cube)."""
    t = get_dtype(c_dtype).numpy
    if start is None:
        return acc.astype(t, copy=False)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.broadcast_to(start, acc.shape).astype(t, copy=False) + acc.astype(t, copy=False)


def scale_a_layout(m: int, kg: int):
    """CATLASS layout of the left scale matrix SA (m x kg) in L0A_MX: ``zZ`` with 16 x 2 boxes."""
    return zZ.compact(m, kg, 16, 2)


def scale_b_layout(kg: int, n: int):
    """CATLASS layout of the right scale matrix SB (kg x n) in L0B_MX: ``nN`` with 2 x 16 boxes."""
    return nN.compact(kg, n, 2, 16)


__all__ = ["FP4", "FP8", "MMAD_950", "MMAD_A2", "MMAD_MX", "MX_GROUP", "MX_K_ALIGN", "accumulate", "check_combo",
           "decode", "mx_product", "product", "scale_a_layout", "scale_b_layout", "scaled"]
