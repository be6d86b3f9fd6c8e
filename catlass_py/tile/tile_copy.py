"""Tile copy bundles: which copy implements each data movement of a BlockMmad or BlockEpilogue.

Counterparts: CATLASS ``Gemm::Tile::TileCopy<ArchTag, AType, BType, CType, BiasType>``
(``gemm/tile/tile_copy.hpp``) and ``Epilogue::Tile::TileCopy<ArchTag, CType, [X, Y,] DType>``
(``epilogue/tile/tile_copy.hpp``). A user customises a bundle by replacing members, as example 10 does for
``copy_gm_to_l1_a``: ``TileCopy(arch, a, b, c).replace(copy_gm_to_l1_a=CopyGmToL1GMMPTD(arch, a))``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from catlass_py.arch.spec import ArchSpec, get_arch
from catlass_py.errors import ConfigError
from catlass_py.gemm.gemm_type import GemmType
from catlass_py.gemm.helper import element_accumulator, l1_type
from catlass_py.numerics.dtypes import DType
from catlass_py.tile.copy_bias import CopyGmToL1Bias, CopyL1ToBT, l1_bias_types
from catlass_py.tile.copy_gm_to_l1 import CopyGmToL1
from catlass_py.tile.copy_gm_ub import CopyGm2Ub, CopyUb2Gm
from catlass_py.tile.copy_l0c_to_gm import CopyL0CToGm
from catlass_py.tile.copy_l1_to_l0 import CopyL1ToL0A, CopyL1ToL0B


class _Bundle:
    def replace(self, **members):
        """A copy of the bundle with some members swapped (the C++ 'derive and override' idiom)."""
        unknown = set(members) - {f.name for f in dataclasses.fields(self)}
        if unknown:
            raise ConfigError(f"{type(self).__name__}.replace: unknown member(s) {sorted(unknown)}")
        return dataclasses.replace(self, **members)


@dataclass(frozen=True)
class TileCopy(_Bundle):
    """CATLASS ``Gemm::Tile::TileCopy<ArchTag, AType, BType, CType, BiasType=void>``.

    Members: ``copy_gm_to_l1_a``, ``copy_gm_to_l1_b``, ``copy_l1_to_l0a``, ``copy_l1_to_l0b``,
    ``copy_l0c_to_gm`` (plus ``copy_gm_to_l1_bias`` / ``copy_l1_to_bt`` when a bias type is given).
    """

    arch: ArchSpec
    a_type: GemmType
    b_type: GemmType
    c_type: GemmType
    bias_type: GemmType | None = None
    copy_gm_to_l1_a: Any = None
    copy_gm_to_l1_b: Any = None
    copy_l1_to_l0a: Any = None
    copy_l1_to_l0b: Any = None
    copy_l0c_to_gm: Any = None
    copy_gm_to_l1_bias: Any = None
    copy_l1_to_bt: Any = None

    def __post_init__(self):
        arch = get_arch(self.arch)
        object.__setattr__(self, "arch", arch)
        defaults = {
            "copy_gm_to_l1_a": lambda: CopyGmToL1(arch, self.a_type),
            "copy_gm_to_l1_b": lambda: CopyGmToL1(arch, self.b_type),
            "copy_l1_to_l0a": lambda: CopyL1ToL0A(arch, l1_type(self.a_type)),
            "copy_l1_to_l0b": lambda: CopyL1ToL0B(arch, l1_type(self.b_type)),
            "copy_l0c_to_gm": lambda: CopyL0CToGm(arch, self.element_accumulator, self.c_type),
        }
        if self.bias_type is not None:
            # CATLASS BiasTypeSelector: GM vector -> L1 vector -> BT vector of the accumulator type.
            _, l1_bias, bt_bias = l1_bias_types(self.bias_type, self.element_accumulator)
            defaults["copy_gm_to_l1_bias"] = lambda: CopyGmToL1Bias(arch, self.bias_type, l1_bias)
            defaults["copy_l1_to_bt"] = lambda: CopyL1ToBT(arch, l1_bias, bt_bias)
        for name, make in defaults.items():
            if getattr(self, name) is None:
                object.__setattr__(self, name, make())

    @property
    def element_a(self) -> DType:
        return self.a_type.element

    @property
    def element_b(self) -> DType:
        return self.b_type.element

    @property
    def element_accumulator(self) -> DType:
        """CATLASS ``ElementAccumulatorSelector<ElementA, ElementB>``."""
        return element_accumulator(self.a_type.element, self.b_type.element, get_arch(self.arch))


@dataclass(frozen=True)
class ReluTileCopy(TileCopy):
    """CATLASS ``Gemm::Tile::ReluTileCopy<ArchTag, AType, BType, CType, BiasType>``: :class:`TileCopy` whose
    ``copy_l0c_to_gm`` is the fixpipe store with ReLU enabled (``CopyL0CToGm<..., NO_QUANT, true>``)."""

    def __post_init__(self):
        if self.copy_l0c_to_gm is None:
            arch = get_arch(self.arch)
            object.__setattr__(self, "copy_l0c_to_gm", CopyL0CToGm(
                arch, element_accumulator(self.a_type.element, self.b_type.element, arch), self.c_type,
                relu_enable=True))
        super().__post_init__()


@dataclass(frozen=True)
class EpilogueTileCopy(_Bundle):
    """CATLASS ``Epilogue::Tile::TileCopy<ArchTag, CType, [XType, [YType,]] DType>``: GM<->UB copies of a
    BlockEpilogue (``copy_gm_to_ub_c``, ``copy_gm_to_ub_x``, ``copy_gm_to_ub_y``, ``copy_ub_to_gm_d``).
    The per-token-dequant epilogue reads its per-channel scale as X and its per-token scale as Y."""

    arch: ArchSpec
    c_type: GemmType
    x_type: GemmType | None = None
    y_type: GemmType | None = None
    d_type: GemmType | None = None
    copy_gm_to_ub_c: Any = None
    copy_gm_to_ub_x: Any = None
    copy_gm_to_ub_y: Any = None
    copy_ub_to_gm_d: Any = None

    def __post_init__(self):
        arch = get_arch(self.arch)
        object.__setattr__(self, "arch", arch)
        if self.d_type is None:
            raise ConfigError("EpilogueTileCopy: d_type is required")
        if self.copy_gm_to_ub_c is None:
            object.__setattr__(self, "copy_gm_to_ub_c", CopyGm2Ub(arch, self.c_type))
        if self.x_type is not None and self.copy_gm_to_ub_x is None:
            object.__setattr__(self, "copy_gm_to_ub_x", CopyGm2Ub(arch, self.x_type))
        if self.y_type is not None and self.copy_gm_to_ub_y is None:
            object.__setattr__(self, "copy_gm_to_ub_y", CopyGm2Ub(arch, self.y_type))
        if self.copy_ub_to_gm_d is None:
            object.__setattr__(self, "copy_ub_to_gm_d", CopyUb2Gm(arch, self.d_type))
