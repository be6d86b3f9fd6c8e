"""BlockMmad for ``MmadAtlasA2Pingpong`` (CATLASS ``gemm/block/block_mmad_pingpong.hpp``).

Synchronous: one call computes one block completely. Within the block the next K tile is loaded GM->L1
while the current one is consumed (two L1 and two L0 stages); the fixpipe store ends the call.
"""

from __future__ import annotations

from catlass_py.arch.pipes import HardEvent
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.gemm.block.block_mmad_instance import PingpongStagesInstance
from catlass_py.gemm.block.block_mmad_spec import BlockMmadSpec
from catlass_py.gemm.block.capabilities import PLAIN_CALL, BlockMmadCapabilities
from catlass_py.gemm.coord import GemmCoord, ceil_div, round_up
from catlass_py.gemm.dispatch_policy import MmadAtlasA2Pingpong
from catlass_py.layout import zN


class BlockMmadPingpong(BlockMmadSpec):
    """Assembled CATLASS ``BlockMmad<MmadAtlasA2Pingpong<UNIT_FLAG>, L1, L0, A, B, C, Bias, TileCopy, TileMmad>``.

    Checks: ``(L1A + L1B) * STAGES <= L1``, ``L0A_TILE * STAGES <= L0A``, ``L0B_TILE * STAGES <= L0B``,
    ``L0C_TILE <= L0C``, L1/L0 tiles agree on M and N, ``L0.K <= L1.K``, 32-byte tile alignment, and the
    unit flag off for int8 (CATLASS's own restriction).
    """

    name = "BlockMmadPingpong"
    CAPABILITIES = BlockMmadCapabilities(PLAIN_CALL)

    def __init__(self, policy: MmadAtlasA2Pingpong, *args):
        super().__init__(policy, *args)
        what = self.describe_short(policy)
        stages = policy.STAGES
        self.stages = stages
        if policy.enable_unit_flag and self.element_a.bits == 8 and self.element_a.kind == "int":
            raise ConfigError(f"{what}: the unit flag must be off for int8 inputs (CATLASS dispatch_policy.hpp)")
        self._budget(what, "L1 (A + B tiles) x stages", (self.l1a_tile_size + self.l1b_tile_size) * stages,
                     self.arch.l1_size, "(L1A_SIZE + L1B_SIZE) * STAGES <= L1_SIZE")
        self._check_l0_stages(what, stages)

    def __call__(self, resource, l1_buf_addr_start: int = 0) -> "_PingpongBlock":
        return _PingpongBlock(self, resource, l1_buf_addr_start)


class _PingpongBlock(PingpongStagesInstance):
    """One cube core's instance of :class:`BlockMmadPingpong` (and the base of the bias block's): buffers and
    events of :class:`PingpongStagesInstance`; the L0 stage ids rotate across K tiles and blocks."""

    def _checked_shape(self, actual_shape) -> GemmCoord:
        shape = GemmCoord(*actual_shape)
        if shape.k == 0:
            raise ArgumentError(f"{self.spec.name}: k == 0 (CATLASS would store whatever L0C held)")
        return shape

    def __call__(self, gm_a, layout_a, gm_b, layout_b, gm_c, layout_c, actual_shape) -> None:
        """Compute block C (``actual_shape`` = m, n, k) from A and B; store it to ``gm_c``."""
        m, n, k = self._checked_shape(actual_shape)
        k_actual = min(k, self.spec.l1_tile_shape.k)
        self.load_l1(self.l1_list_id, gm_a, layout_a, gm_b, layout_b, m, n, k_actual)
        self._compute_and_store(gm_a, layout_a, gm_b, layout_b, gm_c, layout_c, m, n, k, k_actual)

    def _compute_and_store(self, gm_a, layout_a, gm_b, layout_b, gm_c, layout_c, m, n, k, k_actual) -> None:
        """The K loop after the first K tile was loaded: load tile i + 1 into the other L1 stage while tile i is
        multiplied, then store the block."""
        spec, ctx = self.spec, self.ctx
        l1, stages = spec.l1_tile_shape, spec.stages
        m_round = round_up(m, spec.l1_a_align.m_aligned)
        n_round = round_up(n, spec.l1_b_align.n_aligned)
        layout_c_in_l0 = zN.make_layout_in_l0c(m_round, n_round)
        if not spec.policy.enable_unit_flag:
            ctx.wait_flag(HardEvent.FIX_M, 0)
        k_tiles = ceil_div(k, l1.k)
        for k_loop in range(k_tiles):
            next_id = (self.l1_list_id + 1) % stages
            k_actual_next = 0
            if k_loop < k_tiles - 1:
                k_actual_next = self.load_k_tile(next_id, gm_a, layout_a, gm_b, layout_b, m, n, k, k_loop + 1)
            self.mmad_l1_tile(self.l1_list_id, k_actual, m_round, n_round, self.l0c, layout_c_in_l0,
                              k_loop == 0, k_loop == k_tiles - 1)
            self.l1_list_id = next_id
            k_actual = k_actual_next
        self.store_l0c(gm_c, self.l0c, layout_c.get_tile_layout(m, n), layout_c_in_l0)
