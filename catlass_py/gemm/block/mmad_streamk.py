"""BlockMmad for ``MmadAtlasA2Streamk`` (CATLASS ``gemm/block/block_mmad_streamk.hpp``, example 37).

Synchronous ping-pong block with two twists:

* the result goes either to C through the tile copy bundle's fixpipe (a normal block) or, for a stream-K
  partial K range, as fp32 to a workspace slot (``CopyL0CToGm<float -> float>``);
* the last K tile's iteration prefetches the *next* call's first K tile (``has_next_block``), so a call with
  ``is_first_block`` False finds its first tile already in L1.

K is cut on L0 into parts of ``k_part_len_max`` (what one L0A/L0B ping-pong half holds for the whole L1 tile
height/width), not by ``L0TileShape::K``; shuffle-K starts every call at K tile ``GetBlockIdx() % T``.
"""

from __future__ import annotations

from catlass_py.arch.pipes import HardEvent
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.gemm.block.block_mmad_instance import PingpongStagesInstance, part_len
from catlass_py.gemm.block.block_mmad_spec import BlockMmadSpec
from catlass_py.gemm.block.capabilities import STREAMK_CALL, BlockMmadCapabilities
from catlass_py.gemm.coord import GemmCoord, ceil_div, round_down, round_up
from catlass_py.gemm.dispatch_policy import MmadAtlasA2Streamk
from catlass_py.gemm.gemm_type import GemmType
from catlass_py.layout import RowMajor, zN
from catlass_py.numerics import dtypes as dt
from catlass_py.tile.copy_l0c_to_gm import CopyL0CToGm


class BlockMmadStreamk(BlockMmadSpec):
    """Assembled CATLASS ``BlockMmad<MmadAtlasA2Streamk<UNIT_FLAG, SHUFFLE_K>, L1, L0, A, B, C, Bias, TileCopy,
    TileMmad>``.

    Checks: ``(L1A + L1B) * STAGES <= L1``, ``L0A_TILE * STAGES <= L0A``, ``L0B_TILE * STAGES <= L0B``,
    ``L0.M * L0.N * sizeof(acc) <= L0C``, L1/L0 tiles agree on M and N, ``L0.K <= L1.K``, 32-byte alignment,
    RowMajor C, an fp32 accumulator (the partial sums are stored as float), and ``k_part_len_max > 0``.
    """

    name = "BlockMmadStreamk"
    CAPABILITIES = BlockMmadCapabilities(STREAMK_CALL)

    def __init__(self, policy: MmadAtlasA2Streamk, *args):
        super().__init__(policy, *args)
        what = self.describe_short(policy)
        stages = self.stages = policy.STAGES
        arch, l1 = self.arch, self.l1_tile_shape
        self._budget(what, "L1 (A + B tiles) x stages", (self.l1a_tile_size + self.l1b_tile_size) * stages,
                     arch.l1_size, "L1A_SIZE * STAGES + L1B_SIZE * STAGES <= L1_SIZE")
        self._check_l0_stages(what, stages)
        if self.element_accumulator != dt.FLOAT32:
            raise ConfigError(f"{what}: stream-K partial sums are stored as float; the accumulator is "
                              f"{self.element_accumulator}")
        c0a, c0b = self.element_a.c0, self.element_b.c0
        k_max = min(self.l0a_pingpong_size // self.element_a.nbytes(1) // l1.m // c0a * c0a,
                    self.l0b_pingpong_size // self.element_b.nbytes(1) // l1.n // c0b * c0b)
        if self.element_a == dt.FLOAT32 and self.element_b == dt.FLOAT32:
            k_max = round_down(k_max, 16)
        if k_max <= 0:
            raise ConfigError(f"{what}: an L0A/L0B ping-pong half cannot hold one K step of the {l1.m} x {l1.n} tile")
        self.k_part_len_max = k_max
        # CopyL0CToGmStreamkBlock: float accumulator -> float workspace, no conversion.
        self.copy_l0c_to_gm_streamk_block = CopyL0CToGm(arch, self.element_accumulator, GemmType(dt.FLOAT32, RowMajor))

    def __call__(self, resource, l1_buf_addr_start: int = 0) -> "_StreamkBlock":
        return _StreamkBlock(self, resource, l1_buf_addr_start)


class _StreamkBlock(PingpongStagesInstance):
    """One cube core's instance of :class:`BlockMmadStreamk` (buffers and events of
    :class:`PingpongStagesInstance`)."""

    def uses_accumulator_event(self) -> bool:
        """With the unit flag the C++ neither sets nor waits FIX_M 0."""
        return not self.spec.policy.enable_unit_flag

    def __call__(self, gm_block_a, layout_a, gm_block_b, layout_b, gm_block_c, layout_c, gm_w, layout_w,
                 gm_next_block_a, gm_next_block_b, actual_shape, actual_shape_next, is_first_block: bool,
                 has_next_block: bool, is_sk_block: bool) -> None:
        """Compute one block (or one stream-K K range of it) of ``actual_shape``; store it to ``gm_block_c``
        (normal block) or as fp32 to ``gm_w`` with ``layout_w`` (stream-K block); if ``has_next_block``,
        prefetch the first K tile of the next call's block from ``gm_next_block_a/b``."""
        spec, ctx = self.spec, self.ctx
        m, n, k = GemmCoord(*actual_shape)
        if k == 0:
            raise ArgumentError("BlockMmadStreamk: k == 0 (CATLASS would store whatever L0C held)")
        l1, stages = spec.l1_tile_shape, spec.stages
        unit_flag = spec.policy.enable_unit_flag
        m_round = round_up(m, spec.l1_a_align.m_aligned)
        n_round = round_up(n, spec.l1_b_align.n_aligned)
        layout_in_l0c = zN.make_layout_in_l0c(m_round, n_round)
        k_tiles = ceil_div(k, l1.k)
        if not unit_flag:
            ctx.wait_flag(HardEvent.FIX_M, 0)
        start = ctx.block_idx if spec.policy.enable_shuffle_k else 0
        first = start % k_tiles
        last = (start + k_tiles - 1) % k_tiles
        k_actual = part_len(first, k_tiles, k, l1.k)
        for k_loop in range(k_tiles):
            t = (start + k_loop) % k_tiles
            if t == first and is_first_block:
                self.load_k_tile(self.l1_list_id, gm_block_a, layout_a, gm_block_b, layout_b, m, n, k, t)
            lid_next = (self.l1_list_id + 1) % stages
            k_actual_next = 0
            if t != last:
                k_actual_next = self.load_k_tile(lid_next, gm_block_a, layout_a, gm_block_b, layout_b, m, n, k,
                                                 (start + k_loop + 1) % k_tiles)
            if t == last and has_next_block:
                mn, nn, kn = GemmCoord(*actual_shape_next)
                k_actual_next = self.load_k_tile(lid_next, gm_next_block_a, layout_a, gm_next_block_b, layout_b,
                                                 mn, nn, kn, start % ceil_div(kn, l1.k))
            self._compute(self.l1_list_id, k_actual, m_round, n_round, layout_in_l0c, k_loop == 0,
                          k_loop == k_tiles - 1)
            self.l1_list_id = lid_next
            k_actual = k_actual_next
        if is_sk_block:
            self.store_l0c(gm_w, self.l0c, layout_w, layout_in_l0c, copy=spec.copy_l0c_to_gm_streamk_block)
        else:
            self.store_l0c(gm_block_c, self.l0c, layout_c.get_tile_layout(m, n), layout_in_l0c)

    def _compute(self, lid, k_actual, m_round, n_round, layout_in_l0c, first_tile, last_tile) -> None:
        spec, ctx = self.spec, self.ctx
        k_max, stages = spec.k_part_len_max, spec.stages
        parts = ceil_div(k_actual, k_max)
        l0a_id = l0b_id = 0
        l1a, l1b = self.l1a[lid], self.l1b[lid]
        for ki in range(parts):
            k_part = part_len(ki, parts, k_actual, k_max)
            l0a = self.l0a[l0a_id]
            ctx.wait_flag(HardEvent.M_MTE1, self.l0a_event[l0a_id])
            if ki == 0:
                ctx.wait_flag(HardEvent.MTE2_MTE1, self.l1a_event[lid])
            spec.tile_copy.copy_l1_to_l0a(l0a, l1a[spec.l1a_layout.offset(0, ki * k_max)],
                                          spec.layout_a_in_l0.make_layout(spec.element_a, m_round, k_part),
                                          spec.l1a_layout)
            if ki == parts - 1:
                ctx.set_flag(HardEvent.MTE1_MTE2, self.l1a_event[lid])
            l0b = self.l0b[l0b_id]
            ctx.wait_flag(HardEvent.M_MTE1, self.l0b_event[l0b_id])
            if ki == 0:
                ctx.wait_flag(HardEvent.MTE2_MTE1, self.l1b_event[lid])
            spec.tile_copy.copy_l1_to_l0b(l0b, l1b[spec.l1b_layout.offset(ki * k_max, 0)],
                                          spec.layout_b_in_l0.make_layout(spec.element_b, k_part, n_round),
                                          spec.l1b_layout)
            if ki == parts - 1:
                ctx.set_flag(HardEvent.MTE1_MTE2, self.l1b_event[lid])
            ctx.set_flag(HardEvent.MTE1_M, 0)
            ctx.wait_flag(HardEvent.MTE1_M, 0)
            init_c = first_tile and ki == 0
            flag = 0
            if spec.policy.enable_unit_flag:
                flag = 0b11 if (last_tile and ki == parts - 1) else 0b10
            spec.tile_mmad(self.l0c[layout_in_l0c.offset(0, 0)], l0a, l0b, m_round, n_round, k_part, init_c, flag)
            ctx.set_flag(HardEvent.M_MTE1, self.l0b_event[l0b_id])
            l0b_id = (l0b_id + 1) % stages
            ctx.set_flag(HardEvent.M_MTE1, self.l0a_event[l0a_id])
            l0a_id = (l0a_id + 1) % stages


__all__ = ["BlockMmadStreamk"]
