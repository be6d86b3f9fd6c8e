"""BlockMmad for ``MmadAtlasA2Preload`` (CATLASS ``gemm/block/block_mmad_preload.hpp``).

Synchronous like Pingpong (one call computes and stores one block), with two additions:

* **shuffle-K**: the K tiles of a block start at tile ``GetBlockIdx() % kTiles`` (and wrap), so cores that
  share an operand panel read different parts of it at the same time;
* **cross-block prefetch**: while the last K tile of a block is being computed, the *next* block's first K
  tile is already loaded GM -> L1. The kernel passes the next block's tensors and shape; only a core's first
  block loads its own first tile.

L1 stage protocol within one call (``s`` = ``l1_list_id`` on entry):

=====================  =====================================================  ===========================
K step i (tile t_i)    load into the other stage before computing t_i         compute
=====================  =====================================================  ===========================
i == 0, first block    t_0 of this block into ``s`` (nothing was prefetched)   -
i < kTiles - 1         t_{i+1} of this block                                   t_i from the current stage
i == kTiles - 1        first tile of the next block (if there is one)          t_i, then the fixpipe store
=====================  =====================================================  ===========================
"""

from __future__ import annotations

from catlass_py.arch.pipes import HardEvent
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.gemm.block._base import BlockMmadSpec
from catlass_py.gemm.coord import GemmCoord, ceil_div, round_up
from catlass_py.gemm.dispatch_policy import MmadAtlasA2Preload
from catlass_py.layout import zN


class BlockMmadPreload(BlockMmadSpec):
    """Assembled CATLASS ``BlockMmad<MmadAtlasA2Preload<UNIT_FLAG, SHUFFLE_K>, L1, L0, A, B, C, Bias, TileCopy,
    TileMmad>``.

    Checks (same as Pingpong): ``(L1A + L1B) * STAGES <= L1``, ``L0A_TILE * STAGES <= L0A``,
    ``L0B_TILE * STAGES <= L0B``, ``L0C_TILE <= L0C``, L1/L0 tiles agree on M and N, ``L0.K <= L1.K`` and
    32-byte tile alignment.
    """

    name = "BlockMmadPreload"
    ASYNC = False

    def __init__(self, policy: MmadAtlasA2Preload, *args):
        super().__init__(policy, *args)
        what = self.describe_short(policy)
        stages = policy.STAGES
        self.stages = stages
        if self.bias_type is not None:
            raise ConfigError(f"{what}: this block takes no bias (use MmadAtlasA2PingpongBias)")
        arch, l0 = self.arch, self.l0_tile_shape
        self._budget(what, "L1 (A + B tiles) x stages", (self.l1a_tile_size + self.l1b_tile_size) * stages,
                     arch.l1_size, "(L1A_SIZE + L1B_SIZE) * STAGES <= L1_SIZE")
        self._budget(what, "L0A tiles", self.l0a_tile_size * stages, arch.l0a_size, "L0A_TILE_SIZE * STAGES <= L0A_SIZE")
        self._budget(what, "L0B tiles", self.l0b_tile_size * stages, arch.l0b_size, "L0B_TILE_SIZE * STAGES <= L0B_SIZE")
        self.l0c_tile_size = self.element_accumulator.nbytes(l0.m * l0.n)
        self._budget(what, "L0C tile", self.l0c_tile_size, arch.l0c_size, "L0C_TILE_SIZE <= L0C_SIZE")
        self.l0a_pingpong_size = arch.l0a_size // stages
        self.l0b_pingpong_size = arch.l0b_size // stages

    def __call__(self, resource, l1_buf_addr_start: int = 0) -> "_PreloadBlock":
        return _PreloadBlock(self, resource, l1_buf_addr_start)


class _PreloadBlock:
    """One cube core's instance of :class:`BlockMmadPreload` (the C++ object: buffers, events, ``l1ListId``)."""

    def __init__(self, spec: BlockMmadPreload, resource, l1_buf_addr_start: int = 0):
        self.spec = spec
        self.ctx = ctx = resource.ctx
        s = spec.stages
        ea, eb = spec.element_a, spec.element_b
        l1b_off = l1_buf_addr_start + spec.l1a_tile_size * s
        self.l1a = [resource.l1_buf.get_buffer_by_byte(ea, l1_buf_addr_start + spec.l1a_tile_size * i) for i in range(s)]
        self.l1b = [resource.l1_buf.get_buffer_by_byte(eb, l1b_off + spec.l1b_tile_size * i) for i in range(s)]
        self.l0a = [resource.l0a_buf.get_buffer_by_byte(ea, spec.l0a_pingpong_size * i) for i in range(s)]
        self.l0b = [resource.l0b_buf.get_buffer_by_byte(eb, spec.l0b_pingpong_size * i) for i in range(s)]
        self.l0c = resource.l0c_buf.get_buffer_by_byte(spec.element_accumulator, 0)
        self.l1a_event = list(range(s))
        self.l1b_event = [i + s for i in range(s)]
        self.l0a_event = list(range(s))
        self.l0b_event = [i + s for i in range(s)]
        for i in range(s):
            ctx.set_flag(HardEvent.MTE1_MTE2, self.l1a_event[i])
            ctx.set_flag(HardEvent.MTE1_MTE2, self.l1b_event[i])
            ctx.set_flag(HardEvent.M_MTE1, self.l0a_event[i])
            ctx.set_flag(HardEvent.M_MTE1, self.l0b_event[i])
        ctx.set_flag(HardEvent.FIX_M, 0)
        self.l1_list_id = 0

    def close(self) -> None:
        """The C++ destructor: wait for every buffer-free event."""
        ctx = self.ctx
        for i in range(self.spec.stages):
            ctx.wait_flag(HardEvent.MTE1_MTE2, self.l1a_event[i])
            ctx.wait_flag(HardEvent.MTE1_MTE2, self.l1b_event[i])
            ctx.wait_flag(HardEvent.M_MTE1, self.l0a_event[i])
            ctx.wait_flag(HardEvent.M_MTE1, self.l0b_event[i])
        ctx.wait_flag(HardEvent.FIX_M, 0)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        return False

    def synchronize_block(self) -> None:
        """Nothing is pending in a synchronous block (present so kernels can call it uniformly)."""

    def _load(self, idx, gm_tile_a, layout_a, gm_tile_b, layout_b, m, n, k_actual) -> None:
        spec, ctx = self.spec, self.ctx
        ctx.wait_flag(HardEvent.MTE1_MTE2, self.l1a_event[idx])
        spec.tile_copy.copy_gm_to_l1_a(self.l1a[idx], gm_tile_a, spec.l1a_layout, layout_a.get_tile_layout(m, k_actual))
        ctx.set_flag(HardEvent.MTE2_MTE1, self.l1a_event[idx])
        ctx.wait_flag(HardEvent.MTE1_MTE2, self.l1b_event[idx])
        spec.tile_copy.copy_gm_to_l1_b(self.l1b[idx], gm_tile_b, spec.l1b_layout, layout_b.get_tile_layout(k_actual, n))
        ctx.set_flag(HardEvent.MTE2_MTE1, self.l1b_event[idx])

    def __call__(self, gm_block_a, layout_a, gm_block_b, layout_b, gm_block_c, layout_c, gm_next_block_a,
                 gm_next_block_b, actual_shape, actual_shape_next, is_first_block: bool, has_next_block: bool) -> None:
        """Compute and store block C (``actual_shape`` = m, n, k); when ``has_next_block``, also prefetch the
        first K tile of the next block (at ``gm_next_block_a/b``, shape ``actual_shape_next``)."""
        spec, ctx = self.spec, self.ctx
        p, l1, l0, stages = spec.policy, spec.l1_tile_shape, spec.l0_tile_shape, spec.stages
        m, n, k = GemmCoord(*actual_shape)
        m_next, n_next, k_next = GemmCoord(*actual_shape_next)
        k_tiles = ceil_div(k, l1.k)
        k_tiles_next = ceil_div(k_next, l1.k)
        if k_tiles == 0 or (has_next_block and k_tiles_next == 0):
            raise ArgumentError("BlockMmadPreload: k == 0 (CATLASS takes the K tile index modulo zero)")
        m_round = round_up(m, spec.l1_a_align.m_aligned)
        n_round = round_up(n, spec.l1_b_align.n_aligned)
        layout_c_in_l0 = zN.make_layout_in_l0c(m_round, n_round)
        unit_flag = p.enable_unit_flag
        if not unit_flag:
            ctx.wait_flag(HardEvent.FIX_M, 0)
        start = ctx.block_idx if p.enable_shuffle_k else 0
        first = start % k_tiles
        last = (start + k_tiles - 1) % k_tiles
        k_actual = l1.k if first < k_tiles - 1 else k - first * l1.k
        first_next = start % k_tiles_next if has_next_block else 0
        m_loops = ceil_div(m_round, l0.m)
        n_loops = ceil_div(n_round, l0.n)
        for k_loop in range(k_tiles):
            t = (start + k_loop) % k_tiles
            if t == first and is_first_block:
                self._load(self.l1_list_id, gm_block_a[layout_a.offset(0, t * l1.k)], layout_a,
                           gm_block_b[layout_b.offset(t * l1.k, 0)], layout_b, m, n, k_actual)
            next_id = (self.l1_list_id + 1) % stages
            k_actual_next = 0
            if t != last:
                t_next = (start + k_loop + 1) % k_tiles
                k_actual_next = l1.k if t_next < k_tiles - 1 else k - t_next * l1.k
                self._load(next_id, gm_block_a[layout_a.offset(0, t_next * l1.k)], layout_a,
                           gm_block_b[layout_b.offset(t_next * l1.k, 0)], layout_b, m, n, k_actual_next)
            if t == last and has_next_block:
                k_actual_next = l1.k if first_next < k_tiles_next - 1 else k_next - first_next * l1.k
                self._load(next_id, gm_next_block_a[layout_a.offset(0, first_next * l1.k)], layout_a,
                           gm_next_block_b[layout_b.offset(first_next * l1.k, 0)], layout_b, m_next, n_next,
                           k_actual_next)
            self._compute(k_loop, k_tiles, k_actual, m_loops, n_loops, m_round, n_round, layout_c_in_l0)
            self.l1_list_id = next_id
            k_actual = k_actual_next
        layout_block = layout_c.get_tile_layout(m, n)
        if not unit_flag:
            ctx.set_flag(HardEvent.M_FIX, 0)
            ctx.wait_flag(HardEvent.M_FIX, 0)
            spec.tile_copy.copy_l0c_to_gm(gm_block_c, self.l0c, layout_block, layout_c_in_l0)
            ctx.set_flag(HardEvent.FIX_M, 0)
        else:
            spec.tile_copy.copy_l0c_to_gm(gm_block_c, self.l0c, layout_block, layout_c_in_l0, 0b11)

    def _compute(self, k_loop, k_tiles, k_actual, m_loops, n_loops, m_round, n_round, layout_c_in_l0) -> None:
        """L1 -> L0A/L0B and Mmad over the current L1 stage. The L0 stage ids restart at 0 for every K tile
        (CATLASS keeps them as locals here, unlike Pingpong)."""
        spec, ctx = self.spec, self.ctx
        l0, stages, lid = spec.l0_tile_shape, spec.stages, self.l1_list_id
        l1a, l1b = self.l1a[lid], self.l1b[lid]
        unit_flag = spec.policy.enable_unit_flag
        k_parts = ceil_div(k_actual, l0.k)
        l0a_id = l0b_id = 0
        for mi in range(m_loops):
            m_part = l0.m if mi < m_loops - 1 else m_round - mi * l0.m
            for ki in range(k_parts):
                k_part = l0.k if ki < k_parts - 1 else k_actual - ki * l0.k
                l0a = self.l0a[l0a_id]
                ctx.wait_flag(HardEvent.M_MTE1, self.l0a_event[l0a_id])
                if mi == 0 and ki == 0:
                    ctx.wait_flag(HardEvent.MTE2_MTE1, self.l1a_event[lid])
                spec.tile_copy.copy_l1_to_l0a(l0a, l1a[spec.l1a_layout.offset(mi * l0.m, ki * l0.k)],
                                              spec.layout_a_in_l0.make_layout(spec.element_a, m_part, k_part),
                                              spec.l1a_layout)
                if mi == m_loops - 1 and ki == k_parts - 1:
                    ctx.set_flag(HardEvent.MTE1_MTE2, self.l1a_event[lid])
                for ni in range(n_loops):
                    n_part = l0.n if ni < n_loops - 1 else n_round - ni * l0.n
                    l0b = self.l0b[l0b_id]
                    ctx.wait_flag(HardEvent.M_MTE1, self.l0b_event[l0b_id])
                    if ki == 0 and ni == 0:
                        ctx.wait_flag(HardEvent.MTE2_MTE1, self.l1b_event[lid])
                    spec.tile_copy.copy_l1_to_l0b(l0b, l1b[spec.l1b_layout.offset(ki * l0.k, ni * l0.n)],
                                                  spec.layout_b_in_l0.make_layout(spec.element_b, k_part, n_part),
                                                  spec.l1b_layout)
                    if ki == k_parts - 1 and ni == n_loops - 1:
                        ctx.set_flag(HardEvent.MTE1_MTE2, self.l1b_event[lid])
                    ctx.set_flag(HardEvent.MTE1_M, 0)
                    l0c_tile = self.l0c[layout_c_in_l0.offset(mi * l0.m, ni * l0.n)]
                    ctx.wait_flag(HardEvent.MTE1_M, 0)
                    init_c = k_loop == 0 and ki == 0
                    flag = 0
                    if unit_flag:
                        last = k_loop == k_tiles - 1 and mi == m_loops - 1 and ki == k_parts - 1 and ni == n_loops - 1
                        flag = 0b11 if last else 0b10
                    spec.tile_mmad(l0c_tile, l0a, l0b, m_part, n_part, k_part, init_c, flag)
                    ctx.set_flag(HardEvent.M_MTE1, self.l0b_event[l0b_id])
                    l0b_id = (l0b_id + 1) % stages
                ctx.set_flag(HardEvent.M_MTE1, self.l0a_event[l0a_id])
                l0a_id = (l0a_id + 1) % stages
