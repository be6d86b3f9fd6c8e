"""``BlockMmadTla`` for ``MmadPingpongTlaV2`` (CATLASS ``gemm/block/block_mmad_pingpong_tla_v2.hpp``): the TLA
ping-pong block of example 45 whose call takes only the block's tensors.

Synchronous, two L1 and L0 stages. The extents come from the tensors: the block of A is a ``TileView`` of
``L1_TILE_M x K``, its K tiles ``TileView``s of ``L1_TILE_M x L1_TILE_K``, each clipped to what remains (its
origin shape); every buffer tensor is ``MakeTensorLike`` of the tile it holds (the L1 stages in the fixed L1
layouts, L0A/L0B in zZ/nZ of the tile, L0C the accumulator layout of C's block), and the Mmad reads m, n, k from
the L0 tensors (``TileMmadTla``'s overload without extents: a one-row block runs as 16 rows on Atlas A2).
"""

from __future__ import annotations

from catlass_py.arch.pipes import HardEvent
from catlass_py.errors import ConfigError
from catlass_py.gemm.block.capabilities import TLA_V2_CALL, BlockMmadCapabilities
from catlass_py.gemm.block.mmad_pingpong_tla import BlockMmadTlaSpec
from catlass_py.gemm.coord import ceil_div
from catlass_py.gemm.dispatch_policy import MmadPingpongTlaV2
from catlass_py.lifetime import CloseOnExit
from catlass_py.tile.copy_tla import make_tensor_like
from catlass_py.tla import tile_view


class BlockMmadPingpongTlaV2(BlockMmadTlaSpec):
    """Assembled CATLASS ``BlockMmadTla<MmadPingpongTlaV2<ArchTag, ENABLE_UNIT_FLAG>, L1TileShape, L0TileShape,
    ElementA, ElementB, ElementC, ElementBias, TileCopy, TileMmad>``.

    Checks (CATLASS's ``static_assert``): ``(L1A_TILE_SIZE + L1B_TILE_SIZE) * STAGES <= L1_SIZE``,
    ``L0A_TILE_SIZE * STAGES <= L0A_SIZE`` (B likewise), ``L0C_TILE_SIZE <= L0C_SIZE``, L1/L0 tiles agree on M and N,
    ``L0_TILE_K <= L1_TILE_K``, 32-byte aligned extents, the C layout rule.
    """

    CAPABILITIES = BlockMmadCapabilities(TLA_V2_CALL)

    def __init__(self, policy: MmadPingpongTlaV2, *args):
        super().__init__(policy, *args)
        s, arch = policy.STAGES, self.arch
        self.stages = s
        self.budget("L1 tiles", (self.l1a_tile_size + self.l1b_tile_size) * s, arch.l1_size,
                    "(L1A_TILE_SIZE + L1B_TILE_SIZE) * STAGES <= L1_SIZE")
        self.budget("L0A tiles", self.l0a_tile_size * s, arch.l0a_size, "L0A_TILE_SIZE * STAGES <= L0A_SIZE")
        self.budget("L0B tiles", self.l0b_tile_size * s, arch.l0b_size, "L0B_TILE_SIZE * STAGES <= L0B_SIZE")
        self.budget("L0C tile", self.l0c_tile_size, arch.l0c_size, "L0C_TILE_SIZE <= L0C_SIZE")

    def __call__(self, resource, l1_buf_addr_start: int = 0) -> "_PingpongTlaV2Block":
        return _PingpongTlaV2Block(self, resource, l1_buf_addr_start)


class _PingpongTlaV2Block(CloseOnExit):
    """One cube core's :class:`BlockMmadPingpongTlaV2` (constructor, ``operator()``, destructor)."""

    def __init__(self, spec: BlockMmadPingpongTlaV2, resource, l1_buf_addr_start: int = 0):
        self.spec = spec
        self.ctx = ctx = resource.ctx
        s = spec.stages
        ea, eb = spec.element_a, spec.element_b
        l1b_start = l1_buf_addr_start + spec.l1a_tile_size * s
        self.l1a = [resource.l1_buf.get_buffer_by_byte(ea, l1_buf_addr_start + spec.l1a_tile_size * i) for i in range(s)]
        self.l1b = [resource.l1_buf.get_buffer_by_byte(eb, l1b_start + spec.l1b_tile_size * i) for i in range(s)]
        self.l0a = [resource.l0a_buf.get_buffer_by_byte(ea, spec.l0a_tile_size * i) for i in range(s)]
        self.l0b = [resource.l0b_buf.get_buffer_by_byte(eb, spec.l0b_tile_size * i) for i in range(s)]
        self.l0c = resource.l0c_buf.get_buffer_by_byte(spec.element_accumulator, 0)
        self.l1a_event = list(range(s))
        self.l1b_event = [s + i for i in range(s)]
        self.l0a_event = list(range(s))
        self.l0b_event = [s + i for i in range(s)]
        for i in range(s):
            ctx.set_flag(HardEvent.MTE1_MTE2, self.l1a_event[i])
            ctx.set_flag(HardEvent.MTE1_MTE2, self.l1b_event[i])
            ctx.set_flag(HardEvent.M_MTE1, self.l0a_event[i])
            ctx.set_flag(HardEvent.M_MTE1, self.l0b_event[i])
        ctx.set_flag(HardEvent.FIX_M, 0)
        self.l1_id = self.l0a_id = self.l0b_id = 0

    def synchronize_block(self) -> None:
        """Nothing is pending in a synchronous block."""

    def close(self) -> None:
        ctx = self.ctx
        for i in range(self.spec.stages):
            ctx.wait_flag(HardEvent.MTE1_MTE2, self.l1a_event[i])
            ctx.wait_flag(HardEvent.MTE1_MTE2, self.l1b_event[i])
            ctx.wait_flag(HardEvent.M_MTE1, self.l0a_event[i])
            ctx.wait_flag(HardEvent.M_MTE1, self.l0b_event[i])
        ctx.wait_flag(HardEvent.FIX_M, 0)

    def _l1_tiles(self, tensor_a, tensor_b, lid: int, k_tile: int):
        spec = self.spec
        l1, tc = spec.l1_tile_shape, spec.tile_copy
        tile_a = tile_view(tensor_a, (0, k_tile), (l1.m, l1.k))
        tile_b = tile_view(tensor_b, (k_tile, 0), (l1.k, l1.n))
        l1a = make_tensor_like(tc.layout_tag_l1a, self.l1a[lid], tile_a, layout_base=spec.l1a_layout)
        l1b = make_tensor_like(tc.layout_tag_l1b, self.l1b[lid], tile_b, layout_base=spec.l1b_layout)
        return tile_a, tile_b, l1a, l1b

    def __call__(self, tensor_a, tensor_b, tensor_c) -> None:
        """Compute the block C = A @ B of the tensors' origin shapes and store it."""
        spec, ctx = self.spec, self.ctx
        l0, tc, s = spec.l0_tile_shape, spec.tile_copy, spec.stages
        unit = spec.policy.enable_unit_flag
        for t, label in ((tensor_a, "A"), (tensor_b, "B"), (tensor_c, "C")):
            if getattr(t, "builtin", None) is None or t.position != "GM":
                raise ConfigError(f"{spec.name}: tensor{label} must be a TLA tensor over a GM tensor, got {t!r}")
        tensor_l0c = make_tensor_like("L0C", self.l0c, tensor_c)
        tile_a, tile_b, l1a, l1b = self._l1_tiles(tensor_a, tensor_b, self.l1_id, 0)
        ctx.wait_flag(HardEvent.MTE1_MTE2, self.l1a_event[self.l1_id])
        tc.copy_gm_to_l1_a(l1a, tile_a)
        ctx.set_flag(HardEvent.MTE2_MTE1, self.l1a_event[self.l1_id])
        ctx.wait_flag(HardEvent.MTE1_MTE2, self.l1b_event[self.l1_id])
        tc.copy_gm_to_l1_b(l1b, tile_b)
        ctx.set_flag(HardEvent.MTE2_MTE1, self.l1b_event[self.l1_id])
        if not unit:
            ctx.wait_flag(HardEvent.FIX_M, 0)
        m_loops = ceil_div(tensor_l0c.origin_shape[0], l0.m)
        n_loops = ceil_div(tensor_l0c.origin_shape[1], l0.n)
        k_tiles = ceil_div(tensor_a.origin_shape[1], spec.l1_tile_shape.k)
        for kt in range(k_tiles):
            nxt = (self.l1_id + 1) % s
            if kt < k_tiles - 1:
                tile_a, tile_b, l1a_n, l1b_n = self._l1_tiles(tensor_a, tensor_b, nxt, kt + 1)
                ctx.wait_flag(HardEvent.MTE1_MTE2, self.l1a_event[nxt])
                tc.copy_gm_to_l1_a(l1a_n, tile_a)
                ctx.set_flag(HardEvent.MTE2_MTE1, self.l1a_event[nxt])
                ctx.wait_flag(HardEvent.MTE1_MTE2, self.l1b_event[nxt])
                tc.copy_gm_to_l1_b(l1b_n, tile_b)
                ctx.set_flag(HardEvent.MTE2_MTE1, self.l1b_event[nxt])
            _, _, l1a, l1b = self._l1_tiles(tensor_a, tensor_b, self.l1_id, kt)
            k_parts = ceil_div(l1a.origin_shape[1], l0.k)
            for mi in range(m_loops):
                for ki in range(k_parts):
                    tile_l1a = tile_view(l1a, (mi, ki), (l0.m, l0.k))
                    l0a = make_tensor_like(tc.layout_tag_l0a, self.l0a[self.l0a_id], tile_l1a)
                    ctx.wait_flag(HardEvent.M_MTE1, self.l0a_event[self.l0a_id])
                    if mi == 0 and ki == 0:
                        ctx.wait_flag(HardEvent.MTE2_MTE1, self.l1a_event[self.l1_id])
                    tc.copy_l1_to_l0a(l0a, tile_l1a)
                    if mi == m_loops - 1 and ki == k_parts - 1:
                        ctx.set_flag(HardEvent.MTE1_MTE2, self.l1a_event[self.l1_id])
                    for ni in range(n_loops):
                        tile_l1b = tile_view(l1b, (ki, ni), (l0.k, l0.n))
                        l0b = make_tensor_like(tc.layout_tag_l0b, self.l0b[self.l0b_id], tile_l1b)
                        ctx.wait_flag(HardEvent.M_MTE1, self.l0b_event[self.l0b_id])
                        if ki == 0 and ni == 0:
                            ctx.wait_flag(HardEvent.MTE2_MTE1, self.l1b_event[self.l1_id])
                        tc.copy_l1_to_l0b(l0b, tile_l1b)
                        if ki == k_parts - 1 and ni == n_loops - 1:
                            ctx.set_flag(HardEvent.MTE1_MTE2, self.l1b_event[self.l1_id])
                        ctx.set_flag(HardEvent.MTE1_M, 0)
                        tile_l0c = tile_view(tensor_l0c, (mi, ni), (l0.m, l0.n))
                        ctx.wait_flag(HardEvent.MTE1_M, 0)
                        flag = 0
                        if unit:
                            last = kt == k_tiles - 1 and mi == m_loops - 1 and ki == k_parts - 1 and ni == n_loops - 1
                            flag = 0b11 if last else 0b10
                        spec.tile_mmad.from_shapes(tile_l0c, l0a, l0b, kt == 0 and ki == 0, flag)
                        ctx.set_flag(HardEvent.M_MTE1, self.l0b_event[self.l0b_id])
                        self.l0b_id = (self.l0b_id + 1) % s
                    ctx.set_flag(HardEvent.M_MTE1, self.l0a_event[self.l0a_id])
                    self.l0a_id = (self.l0a_id + 1) % s
            self.l1_id = nxt
        if not unit:
            ctx.set_flag(HardEvent.M_FIX, 0)
            ctx.wait_flag(HardEvent.M_FIX, 0)
            tc.copy_l0c_to_gm(tensor_c, tensor_l0c)
            ctx.set_flag(HardEvent.FIX_M, 0)
        else:
            tc.copy_l0c_to_gm(tensor_c, tensor_l0c, 0b11)


__all__ = ["BlockMmadPingpongTlaV2"]
