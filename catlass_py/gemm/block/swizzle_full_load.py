"""``GemmIdentityBlockSwizzleL1FullLoad<SwizzleOffset, SwizzleDirection>`` (CATLASS ``gemm/block/block_swizzle.hpp``):
the block scheduler of the full-load-A kernels (example 44).

The ``Lm x Ln`` blocks are cut into one contiguous range per AI core (``GetBlockNum()`` of them, the first
``total % cores`` ranges one block longer) and the loop index ``t`` of core ``t % cores`` maps to the
``t / cores``-th block of that core's range; a range's position is then placed by the identity swizzle
(strips of ``SwizzleOffset`` rows or columns, serpentine). So the consecutive blocks of one core are consecutive
in swizzle order: with ``<1, 0>`` they share a row of blocks, i.e. the same panel of A, which the kernel then keeps
in L1.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.gemm.block.swizzle_splitk import identity_mn
from catlass_py.gemm.coord import GemmCoord, MatrixCoord, ceil_div
from catlass_py.integers import is_int


@dataclass(frozen=True)
class GemmIdentityBlockSwizzleL1FullLoad:
    """CATLASS ``GemmIdentityBlockSwizzleL1FullLoad<SwizzleOffset, SwizzleDirection>`` (see the module). ``update``
    takes the number of AI cores of the launch (CATLASS reads ``AscendC::GetBlockNum()`` on the device)."""

    swizzle_offset: int = 1
    swizzle_direction: int = 0
    problem_shape: GemmCoord = GemmCoord(0, 0, 0)
    tile_mn: MatrixCoord = MatrixCoord(1, 1)
    loops_mn: MatrixCoord = field(default=MatrixCoord(0, 0))
    aic_core_num: int = 1

    def __post_init__(self):
        if not is_int(self.swizzle_offset) or self.swizzle_offset < 1:
            raise ConfigError(f"GemmIdentityBlockSwizzleL1FullLoad: swizzle offset must be an int >= 1, got "
                              f"{self.swizzle_offset!r}")
        if not is_int(self.swizzle_direction) or self.swizzle_direction not in (0, 1):
            raise ConfigError(f"GemmIdentityBlockSwizzleL1FullLoad: swizzle direction must be 0 or 1, got "
                              f"{self.swizzle_direction!r}")

    def update(self, problem_shape, tile_mn, loops_mn=None, *, block_num: int) -> "GemmIdentityBlockSwizzleL1FullLoad":
        """Scheduler for ``problem_shape`` cut into ``tile_mn`` blocks on ``block_num`` AI cores (``Update``)."""
        if not is_int(block_num) or block_num < 1:
            raise ArgumentError(f"block_num: expected the number of AI cores (>= 1), got {block_num!r}")
        shape, tile = GemmCoord(*problem_shape), MatrixCoord(*tile_mn)
        if loops_mn is None:
            loops_mn = MatrixCoord(ceil_div(shape.m, tile.row), ceil_div(shape.n, tile.column))
        return GemmIdentityBlockSwizzleL1FullLoad(self.swizzle_offset, self.swizzle_direction, shape, tile,
                                                  MatrixCoord(*loops_mn), int(block_num))

    def get_core_loops(self) -> int:
        """``Lm * Ln`` (``GetCoreLoops``)."""
        return self.loops_mn.row * self.loops_mn.column

    def get_block_coord(self, task_idx: int) -> GemmCoord:
        """Block (m index, n index, 0) of loop index ``task_idx`` (``GetBlockCoord``)."""
        cores = self.aic_core_num
        total = self.get_core_loops()
        per_core, tail = total // cores, total % cores
        core, inner = task_idx % cores, task_idx // cores
        idx = core * per_core + inner + min(core, tail)
        m_idx, n_idx = identity_mn(idx, self.loops_mn.row, self.loops_mn.column, self.swizzle_offset,
                                   self.swizzle_direction)
        return GemmCoord(m_idx, n_idx, 0)

    def get_actual_block_shape(self, block_coord) -> GemmCoord:
        """Tail-clipped (m, n) and the problem's k (``GetActualBlockShape``)."""
        lm, ln = self.loops_mn
        tm, tn = self.tile_mn
        m = self.problem_shape.m - block_coord[0] * tm if block_coord[0] == lm - 1 else tm
        n = self.problem_shape.n - block_coord[1] * tn if block_coord[1] == ln - 1 else tn
        return GemmCoord(m, n, self.problem_shape.k)


__all__ = ["GemmIdentityBlockSwizzleL1FullLoad"]
