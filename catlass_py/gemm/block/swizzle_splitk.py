"""Block schedulers that also split K (CATLASS ``gemm/block/block_swizzle.hpp``):
:class:`SplitkGemmIdentityBlockSwizzle` (example 09, split-K over cores),
:class:`SingleCoreSplitkGemmIdentityBlockSwizzle` (example 34, K looped on one core),
:class:`StreamkGemmIdentityBlockSwizzle` (example 37, stream-K).

All three keep ``GemmIdentityBlockSwizzle``'s strip order over the (m, n) blocks ("Zn" = direction 0: strips
of ``swizzle_offset`` block-rows walked down then right; "Nz" = direction 1: strips of block-columns walked
right then down; odd strips reversed). They are immutable: ``update(...)`` returns the scheduler of a
problem, like the C++ constructors.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.gemm.coord import GemmCoord, ceil_div
from catlass_py.integers import is_int


def _check_swizzle(name: str, offset, direction) -> None:
    if not is_int(offset) or offset < 1:
        raise ConfigError(f"{name}: swizzle offset must be an int >= 1, got {offset!r}")
    if direction not in (0, 1):
        raise ConfigError(f"{name}: SwizzleDirection only supports 0/1, got {direction!r}")


def _loops(problem: GemmCoord, tile: GemmCoord) -> GemmCoord:
    return GemmCoord(ceil_div(problem.m, tile.m), ceil_div(problem.n, tile.n), ceil_div(problem.k, tile.k))


def identity_mn(inner: int, lm: int, ln: int, s: int, direction: int) -> tuple[int, int]:
    """(m index, n index) of the ``inner``-th block in ``GemmIdentityBlockSwizzle<s, direction>`` order."""
    if direction == 0:
        strips = ceil_div(lm, s)
        strip, pos = divmod(inner, s * ln)
        h = s if strip != strips - 1 else lm - s * strip
        m_idx, n_idx = strip * s + pos % h, pos // h
        if strip % 2:
            n_idx = ln - 1 - n_idx
        return m_idx, n_idx
    strips = ceil_div(ln, s)
    strip, pos = divmod(inner, s * lm)
    w = s if strip != strips - 1 else ln - s * strip
    m_idx, n_idx = pos // w, strip * s + pos % w
    if strip % 2:
        m_idx = lm - 1 - m_idx
    return m_idx, n_idx


def _tail(idx: int, loops: int, total: int, tile: int) -> int:
    return total - idx * tile if idx == loops - 1 else tile


@dataclass(frozen=True)
class SplitkGemmIdentityBlockSwizzle:
    """CATLASS ``SplitkGemmIdentityBlockSwizzle<SwizzleOffset, SwizzleDirection>``: task t covers the (m, n)
    block ``t % (Lm*Ln)`` (identity strip order) of K slice ``t / (Lm*Ln)``; the ``Lk`` K tiles are dealt to
    ``splitk_factor`` slices, the first ``Lk % factor`` slices getting one extra tile."""

    swizzle_offset: int = 1
    swizzle_direction: int = 0
    problem_shape: GemmCoord = GemmCoord(0, 0, 0)
    tile_shape: GemmCoord = GemmCoord(1, 1, 1)
    splitk_factor: int = 1
    loops_mnk: GemmCoord = field(default=GemmCoord(0, 0, 0))

    def __post_init__(self):
        _check_swizzle("SplitkGemmIdentityBlockSwizzle", self.swizzle_offset, self.swizzle_direction)

    def update(self, problem_shape, tile_shape, splitk_factor: int = 1) -> "SplitkGemmIdentityBlockSwizzle":
        """Scheduler for ``problem_shape`` (m, n, k) cut into ``tile_shape`` (m, n, k) tiles, K in
        ``splitk_factor`` slices (the C++ constructor)."""
        problem, tile = GemmCoord(*problem_shape), GemmCoord(*tile_shape)
        if not is_int(splitk_factor) or splitk_factor < 1:
            raise ArgumentError(f"splitk_factor: expected an int >= 1, got {splitk_factor!r}")
        splitk_factor = int(splitk_factor)
        return SplitkGemmIdentityBlockSwizzle(self.swizzle_offset, self.swizzle_direction, problem, tile,
                                              splitk_factor, _loops(problem, tile))

    def get_k_idx_by_splitk_slice_idx(self, slice_idx: int) -> int:
        """First K tile of slice ``slice_idx`` (``GetKIdxBySplitkSliceIdx``)."""
        lk, f = self.loops_mnk.k, self.splitk_factor
        if slice_idx < lk % f:
            return (lk // f + 1) * slice_idx
        return slice_idx * (lk // f) + lk % f

    def get_splitk_slice_idx(self, task_idx: int) -> int:
        """K slice of task ``task_idx`` (``GetSplitkSliceIdx``)."""
        return task_idx % self.get_core_loops() // (self.loops_mnk.m * self.loops_mnk.n)

    def get_core_loops(self) -> int:
        """``Lm * Ln * splitk_factor`` (``GetCoreLoops``)."""
        return self.loops_mnk.m * self.loops_mnk.n * self.splitk_factor

    def get_batch_idx(self, task_idx: int) -> int:
        """``GetBatchIdx``."""
        return task_idx // self.get_core_loops()

    def get_block_coord(self, task_idx: int) -> GemmCoord:
        """(m index, n index, first K tile) of task ``task_idx`` (``GetBlockCoord``)."""
        k_idx = self.get_k_idx_by_splitk_slice_idx(self.get_splitk_slice_idx(task_idx))
        lm, ln, _ = self.loops_mnk
        m_idx, n_idx = identity_mn(task_idx % (lm * ln), lm, ln, self.swizzle_offset, self.swizzle_direction)
        return GemmCoord(m_idx, n_idx, k_idx)

    def get_actual_block_shape(self, block_coord, splitk_slice_idx: int) -> GemmCoord:
        """Tail-clipped (m, n) and the slice's K length (the last slice runs to the end of K)."""
        lm, ln, lk = self.loops_mnk
        t, f = self.tile_shape, self.splitk_factor
        slice_len = (lk // f + (1 if splitk_slice_idx < lk % f else 0)) * t.k
        m = _tail(block_coord[0], lm, self.problem_shape.m, t.m)
        n = _tail(block_coord[1], ln, self.problem_shape.n, t.n)
        k = self.problem_shape.k - block_coord[2] * t.k if splitk_slice_idx == f - 1 else slice_len
        return GemmCoord(m, n, k)


@dataclass(frozen=True)
class SingleCoreSplitkGemmIdentityBlockSwizzle:
    """CATLASS ``SingleCoreSplitkGemmIdentityBlockSwizzle<SwizzleOffset, SwizzleDirection>``: every core owns a
    contiguous range of (m, n) blocks (the first ``tmp`` cores ``ceil(MN / cores)`` blocks, the rest one
    fewer) and walks all K tiles of its range, K outermost: loop ``l`` is K tile ``l / len`` of block
    ``start + l % len``. Block order inside a strip is serpentine, and a short last strip (at most half a
    strip high (Zn) / less than half wide (Nz)) is merged into the previous one."""

    swizzle_offset: int = 1
    swizzle_direction: int = 0
    problem_shape: GemmCoord = GemmCoord(0, 0, 0)
    tile_shape: GemmCoord = GemmCoord(1, 1, 1)
    loops_mnk: GemmCoord = field(default=GemmCoord(0, 0, 0))
    mn_loop_range_start: int = 0
    mn_loop_range_len: int = 0

    def __post_init__(self):
        _check_swizzle("SingleCoreSplitkGemmIdentityBlockSwizzle", self.swizzle_offset, self.swizzle_direction)

    def update(self, problem_shape, tile_shape, core_num: int,
               core_idx: int) -> "SingleCoreSplitkGemmIdentityBlockSwizzle":
        """Scheduler of core ``core_idx`` of ``core_num`` (the C++ constructor, which reads ``GetBlockNum()``
        and ``GetBlockIdx()``)."""
        problem, tile = GemmCoord(*problem_shape), GemmCoord(*tile_shape)
        loops = _loops(problem, tile)
        mn = loops.m * loops.n
        per_core = ceil_div(mn, core_num)
        tmp = mn - core_num * (per_core - 1)
        if core_idx < tmp:
            start, length = core_idx * per_core, per_core
        else:
            start, length = tmp * per_core + (core_idx - tmp) * (per_core - 1), per_core - 1
        return SingleCoreSplitkGemmIdentityBlockSwizzle(self.swizzle_offset, self.swizzle_direction, problem, tile,
                                                        loops, start, max(0, length))

    def get_single_core_loops(self) -> int:
        """``Lk * range length`` (``GetSingleCoreLoops``)."""
        return self.loops_mnk.k * self.mn_loop_range_len

    def is_atomic_add(self, loop_idx: int) -> bool:
        """True for every K tile but the first (``IsAtomicAdd``): later tiles accumulate into C."""
        return loop_idx // self.mn_loop_range_len != 0

    def get_block_coord(self, loop_idx: int) -> GemmCoord:
        """(m index, n index, K tile) of loop ``loop_idx`` (``GetBlockCoord``)."""
        k_idx = loop_idx // self.mn_loop_range_len
        inner = self.mn_loop_range_start + loop_idx % self.mn_loop_range_len
        lm, ln, _ = self.loops_mnk
        s = self.swizzle_offset
        if self.swizzle_direction == 0:
            strips = ceil_div(lm, s)
            strip, pos = divmod(inner, s * ln)
            tail = lm - (strips - 1) * s
            rows = s
            if strips >= 2 and strip >= strips - 2 and tail <= s // 2:
                strips = (lm - tail) // s
                strip = strips - 1
                rows = s + tail
                pos = inner - s * ln * strip
            elif strip == strips - 1:
                rows = lm - s * strip
            n_idx = pos // rows
            if strip % 2:
                n_idx = ln - n_idx - 1
            m_idx = strip * s + pos % rows
            if n_idx % 2:
                m_idx = strip * s + (rows - pos % rows - 1)
            return GemmCoord(m_idx, n_idx, k_idx)
        strips = ceil_div(ln, s)
        strip, pos = divmod(inner, s * lm)
        tail = ln - (strips - 1) * s
        cols = s
        if strips >= 2 and strip >= strips - 2 and tail < s // 2:
            strips = (ln - tail) // s
            strip = strips - 1
            cols = s + tail
            pos = inner - s * lm * strip
        elif strip == strips - 1:
            cols = ln - s * strip
        m_idx = pos // cols
        if strip % 2:
            m_idx = lm - m_idx - 1
        n_idx = strip * s + pos % cols
        if m_idx % 2:
            n_idx = strip * s + (cols - pos % cols - 1)
        return GemmCoord(m_idx, n_idx, k_idx)

    def get_actual_block_shape(self, block_coord) -> GemmCoord:
        """Tail-clipped (m, n, k) of one K tile of a block."""
        lm, ln, lk = self.loops_mnk
        t, p = self.tile_shape, self.problem_shape
        return GemmCoord(_tail(block_coord[0], lm, p.m, t.m), _tail(block_coord[1], ln, p.n, t.n),
                         _tail(block_coord[2], lk, p.k, t.k))


@dataclass(frozen=True)
class StreamkBlockDec:
    """CATLASS ``StreamkGemmIdentityBlockSwizzle::StreamkBlockDec``: what one core computes in one loop.

    ``is_streamk_block``: a K range of a tail block (partial sum to the workspace) rather than a whole block;
    ``is_cross_block``: the range runs past the end of its block into the head of the next tail block,
    described by ``streamk_block_coord`` / ``streamk_actual_block_shape``.
    """

    is_streamk_block: bool = False
    is_cross_block: bool = False
    block_coord: GemmCoord = GemmCoord(0, 0, 0)
    actual_block_shape: GemmCoord = GemmCoord(0, 0, 0)
    streamk_block_coord: GemmCoord = GemmCoord(0, 0, 0)
    streamk_actual_block_shape: GemmCoord = GemmCoord(0, 0, 0)


@dataclass(frozen=True)
class StreamkGemmIdentityBlockSwizzle:
    """CATLASS ``StreamkGemmIdentityBlockSwizzle<SwizzleOffset, SwizzleDirection>``.

    With ``Lm*Ln`` blocks on ``block_dim`` cores, ``streamk_blocks = (Lm*Ln) % block_dim`` tail blocks are not
    dealt whole: their ``streamk_blocks * Lk`` K tiles are spread over the cores, ``k_tile_num_per_core`` each
    and one more for the first ``k_tile_remain`` cores; the other (normal) blocks go round robin whole.
    ``get_core_loops() = normal + min(streamk_blocks * Lk, block_dim)``; loop ``normal + c`` is core c's K range.
    """

    swizzle_offset: int = 1
    swizzle_direction: int = 0
    problem_shape: GemmCoord = GemmCoord(0, 0, 0)
    tile_shape: GemmCoord = GemmCoord(1, 1, 1)
    block_dim: int = 1
    loops_mnk: GemmCoord = field(default=GemmCoord(0, 0, 0))
    normal_blocks: int = 0
    streamk_blocks: int = 0
    k_tile_num_per_core: int = 0
    k_tile_remain: int = 0

    def __post_init__(self):
        _check_swizzle("StreamkGemmIdentityBlockSwizzle", self.swizzle_offset, self.swizzle_direction)

    def update(self, problem_shape, tile_shape, block_dim: int) -> "StreamkGemmIdentityBlockSwizzle":
        """Scheduler for ``problem_shape`` on ``block_dim`` cores (the C++ constructor)."""
        problem, tile = GemmCoord(*problem_shape), GemmCoord(*tile_shape)
        loops = _loops(problem, tile)
        mn = loops.m * loops.n
        sk = mn % block_dim
        return StreamkGemmIdentityBlockSwizzle(
            self.swizzle_offset, self.swizzle_direction, problem, tile, block_dim, loops, mn - sk, sk,
            sk * loops.k // block_dim, sk * loops.k % block_dim)

    def get_core_loops(self) -> int:
        """Normal blocks plus the stream-K ranges (``GetCoreLoops``)."""
        mn = self.loops_mnk.m * self.loops_mnk.n
        return mn // self.block_dim * self.block_dim + min(self.streamk_blocks * self.loops_mnk.k, self.block_dim)

    def get_block_coord(self, task_idx: int) -> GemmCoord:
        """(m index, n index, 0) of block ``task_idx % core loops`` in identity strip order."""
        lm, ln, _ = self.loops_mnk
        m_idx, n_idx = identity_mn(task_idx % self.get_core_loops(), lm, ln, self.swizzle_offset,
                                   self.swizzle_direction)
        return GemmCoord(m_idx, n_idx, 0)

    def get_actual_block_shape(self, block_coord) -> GemmCoord:
        """Tail-clipped (m, n) and the full k."""
        lm, ln, _ = self.loops_mnk
        t, p = self.tile_shape, self.problem_shape
        return GemmCoord(_tail(block_coord[0], lm, p.m, t.m), _tail(block_coord[1], ln, p.n, t.n), p.k)

    def get_streamk_block_num(self) -> int:
        """Tail blocks computed stream-K (``GetStreamkBlockNum``)."""
        return self.streamk_blocks

    def get_normal_block_num(self) -> int:
        """Blocks dealt whole (``GetNormalBlockNum``)."""
        return self.normal_blocks

    def get_streamk_block_dec(self, loop_idx: int) -> StreamkBlockDec:
        """What loop ``loop_idx`` computes (``GetStreamkBlockDec``): a whole normal block, or a core's K range
        of the tail blocks (possibly crossing into the next tail block)."""
        if loop_idx < self.normal_blocks:
            bc = self.get_block_coord(loop_idx)
            return StreamkBlockDec(False, False, bc, self.get_actual_block_shape(bc))
        lk, tk, pk = self.loops_mnk.k, self.tile_shape.k, self.problem_shape.k
        core = loop_idx - self.normal_blocks
        cur = self.k_tile_num_per_core
        k_tile = core * self.k_tile_num_per_core + self.k_tile_remain
        if core < self.k_tile_remain:
            cur += 1
            k_tile = core * cur
        sk_idx = k_tile // lk
        tmp = self.get_block_coord(self.normal_blocks + sk_idx)
        bc = GemmCoord(tmp.m, tmp.n, k_tile % lk)
        shape = self.get_actual_block_shape(bc)
        if (k_tile % lk + cur) * tk > pk:
            actual = GemmCoord(shape.m, shape.n, pk - (k_tile % lk) * tk)
        else:
            actual = GemmCoord(shape.m, shape.n, cur * tk)
        if k_tile % lk + cur > lk:
            nxt = self.get_block_coord(self.normal_blocks + (k_tile + cur) // lk)
            nshape = self.get_actual_block_shape(nxt)
            return StreamkBlockDec(True, True, bc, actual, nxt,
                                   GemmCoord(nshape.m, nshape.n, ((k_tile + cur) % lk) * tk))
        return StreamkBlockDec(True, False, bc, actual)

    def get_core_idx(self, streamk_block_idx: int) -> int:
        """Core whose K range holds the first K tile of tail block ``streamk_block_idx`` (``GetCoreIdx``)."""
        lk, per, rem = self.loops_mnk.k, self.k_tile_num_per_core, self.k_tile_remain
        first = streamk_block_idx * lk
        if first > rem * (per + 1):
            return rem + (first - rem * (per + 1)) // per
        return first // (per + 1)

    def is_cross(self, streamk_block_idx: int) -> bool:
        """True if tail block ``streamk_block_idx`` starts inside a core's K range (that core also computed the
        end of the previous tail block) (``IsCross``)."""
        lk, per, rem = self.loops_mnk.k, self.k_tile_num_per_core, self.k_tile_remain
        first = streamk_block_idx * lk
        if first > rem * (per + 1):
            return (first - rem * (per + 1)) % per != 0
        return first % (per + 1) != 0


__all__ = [
    "SingleCoreSplitkGemmIdentityBlockSwizzle",
    "SplitkGemmIdentityBlockSwizzle",
    "StreamkBlockDec",
    "StreamkGemmIdentityBlockSwizzle",
    "identity_mn",
]
