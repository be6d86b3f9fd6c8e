"""``BlockMmadTla`` for ``MmadAtlasA2Preload`` (CATLASS ``gemm/block/block_mmad_preload_tla.hpp``): the TLA block of
examples 14 and 42.

Synchronous with prefetch: a call computes and stores its block, and while multiplying its last K tile it already
loads the first K tile of the core's next block (``tensorNextA``/``tensorNextB``, ``hasNextBlock``); the first call
of a core (``isFirstBlock``) loads its own first tile. Two L1 and L0 stages; the GM -> L1 copies take the tile's
actual shape (``PaddingPackedTileCopyTla``: the operands may come from padded workspaces). With shuffle-K, core
``i`` starts at K tile ``i % kTiles``. The block's m and n are rounded up to the L1 alignment (16 or C0) for the
accumulator and the L0 tiles, as CATLASS does; optional callbacks run right before and after the fixpipe.
"""

from __future__ import annotations

from catlass_py.arch.pipes import HardEvent
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.gemm.block.capabilities import PRELOAD_TLA_CALL, BlockMmadCapabilities
from catlass_py.gemm.block.mmad_pingpong_tla import BlockMmadTlaSpec
from catlass_py.gemm.coord import GemmCoord, ceil_div, round_up
from catlass_py.gemm.dispatch_policy import MmadAtlasA2Preload
from catlass_py.gemm.helper import l1_align
from catlass_py.layout import ColumnMajor, RowMajor
from catlass_py.lifetime import CloseOnExit
from catlass_py.tile.copy_tla import CopyGmToL1TlaExt, make_tensor
from catlass_py.tla import get_tile, make_layout_l0c, make_layout_tag

_TAGS = {"RowMajor": RowMajor, "ColumnMajor": ColumnMajor}


class BlockMmadPreloadTla(BlockMmadTlaSpec):
    """Assembled CATLASS ``BlockMmadTla<MmadAtlasA2Preload<ENABLE_UNIT_FLAG, ENABLE_SHUFFLE_K>, L1TileShape,
    L0TileShape, TensorA, TensorB, TensorC, ElementBias, TileCopy, TileMmad>``.

    Checks (CATLASS's ``static_assert``): LayoutC RowMajor, ``(L1A_TILE_SIZE + L1B_TILE_SIZE) * STAGES <= L1_SIZE``,
    ``L0A_TILE_SIZE * STAGES <= L0A_SIZE`` (B likewise), ``L0C_TILE_SIZE <= L0C_SIZE``, L1/L0 tiles agree on M and N,
    ``L0_TILE_K <= L1_TILE_K``, 32-byte aligned extents; the GM -> L1 copies must take an actual shape
    (``CopyGmToL1TlaExt``, the ``PaddingPackedTileCopyTla`` bundle).
    """

    CAPABILITIES = BlockMmadCapabilities(PRELOAD_TLA_CALL)

    def __init__(self, policy: MmadAtlasA2Preload, *args):
        super().__init__(policy, *args)
        s, arch, what, tc = policy.STAGES, self.arch, self.what, self.tile_copy
        if self.layout_tag_c != "RowMajor":
            raise ConfigError(f"{what}: LayoutC only support RowMajor yet (got {self.layout_tag_c})")
        for name in ("copy_gm_to_l1_a", "copy_gm_to_l1_b"):
            if not isinstance(getattr(tc, name), CopyGmToL1TlaExt):
                raise ConfigError(f"{what}: the TileCopy's {name} must take the tile's actual shape (CopyGmToL1TlaExt: "
                                  f"build the bundle with PaddingPackedTileCopyTla)")
        if self.layout_tag_a not in _TAGS or self.layout_tag_b not in _TAGS:
            raise ConfigError(f"{what}: A and B must be RowMajor or ColumnMajor (got {self.layout_tag_a}, "
                              f"{self.layout_tag_b})")
        self.stages = s
        self.budget("L1 tiles", (self.l1a_tile_size + self.l1b_tile_size) * s, arch.l1_size,
                    "(L1A_TILE_SIZE + L1B_TILE_SIZE) * STAGES <= L1_SIZE")
        self.budget("L0A tiles", self.l0a_tile_size * s, arch.l0a_size, "L0A_TILE_SIZE * STAGES <= L0A_SIZE")
        self.budget("L0B tiles", self.l0b_tile_size * s, arch.l0b_size, "L0B_TILE_SIZE * STAGES <= L0B_SIZE")
        self.budget("L0C tile", self.l0c_tile_size, arch.l0c_size, "L0C_TILE_SIZE <= L0C_SIZE")
        self.m_aligned = l1_align(self.element_a, _TAGS[self.layout_tag_a]).m_aligned
        self.n_aligned = l1_align(self.element_b, _TAGS[self.layout_tag_b]).n_aligned

    def __call__(self, resource, l1_buf_addr_start: int = 0) -> "_PreloadTlaBlock":
        return _PreloadTlaBlock(self, resource, l1_buf_addr_start)


class _PreloadTlaBlock(CloseOnExit):
    """One cube core's :class:`BlockMmadPreloadTla` (constructor, ``operator()``, destructor)."""

    def __init__(self, spec: BlockMmadPreloadTla, resource, l1_buf_addr_start: int = 0):
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
        """Nothing is pending: every call stores its block."""

    def close(self) -> None:
        ctx = self.ctx
        for i in range(self.spec.stages):
            ctx.wait_flag(HardEvent.MTE1_MTE2, self.l1a_event[i])
            ctx.wait_flag(HardEvent.MTE1_MTE2, self.l1b_event[i])
            ctx.wait_flag(HardEvent.M_MTE1, self.l0a_event[i])
            ctx.wait_flag(HardEvent.M_MTE1, self.l0b_event[i])
        ctx.wait_flag(HardEvent.FIX_M, 0)

    def _load(self, lid: int, tensor_a, tensor_b, k_off: int, m: int, n: int, k: int) -> None:
        """K tile ``[k_off, k_off + k)`` of A (m rows) and B (n columns) into L1 stage ``lid``."""
        spec, ctx, tc = self.spec, self.ctx, self.spec.tile_copy
        ctx.wait_flag(HardEvent.MTE1_MTE2, self.l1a_event[lid])
        tc.copy_gm_to_l1_a(make_tensor(self.l1a[lid], spec.l1a_layout), get_tile(tensor_a, (0, k_off), (m, k)), (m, k))
        ctx.set_flag(HardEvent.MTE2_MTE1, self.l1a_event[lid])
        ctx.wait_flag(HardEvent.MTE1_MTE2, self.l1b_event[lid])
        tc.copy_gm_to_l1_b(make_tensor(self.l1b[lid], spec.l1b_layout), get_tile(tensor_b, (k_off, 0), (k, n)), (k, n))
        ctx.set_flag(HardEvent.MTE2_MTE1, self.l1b_event[lid])

    def __call__(self, tensor_a, tensor_b, tensor_c, tensor_next_a, tensor_next_b, actual_shape, next_actual_shape,
                 is_first_block: bool, has_next_block: bool, callback_before_fixpipe=None,
                 callback_after_fixpipe=None) -> None:
        """Compute and store block C; prefetch the next block's first K tile when ``has_next_block``."""
        spec, ctx, p, tc = self.spec, self.ctx, self.spec.policy, self.spec.tile_copy
        l1, l0, s = spec.l1_tile_shape, spec.l0_tile_shape, spec.stages
        m, n, k = GemmCoord(*actual_shape)
        mn, nn, kn = GemmCoord(*next_actual_shape)
        if k == 0:
            raise ArgumentError(f"{spec.name}: k == 0 (CATLASS would store whatever L0C held)")
        m_round, n_round = round_up(m, spec.m_aligned), round_up(n, spec.n_aligned)
        tensor_l0c = make_tensor(self.l0c, make_layout_l0c(m_round, n_round))
        if not p.enable_unit_flag:
            ctx.wait_flag(HardEvent.FIX_M, 0)
        start = ctx.block_idx if p.enable_shuffle_k else 0
        k_tiles = ceil_div(k, l1.k)
        first, last = start % k_tiles, (start + k_tiles - 1) % k_tiles
        k_actual = l1.k if first < k_tiles - 1 else k - first * l1.k
        k_tiles_next = ceil_div(kn, l1.k) if has_next_block else 1
        first_next = start % k_tiles_next
        if is_first_block:
            self._load(self.l1_id, tensor_a, tensor_b, first * l1.k, m, n, k_actual)
        m_loops, n_loops = ceil_div(m_round, l0.m), ceil_div(n_round, l0.n)
        for kt in range(k_tiles):
            shuffle = (start + kt) % k_tiles
            nxt = (self.l1_id + 1) % s
            k_actual_next = 0
            if shuffle != last:
                sk = (start + kt + 1) % k_tiles
                k_actual_next = l1.k if sk < k_tiles - 1 else k - sk * l1.k
                self._load(nxt, tensor_a, tensor_b, sk * l1.k, m, n, k_actual_next)
            if shuffle == last and has_next_block:
                k_actual_next = l1.k if first_next < k_tiles_next - 1 else kn - first_next * l1.k
                self._load(nxt, tensor_next_a, tensor_next_b, first_next * l1.k, mn, nn, k_actual_next)
            tensor_l1a = make_tensor(self.l1a[self.l1_id], spec.l1a_layout)
            tensor_l1b = make_tensor(self.l1b[self.l1_id], spec.l1b_layout)
            k_parts = ceil_div(k_actual, l0.k)
            for mi in range(m_loops):
                m_part = l0.m if mi < m_loops - 1 else m_round - mi * l0.m
                for ki in range(k_parts):
                    k_part = l0.k if ki < k_parts - 1 else k_actual - ki * l0.k
                    tensor_l0a = make_tensor(self.l0a[self.l0a_id],
                                             make_layout_tag(spec.element_a, tc.layout_tag_l0a, m_part, k_part))
                    tile_l1a = get_tile(tensor_l1a, (mi * l0.m, ki * l0.k), (m_part, k_part))
                    ctx.wait_flag(HardEvent.M_MTE1, self.l0a_event[self.l0a_id])
                    if mi == 0 and ki == 0:
                        ctx.wait_flag(HardEvent.MTE2_MTE1, self.l1a_event[self.l1_id])
                    tc.copy_l1_to_l0a(tensor_l0a, tile_l1a)
                    if mi == m_loops - 1 and ki == k_parts - 1:
                        ctx.set_flag(HardEvent.MTE1_MTE2, self.l1a_event[self.l1_id])
                    for ni in range(n_loops):
                        n_part = l0.n if ni < n_loops - 1 else n_round - ni * l0.n
                        tensor_l0b = make_tensor(self.l0b[self.l0b_id],
                                                 make_layout_tag(spec.element_b, tc.layout_tag_l0b, k_part, n_part))
                        tile_l1b = get_tile(tensor_l1b, (ki * l0.k, ni * l0.n), (k_part, n_part))
                        ctx.wait_flag(HardEvent.M_MTE1, self.l0b_event[self.l0b_id])
                        if ki == 0 and ni == 0:
                            ctx.wait_flag(HardEvent.MTE2_MTE1, self.l1b_event[self.l1_id])
                        tc.copy_l1_to_l0b(tensor_l0b, tile_l1b)
                        if ki == k_parts - 1 and ni == n_loops - 1:
                            ctx.set_flag(HardEvent.MTE1_MTE2, self.l1b_event[self.l1_id])
                        ctx.set_flag(HardEvent.MTE1_M, 0)
                        tile_l0c = get_tile(tensor_l0c, (mi * l0.m, ni * l0.n), (m_part, n_part))
                        ctx.wait_flag(HardEvent.MTE1_M, 0)
                        flag = 0
                        if p.enable_unit_flag:
                            end = kt == k_tiles - 1 and mi == m_loops - 1 and ki == k_parts - 1 and ni == n_loops - 1
                            flag = 0b11 if end else 0b10
                        spec.tile_mmad(tile_l0c, tensor_l0a, tensor_l0b, m_part, n_part, k_part, kt == 0 and ki == 0,
                                       flag)
                        ctx.set_flag(HardEvent.M_MTE1, self.l0b_event[self.l0b_id])
                        self.l0b_id = (self.l0b_id + 1) % s
                    ctx.set_flag(HardEvent.M_MTE1, self.l0a_event[self.l0a_id])
                    self.l0a_id = (self.l0a_id + 1) % s
            self.l1_id = nxt
            k_actual = k_actual_next
        if callback_before_fixpipe is not None:
            callback_before_fixpipe()
        if not p.enable_unit_flag:
            ctx.set_flag(HardEvent.M_FIX, 0)
            ctx.wait_flag(HardEvent.M_FIX, 0)
            tc.copy_l0c_to_gm(tensor_c, tensor_l0c)
            ctx.set_flag(HardEvent.FIX_M, 0)
        else:
            tc.copy_l0c_to_gm(tensor_c, tensor_l0c, 0b11)
        if callback_after_fixpipe is not None:
            callback_after_fixpipe()


__all__ = ["BlockMmadPreloadTla"]
