"""Type selectors and static checks shared by the block layer (CATLASS ``include/catlass/gemm/helper.hpp``)."""

from __future__ import annotations

from typing import NamedTuple

from catlass_py.errors import ConfigError
from catlass_py.gemm.gemm_type import GemmType
from catlass_py.layout import (
    ColumnMajor,
    PaddingColumnMajor,
    PaddingRowMajor,
    RowMajor,
    VectorLayout,
    nZ,
    zN,
    zZ,
)
from catlass_py.numerics import dtypes as dt

_ACCUMULATOR = {
    ("float16", "float16"): dt.FLOAT32,
    ("bfloat16", "bfloat16"): dt.FLOAT32,
    ("float32", "float32"): dt.FLOAT32,
    ("int8", "int8"): dt.INT32,
    ("int4", "int4"): dt.INT32,
    ("int32", "int32"): dt.INT32,
}
_ACCUMULATOR_950 = {
    (a, b): dt.FLOAT32
    for a in ("float8_e4m3fn", "float8_e5m2", "hifloat8", "float4_e2m1fn", "float4_e1m2")
    for b in ("float8_e4m3fn", "float8_e5m2", "hifloat8", "float4_e2m1fn", "float4_e1m2")
}


def element_accumulator(element_a, element_b, arch=None) -> dt.DType:
    """CATLASS ``ElementAccumulatorSelector``: fp16/bf16/fp32 -> fp32, int8/int4/int32 -> int32 (950 adds
    fp8/fp4/HiF8 -> fp32). Raises :class:`ConfigError` for any other pair."""
    a, b = dt.get_dtype(element_a).name, dt.get_dtype(element_b).name
    acc = _ACCUMULATOR.get((a, b))
    if acc is None and arch is not None and arch.arch_code == 3510:
        acc = _ACCUMULATOR_950.get((a, b))
    if acc is None:
        raise ConfigError(f"no accumulator type for A={a}, B={b} (ElementAccumulatorSelector)")
    return acc


class L1Align(NamedTuple):
    """CATLASS ``L1AlignHelper<Element, Layout>``: rounding of a block's m, k, n in L1."""

    m_aligned: int
    k_aligned: int
    n_aligned: int


def l1_align(element, layout) -> L1Align:
    """Row-major-like layouts keep 16 rows per fractal; column-major-like ones C0."""
    c0 = dt.get_dtype(element).c0
    if layout in (RowMajor, PaddingRowMajor, zN):
        return L1Align(16, c0, c0)
    if layout in (ColumnMajor, PaddingColumnMajor, nZ):
        return L1Align(c0, c0, 16)
    raise ConfigError(f"no L1 alignment rule for layout {layout.__name__}")


def l1_layout_for(layout) -> type:
    """CATLASS ``L1ATypeSelector``/``L1BTypeSelector``: the L1 layout an operand is copied into."""
    if layout in (RowMajor, PaddingRowMajor, zN):
        return zN
    if layout in (ColumnMajor, PaddingColumnMajor, nZ):
        return nZ
    if layout is VectorLayout:
        return VectorLayout
    raise ConfigError(f"operand layout {layout.__name__} has no L1 layout")


def l1_type(gm_type: GemmType) -> GemmType:
    """The operand's type in L1 (CATLASS ``L1ATypeSelector<AType>::L1AType``)."""
    return GemmType(gm_type.element, l1_layout_for(gm_type.layout), "L1")


def l0a_layout(arch) -> type:
    """CATLASS ``L0ALayoutSelector``: zZ on Atlas A2, zN on Ascend 950."""
    return zN if arch.arch_code == 3510 else zZ


def l0b_layout(arch) -> type:
    """L0B holds nZ fractals on both generations."""
    return nZ


def check_tile_shape_alignment(l1, l0, element_a, element_b, what: str) -> None:
    """CATLASS ``TileShapeAlignChecker``: every L1/L0 tile extent times the element bits is a multiple of
    256 bits (32 bytes)."""
    ba, bb = dt.get_dtype(element_a).bits, dt.get_dtype(element_b).bits
    items = [
        ("L1.M", l1.m, ba), ("L0.M", l0.m, ba), ("L1.K (A)", l1.k, ba), ("L1.K (B)", l1.k, bb),
        ("L0.K (A)", l0.k, ba), ("L0.K (B)", l0.k, bb), ("L1.N", l1.n, bb), ("L0.N", l0.n, bb),
    ]
    bad = [f"{n}={v} ({v * b} bits)" for n, v, b in items if (v * b) % 256]
    if bad:
        raise ConfigError(f"{what}: tile shapes must be 32-byte aligned (TileShapeAlignChecker): " + ", ".join(bad))


__all__ = [
    "L1Align",
    "check_tile_shape_alignment",
    "element_accumulator",
    "l0a_layout",
    "l0b_layout",
    "l1_align",
    "l1_layout_for",
    "l1_type",

]
