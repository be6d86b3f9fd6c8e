"""What every assembled BlockMmad shares (:class:`BlockMmadSpec`, the base of each implementation): operand
types, tile shapes, the static checks, the L1/L0 layouts and the budget helpers. A new block policy subclasses it
(see docs/extending.md); its per-core object builds on :mod:`catlass_py.gemm.block.block_mmad_instance`."""

from __future__ import annotations

from catlass_py.arch.context import EVENT_ID_COUNT as EVENT_IDS
from catlass_py.errors import ConfigError
from catlass_py.gemm.coord import GemmShape
from catlass_py.gemm.gemm_type import GemmType
from catlass_py.gemm.helper import (
    check_tile_shape_alignment,
    element_accumulator,
    l0a_layout,
    l0b_layout,
    l1_align,
    l1_layout_for,
)
from catlass_py.layout import RowMajor
from catlass_py.tile.mmad import TileMmad
from catlass_py.tile.tile_copy import TileCopy


class BlockMmadSpec:
    """Assembled BlockMmad: fields mirror the C++ ``using``/``static constexpr`` members."""

    name = "BlockMmad"

    def __init__(self, policy, l1_tile_shape, l0_tile_shape, a_type: GemmType, b_type: GemmType, c_type: GemmType,
                 bias_type, tile_copy, tile_mmad):
        self.policy = policy
        self.arch = policy.arch
        what = self.describe_short(policy)
        self.l1_tile_shape = GemmShape(*l1_tile_shape).check(f"{what}: L1TileShape")
        self.l0_tile_shape = GemmShape(*l0_tile_shape).check(f"{what}: L0TileShape")
        for name, t in (("AType", a_type), ("BType", b_type), ("CType", c_type)):
            if not isinstance(t, GemmType):
                raise ConfigError(f"{what}: {name} must be a GemmType, got {t!r}")
        self.a_type, self.b_type, self.c_type, self.bias_type = a_type, b_type, c_type, bias_type
        self.element_a, self.element_b, self.element_c = a_type.element, b_type.element, c_type.element
        self.element_accumulator = element_accumulator(self.element_a, self.element_b, self.arch)
        if tile_copy is None:
            tile_copy = TileCopy(self.arch, a_type, b_type, c_type, bias_type)
        if (tile_copy.a_type, tile_copy.b_type, tile_copy.c_type) != (a_type, b_type, c_type):
            raise ConfigError(f"{what}: the TileCopy bundle was built for other operand types: {tile_copy.a_type}, "
                              f"{tile_copy.b_type}, {tile_copy.c_type}")
        self.tile_copy = tile_copy
        self.tile_mmad = tile_mmad if tile_mmad is not None else TileMmad(self.arch, a_type, b_type, bias_type)
        if c_type.layout is not RowMajor:
            raise ConfigError(f"{what}: LayoutC only supports RowMajor, got {c_type.layout.__name__}")
        self.l1_a_align = l1_align(self.element_a, a_type.layout)
        self.l1_b_align = l1_align(self.element_b, b_type.layout)
        self.layout_a_in_l1 = l1_layout_for(a_type.layout)
        self.layout_b_in_l1 = l1_layout_for(b_type.layout)
        self.layout_a_in_l0 = l0a_layout(self.arch)
        self.layout_b_in_l0 = l0b_layout(self.arch)
        l1, l0 = self.l1_tile_shape, self.l0_tile_shape
        if not (l1.m == l0.m and l1.n == l0.n):
            raise ConfigError(
                f"{what}: L1 and L0 tiles must agree on M and N (L0 tiles only split K): L1 {tuple(l1)}, L0 {tuple(l0)}"
            )
        if l0.k > l1.k:
            raise ConfigError(f"{what}: L0TileShape::K ({l0.k}) cannot exceed L1TileShape::K ({l1.k})")
        check_tile_shape_alignment(l1, l0, self.element_a, self.element_b, what)
        self.l1a_tile_size = self.element_a.nbytes(l1.m * l1.k)
        self.l1b_tile_size = self.element_b.nbytes(l1.n * l1.k)
        self.l0a_tile_size = self.element_a.nbytes(l0.m * l0.k)
        self.l0b_tile_size = self.element_b.nbytes(l0.k * l0.n)
        self.l1a_layout = self.layout_a_in_l1.make_layout(self.element_a, l1.m, l1.k)
        self.l1b_layout = self.layout_b_in_l1.make_layout(self.element_b, l1.k, l1.n)
        # Stages are spaced by the tile size, but a tile is stored in whole fractals: if rounding the tile up to
        # fractals makes it larger (fp32 with a dimension that is a multiple of 8 but not 16, say), consecutive
        # stages overlap and results are silently wrong on hardware. CATLASS does not check this.
        l0a_tile_layout = self.layout_a_in_l0.make_layout(self.element_a, l0.m, l0.k)
        l0b_tile_layout = self.layout_b_in_l0.make_layout(self.element_b, l0.k, l0.n)
        for label, layout, element, stage_bytes in (
            ("L1 A", self.l1a_layout, self.element_a, self.l1a_tile_size),
            ("L1 B", self.l1b_layout, self.element_b, self.l1b_tile_size),
            ("L0A", l0a_tile_layout, self.element_a, self.l0a_tile_size),
            ("L0B", l0b_tile_layout, self.element_b, self.l0b_tile_size),
        ):
            spans = element.nbytes(layout.capacity)
            if spans > stage_bytes:
                raise ConfigError(
                    f"{what}: the {label} tile is stored as {layout!r}, which spans {spans} bytes in whole fractals, "
                    f"but stages are {stage_bytes} bytes apart, so consecutive stages would overlap; make the tile "
                    f"dimensions multiples of the fractal sides"
                )

    # -- helpers for subclasses --------------------------------------------------------------------
    @staticmethod
    def describe_short(policy) -> str:
        return f"BlockMmad<{type(policy).__name__}>"

    def _budget(self, what: str, label: str, need: int, have: int, formula: str) -> None:
        if need > have:
            raise ConfigError(f"{what}: {label} needs {need} bytes but {self.arch.name} has {have} ({formula})")

    def _check_l0_stages(self, what: str, stages: int) -> None:
        """L0 budgets of the blocks with ``STAGES`` L0A/L0B stages and one L0C tile, and the stage spacing:
        each stage owns ``L0A_SIZE / STAGES`` (``L0A_PINGPONG_BUF_SIZE``), not just one tile."""
        arch, l0 = self.arch, self.l0_tile_shape
        self._budget(what, "L0A tiles", self.l0a_tile_size * stages, arch.l0a_size,
                     "L0A_TILE_SIZE * STAGES <= L0A_SIZE")
        self._budget(what, "L0B tiles", self.l0b_tile_size * stages, arch.l0b_size,
                     "L0B_TILE_SIZE * STAGES <= L0B_SIZE")
        self.l0c_tile_size = self.element_accumulator.nbytes(l0.m * l0.n)
        self._budget(what, "L0C tile", self.l0c_tile_size, arch.l0c_size, "L0C_TILE_SIZE <= L0C_SIZE")
        self.l0a_pingpong_size = arch.l0a_size // stages
        self.l0b_pingpong_size = arch.l0b_size // stages

    def _events(self, what: str, label: str, used: int) -> None:
        if used > EVENT_IDS:
            raise ConfigError(f"{what}: {label} needs {used} event ids but the hardware has {EVENT_IDS} per event pair")

    def __repr__(self) -> str:
        return (f"{self.name}({self.policy!r}, L1 {tuple(self.l1_tile_shape)}, L0 {tuple(self.l0_tile_shape)}, "
                f"A {self.a_type}, B {self.b_type}, C {self.c_type})")


__all__ = ["BlockMmadSpec"]
