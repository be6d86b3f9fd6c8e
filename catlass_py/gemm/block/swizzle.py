"""Block schedulers: map a linear block index to an output block (CATLASS ``block_swizzle.hpp``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from catlass_py.errors import ConfigError
from catlass_py.gemm.coord import GemmCoord, MatrixCoord, ceil_div
from catlass_py.integers import is_int


_UPDATES: dict = {}  # GemmIdentityBlockSwizzle.update: (offset, direction, shape, tile, loops) -> scheduler


@dataclass(frozen=True)
class GemmIdentityBlockSwizzle:
    """CATLASS ``GemmIdentityBlockSwizzle<SwizzleOffset, SwizzleDirection>``.

    Blocks are visited in strips of ``swizzle_offset`` block-rows (direction 0, "Zn": down inside a strip,
    then right) or block-columns (direction 1, "Nz": right inside a strip, then down); odd strips run
    backwards (serpentine) so consecutive blocks share an operand panel. ``update`` returns the scheduler
    for a problem (CATLASS ``Update``); the object itself is immutable.
    """

    swizzle_offset: int = 1
    swizzle_direction: int = 0
    problem_shape: GemmCoord = GemmCoord(0, 0, 0)
    tile_mn: MatrixCoord = MatrixCoord(1, 1)
    loops_mn: MatrixCoord = field(default=MatrixCoord(0, 0))

    def __post_init__(self):
        if not is_int(self.swizzle_offset) or self.swizzle_offset < 1:
            raise ConfigError(f"GemmIdentityBlockSwizzle: swizzle offset must be an int >= 1, got {self.swizzle_offset!r}")
        object.__setattr__(self, "swizzle_offset", int(self.swizzle_offset))
        if not is_int(self.swizzle_direction) or self.swizzle_direction not in (0, 1):
            raise ConfigError(f"GemmIdentityBlockSwizzle: swizzle direction must be 0 or 1, got {self.swizzle_direction!r}")
        object.__setattr__(self, "swizzle_direction", int(self.swizzle_direction))

    def update(self, problem_shape, tile_mn, loops_mn=None) -> "GemmIdentityBlockSwizzle":
        """Scheduler for ``problem_shape`` (m, n, k) cut into ``tile_mn`` blocks (CATLASS ``Update``)."""
        key = (self.swizzle_offset, self.swizzle_direction, *problem_shape, *tile_mn,
               *(() if loops_mn is None else loops_mn))
        hit = _UPDATES.get(key)  # an immutable value: every core walking the same groups shares one
        if hit is not None:
            return hit
        shape = GemmCoord(*problem_shape)
        tile = MatrixCoord(*tile_mn)
        if loops_mn is None:
            loops_mn = MatrixCoord(ceil_div(shape.m, tile.row), ceil_div(shape.n, tile.column))
        made = GemmIdentityBlockSwizzle(self.swizzle_offset, self.swizzle_direction, shape, tile, MatrixCoord(*loops_mn))
        if all(v.__class__ is int for v in key):  # kept only for plain ints (a hit then equals a fresh one)
            if len(_UPDATES) >= 4096:
                _UPDATES.clear()
            _UPDATES[key] = made
        return made

    def get_core_loops(self) -> int:
        """Number of blocks of the problem (``GetCoreLoops``)."""
        return self.loops_mn.row * self.loops_mn.column

    def get_batch_idx(self, task_idx: int) -> int:
        """``GetBatchIdx``: which batch a linear index over several equal problems belongs to."""
        return task_idx // self.get_core_loops()

    def get_block_coord(self, task_idx: int) -> GemmCoord:
        """Block (m index, n index, 0) of linear block ``task_idx`` (``GetBlockCoord``)."""
        lm, ln = self.loops_mn
        x = task_idx % (lm * ln)
        s = self.swizzle_offset
        if self.swizzle_direction == 0:
            strips = ceil_div(lm, s)
            strip, inner = divmod(x, s * ln)
            h = s if strip != strips - 1 else lm - s * strip
            m_idx = strip * s + inner % h
            n_idx = inner // h
            if strip % 2:
                n_idx = ln - 1 - n_idx
        else:
            strips = ceil_div(ln, s)
            strip, inner = divmod(x, s * lm)
            w = s if strip != strips - 1 else ln - s * strip
            m_idx = inner // w
            n_idx = strip * s + inner % w
            if strip % 2:
                m_idx = lm - 1 - m_idx
        return GemmCoord(m_idx, n_idx, 0)

    def get_actual_block_shape(self, block_coord) -> GemmCoord:
        """Tail-clipped (m, n, k) of a block (``GetActualBlockShape``); k is always the full problem k."""
        lm, ln = self.loops_mn
        tm, tn = self.tile_mn
        m = self.problem_shape.m - block_coord[0] * tm if block_coord[0] == lm - 1 else tm
        n = self.problem_shape.n - block_coord[1] * tn if block_coord[1] == ln - 1 else tn
        return GemmCoord(m, n, self.problem_shape.k)
