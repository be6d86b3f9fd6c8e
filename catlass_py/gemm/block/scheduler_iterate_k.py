"""``BlockSchedulerIterateK<ProblemShape, L1Shape, L0Shape>`` (CATLASS ``gemm/block/block_scheduler_iterateK.hpp``):
the block scheduler of the sparse matmul (example 41).

C is cut into ``L1.M x L1.N`` tiles, row-major over the tiles (``tileIdx / nTileNum`` is the row of tiles), per batch;
every tile spans the whole K (the block iterates K itself). The kernel hands tile ``blockIdx, blockIdx + blockNum,
...`` to each AI core. The host launches :meth:`get_block_num` AI cores (the example's ``GetTotalBlockNum``): all the
tiles when there are fewer than the AI cores, else ``ceil(total / ceil(total / cores))``.
"""

from __future__ import annotations

from dataclasses import dataclass

from catlass_py.errors import ArgumentError
from catlass_py.gemm.coord import GemmShape, ceil_div
from catlass_py.integers import is_int


@dataclass(frozen=True)
class MatmulShape:
    """The example's ``MatmulShape{m, n, k, b}`` (``b`` 0 counts as one batch)."""

    m: int
    n: int
    k: int
    b: int = 1


def get_block_num(l1_shape, aic_core_num: int, shape: MatmulShape) -> int:
    """``GetBlockNum`` / the example's ``GetTotalBlockNum<L1TileShape>(aicCoreNum, shape)``: AI cores to launch."""
    l1 = GemmShape(*l1_shape)
    total = ceil_div(shape.m, l1.m) * ceil_div(shape.n, l1.n) * (shape.b or 1)
    if total < aic_core_num:
        return total
    return ceil_div(total, ceil_div(total, aic_core_num))


@dataclass(frozen=True)
class BlockSchedulerIterateK:
    """CATLASS ``BlockSchedulerIterateK`` (see the module): assembled with the tile shapes; :meth:`update` is the
    device-side constructor ``(problemShape, blockIdx, blockNum, aicCoreNum)``."""

    l1_shape: GemmShape
    l0_shape: GemmShape
    problem_shape: MatmulShape = MatmulShape(0, 0, 0)
    block_idx: int = 0
    block_num: int = 1
    aic_core_num: int = 1

    def __post_init__(self):
        object.__setattr__(self, "l1_shape", GemmShape(*self.l1_shape).check("BlockSchedulerIterateK: L1Shape"))
        object.__setattr__(self, "l0_shape", GemmShape(*self.l0_shape).check("BlockSchedulerIterateK: L0Shape"))

    def update(self, problem_shape: MatmulShape, block_idx: int, block_num: int,
               aic_core_num: int) -> "BlockSchedulerIterateK":
        """The scheduler of one AI core (the C++ constructor)."""
        for name, v, low in (("block_idx", block_idx, 0), ("block_num", block_num, 1),
                             ("aic_core_num", aic_core_num, 1)):
            if not is_int(v) or v < low:
                raise ArgumentError(f"BlockSchedulerIterateK: {name} must be an int >= {low}, got {v!r}")
        return BlockSchedulerIterateK(self.l1_shape, self.l0_shape, problem_shape, int(block_idx), int(block_num),
                                      int(aic_core_num))

    @property
    def _tiles(self) -> tuple[int, int, int]:
        s, l1 = self.problem_shape, self.l1_shape
        return ceil_div(s.m, l1.m), ceil_div(s.n, l1.n), s.b or 1

    def get_tile_num(self) -> int:
        """``mTileNum * nTileNum * b`` (``GetTileNum``)."""
        mt, nt, b = self._tiles
        return mt * nt * b

    def get_per_block_num(self) -> int:
        """``GetPerBlockNum``: tiles per AI core, ``ceil(total / blockNum)``."""
        return ceil_div(self.get_tile_num(), self.block_num)

    def get_block_num(self) -> int:
        """``GetBlockNum(shape)`` (:func:`get_block_num`)."""
        return get_block_num(self.l1_shape, self.aic_core_num, self.problem_shape)

    def _indices(self, tile_idx: int) -> tuple[int, int, int]:
        mt, nt, _ = self._tiles
        batch = tile_idx // (mt * nt)
        return tile_idx // nt - batch * mt, tile_idx % nt, batch

    def get_block_shape(self, tile_idx: int) -> tuple[int, int, int, int]:
        """``(m, n, k, b)`` of tile ``tile_idx`` (``GetBlockShape``): the tail tiles clipped, the whole K."""
        s, l1 = self.problem_shape, self.l1_shape
        mt, nt, b = self._tiles
        mi, ni, _ = self._indices(tile_idx)
        tail_m = s.m % l1.m or l1.m
        tail_n = s.n % l1.n or l1.n
        m = tail_m if (mi - (mt - 1)) % mt == 0 else l1.m  # IsMTail
        n = tail_n if ni == nt - 1 else l1.n               # IsNTail
        return m, n, s.k, b

    def get_block_coord(self, tile_idx: int) -> tuple[int, int, int, int]:
        """``(m offset, n offset, 0, batch)`` in elements (``GetBlockCoord``)."""
        mi, ni, batch = self._indices(tile_idx)
        return mi * self.l1_shape.m, ni * self.l1_shape.n, 0, batch

    @staticmethod
    def get_workspace_size(problem_shape) -> int:
        """No workspace."""
        return 0


__all__ = ["BlockSchedulerIterateK", "MatmulShape", "get_block_num"]
