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
from catlass_py.gemm.block.block_mmad_instance import PingpongStagesInstance, part_len
from catlass_py.gemm.block.block_mmad_spec import BlockMmadSpec
from catlass_py.gemm.block.capabilities import PRELOAD_CALL, BlockMmadCapabilities
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
    CAPABILITIES = BlockMmadCapabilities(PRELOAD_CALL)

    def __init__(self, policy: MmadAtlasA2Preload, *args):
        super().__init__(policy, *args)
        what = self.describe_short(policy)
        stages = policy.STAGES
        self.stages = stages
        if self.bias_type is not None:
            raise ConfigError(f"{what}: this block takes no bias (use MmadAtlasA2PingpongBias)")
        self._budget(what, "L1 (A + B tiles) x stages", (self.l1a_tile_size + self.l1b_tile_size) * stages,
                     self.arch.l1_size, "(L1A_SIZE + L1B_SIZE) * STAGES <= L1_SIZE")
        self._check_l0_stages(what, stages)

    def __call__(self, resource, l1_buf_addr_start: int = 0) -> "_PreloadBlock":
        return _PreloadBlock(self, resource, l1_buf_addr_start)


class _PreloadBlock(PingpongStagesInstance):
    """One cube core's instance of :class:`BlockMmadPreload` (the C++ object: buffers and events of
    :class:`PingpongStagesInstance`, ``l1ListId``)."""

    def __call__(self, gm_block_a, layout_a, gm_block_b, layout_b, gm_block_c, layout_c, gm_next_block_a,
                 gm_next_block_b, actual_shape, actual_shape_next, is_first_block: bool, has_next_block: bool) -> None:
        """Compute and store block C (``actual_shape`` = m, n, k); when ``has_next_block``, also prefetch the
        first K tile of the next block (at ``gm_next_block_a/b``, shape ``actual_shape_next``)."""
        spec, ctx = self.spec, self.ctx
        p, l1, stages = spec.policy, spec.l1_tile_shape, spec.stages
        m, n, k = GemmCoord(*actual_shape)
        m_next, n_next, k_next = GemmCoord(*actual_shape_next)
        k_tiles = ceil_div(k, l1.k)
        k_tiles_next = ceil_div(k_next, l1.k)
        if k_tiles == 0 or (has_next_block and k_tiles_next == 0):
            raise ArgumentError("BlockMmadPreload: k == 0 (CATLASS takes the K tile index modulo zero)")
        m_round = round_up(m, spec.l1_a_align.m_aligned)
        n_round = round_up(n, spec.l1_b_align.n_aligned)
        layout_c_in_l0 = zN.make_layout_in_l0c(m_round, n_round)
        if not p.enable_unit_flag:
            ctx.wait_flag(HardEvent.FIX_M, 0)
        start = ctx.block_idx if p.enable_shuffle_k else 0
        first = start % k_tiles
        last = (start + k_tiles - 1) % k_tiles
        k_actual = part_len(first, k_tiles, k, l1.k)
        first_next = start % k_tiles_next if has_next_block else 0
        for k_loop in range(k_tiles):
            t = (start + k_loop) % k_tiles
            if t == first and is_first_block:
                self.load_k_tile(self.l1_list_id, gm_block_a, layout_a, gm_block_b, layout_b, m, n, k, t)
            next_id = (self.l1_list_id + 1) % stages
            k_actual_next = 0
            if t != last:
                k_actual_next = self.load_k_tile(next_id, gm_block_a, layout_a, gm_block_b, layout_b, m, n, k,
                                                 (start + k_loop + 1) % k_tiles)
            if t == last and has_next_block:
                k_actual_next = self.load_k_tile(next_id, gm_next_block_a, layout_a, gm_next_block_b, layout_b,
                                                 m_next, n_next, k_next, first_next)
            # CATLASS keeps the L0 stage ids as locals of the K-tile body here (unlike Pingpong): they restart
            # at 0 for every K tile.
            self.l0a_list_id = self.l0b_list_id = 0
            self.mmad_l1_tile(self.l1_list_id, k_actual, m_round, n_round, self.l0c, layout_c_in_l0,
                              k_loop == 0, k_loop == k_tiles - 1)
            self.l1_list_id = next_id
            k_actual = k_actual_next
        self.store_l0c(gm_block_c, self.l0c, layout_c.get_tile_layout(m, n), layout_c_in_l0)
