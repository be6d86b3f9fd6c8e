"""``BlockMmadTla`` for ``MmadFullLoadA`` (CATLASS ``gemm/block/block_mmad_pingpong_full_loadA_tla.hpp``): the TLA
block of example 44 that loads the block's whole ``L1_TILE_M x K`` panel of A into L1 once and streams B.

Synchronous. L1: A's panel from the first byte (``L1A_TILE_SIZE = L1_SIZE / 2`` reserved for it, laid out
``zN(L1_TILE_M, K)`` for the call's K), then ``L1B_STAGES`` tiles of B. A call with ``needLoadL1`` false reuses
the panel already in L1 (the kernel passes false when the previous block on this core had the same A panel).
With shuffle-K, core ``i`` visits the K tiles from tile ``i % kTiles`` on (fewer cores read the same B tile at
once). A block of one row is computed as 16 rows on Atlas A2 (no GEMV mode).
"""

from __future__ import annotations

from catlass_py.arch.context import EVENT_ID_COUNT
from catlass_py.arch.pipes import HardEvent
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.gemm.block.capabilities import FULL_LOAD_A_CALL, BlockMmadCapabilities
from catlass_py.gemm.block.mmad_pingpong_tla import BlockMmadTlaSpec
from catlass_py.gemm.coord import GemmCoord, ceil_div
from catlass_py.gemm.dispatch_policy import MmadFullLoadA
from catlass_py.lifetime import CloseOnExit
from catlass_py.tile.copy_tla import make_tensor
from catlass_py.tla import get_tile, make_layout_l0c, make_layout_tag


class BlockMmadFullLoadATla(BlockMmadTlaSpec):
    """Assembled CATLASS ``BlockMmadTla<MmadFullLoadA<...>, L1TileShape, L0TileShape, ElementA, ElementB, ElementC,
    ElementBias, TileCopy, TileMmad>``.

    Checks (CATLASS's ``static_assert``): HF32 only for float (not modelled), ``L0C_STAGES == 1`` with the unit
    flag, ``L1A_TILE_SIZE * L1A_STAGES + L1B_TILE_SIZE * L1B_STAGES <= L1_SIZE`` with ``L1A_TILE_SIZE = L1_SIZE / 2``,
    the L0 budgets, L1/L0 tiles agree on M and N, ``L0_TILE_K <= L1_TILE_K``, event ids. Whether A's panel fits
    (``L1_TILE_M * K * sizeof(A) + L1_TILE_K * L1_TILE_N * 2 * sizeof(B) <= L1_SIZE``) depends on K: the kernel's
    ``CanImplement`` checks it, and a call checks that the panel fits its half of L1.
    """

    CAPABILITIES = BlockMmadCapabilities(FULL_LOAD_A_CALL)

    def __init__(self, policy: MmadFullLoadA, *args):
        super().__init__(policy, *args)
        p, arch, what = policy, self.arch, self.what
        if p.use_hf32_mode:
            if self.element_a.name != "float32" or self.element_b.name != "float32":
                raise ConfigError(f"{what}: HF32 MODE only supports in float (USE_HF32_MODE needs float A and B)")
            raise ConfigError(f"{what}: USE_HF32_MODE (fp32 inputs rounded to HF32 by the cube) is not modelled")
        if p.enable_unit_flag and p.l0c_stages != 1:
            raise ConfigError(f"{what}: L0C_STAGES must be 1 when UnitFlag is true (!(ENABLE_UNIT_FLAG && "
                              f"L0C_STAGES != 1)), got L0C_STAGES = {p.l0c_stages}")
        self.l1a_tile_size = arch.l1_size // 2
        self.budget("L1 tiles", self.l1a_tile_size * p.l1a_stages + self.l1b_tile_size * p.l1b_stages, arch.l1_size,
                    "L1A_TILE_SIZE * L1A_STAGES + L1B_TILE_SIZE * L1B_STAGES <= L1_SIZE, L1A_TILE_SIZE = L1_SIZE / 2")
        self.budget("L0A tiles", self.l0a_tile_size * p.l0a_stages, arch.l0a_size, "L0A_TILE_SIZE * L0A_STAGES <= L0A_SIZE")
        self.budget("L0B tiles", self.l0b_tile_size * p.l0b_stages, arch.l0b_size, "L0B_TILE_SIZE * L0B_STAGES <= L0B_SIZE")
        self.budget("L0C tiles", self.l0c_tile_size * p.l0c_stages, arch.l0c_size, "L0C_TILE_SIZE * L0C_STAGES <= L0C_SIZE")
        for label, used, formula in (("L1 stages", p.l1a_stages + p.l1b_stages, "(L1A_STAGES + L1B_STAGES) <= 8"),
                                     ("L0 stages", p.l0a_stages + p.l0b_stages, "(L0A_STAGES + L0B_STAGES) <= 8"),
                                     ("L0C stages", p.l0c_stages, "L0C_STAGES <= 8")):
            self.events(label, used, EVENT_ID_COUNT, formula)

    def fits(self, k: int) -> bool:
        """The kernel's ``CanImplement``: ``L1_TILE_M * k * sizeof(A) + L1_TILE_K * L1_TILE_N * 2 * sizeof(B) <=
        L1_SIZE`` (A's whole panel and two B tiles in L1)."""
        l1 = self.l1_tile_shape
        return self.element_a.nbytes(l1.m * k) + self.element_b.nbytes(l1.k * l1.n * 2) <= self.arch.l1_size

    def __call__(self, resource, l1_buf_addr_start: int = 0) -> "_FullLoadATlaBlock":
        return _FullLoadATlaBlock(self, resource, l1_buf_addr_start)


class _FullLoadATlaBlock(CloseOnExit):
    """One cube core's :class:`BlockMmadFullLoadATla` (constructor, ``operator()``, destructor)."""

    def __init__(self, spec: BlockMmadFullLoadATla, resource, l1_buf_addr_start: int = 0):
        self.spec = spec
        self.ctx = ctx = resource.ctx
        p = spec.policy
        ea, eb, acc = spec.element_a, spec.element_b, spec.element_accumulator
        l1b_start = l1_buf_addr_start + spec.l1a_tile_size * p.l1a_stages
        self.l1a = [resource.l1_buf.get_buffer_by_byte(ea, l1_buf_addr_start + spec.l1a_tile_size * i)
                    for i in range(p.l1a_stages)]
        self.l1b = [resource.l1_buf.get_buffer_by_byte(eb, l1b_start + spec.l1b_tile_size * i)
                    for i in range(p.l1b_stages)]
        self.l0a = [resource.l0a_buf.get_buffer_by_byte(ea, spec.l0a_tile_size * i) for i in range(p.l0a_stages)]
        self.l0b = [resource.l0b_buf.get_buffer_by_byte(eb, spec.l0b_tile_size * i) for i in range(p.l0b_stages)]
        self.l1a_event = list(range(p.l1a_stages))
        self.l1b_event = [p.l1a_stages + i for i in range(p.l1b_stages)]
        self.l0a_event = list(range(p.l0a_stages))
        self.l0b_event = [p.l0a_stages + i for i in range(p.l0b_stages)]
        for e in self.l1b_event:
            ctx.set_flag(HardEvent.MTE1_MTE2, e)
        for e in self.l0a_event + self.l0b_event:
            ctx.set_flag(HardEvent.M_MTE1, e)
        if not p.enable_unit_flag:
            self.l0c = [resource.l0c_buf.get_buffer_by_byte(acc, spec.l0c_tile_size * i) for i in range(p.l0c_stages)]
            self.l0c_event = list(range(p.l0c_stages))
            for e in self.l0c_event:
                ctx.set_flag(HardEvent.FIX_M, e)
        else:
            self.l0c, self.l0c_event = [resource.l0c_buf.get_buffer_by_byte(acc, 0)], [0]
        self.l1b_id = self.l0a_id = self.l0b_id = self.l0c_id = 0
        self.last_b = [None] * p.l1b_stages

    def synchronize_block(self) -> None:
        """Nothing is pending in a synchronous block."""

    def close(self) -> None:
        ctx, p = self.ctx, self.spec.policy
        for e in self.l1b_event:
            ctx.wait_flag(HardEvent.MTE1_MTE2, e)
        for e in self.l0a_event + self.l0b_event:
            ctx.wait_flag(HardEvent.M_MTE1, e)
        if not p.enable_unit_flag:
            for e in self.l0c_event:
                ctx.wait_flag(HardEvent.FIX_M, e)

    def _load_b(self, tensor_b, lid: int, k_off: int, k: int, n: int) -> None:
        spec, ctx = self.spec, self.ctx
        tile = get_tile(tensor_b, (k_off, 0), (k, n))
        ctx.wait_flag(HardEvent.MTE1_MTE2, self.l1b_event[lid])
        key = (tile.builtin.buffer.id, tile.builtin.byte_offset, tile.coord)
        if not spec.policy.enable_l1_resident or self.last_b[lid] != key:
            spec.tile_copy.copy_gm_to_l1_b(make_tensor(self.l1b[lid], spec.l1b_layout), tile)
            self.last_b[lid] = key
        ctx.set_flag(HardEvent.MTE2_MTE1, self.l1b_event[lid])

    def __call__(self, tensor_a, tensor_b, tensor_c, actual_shape, need_load_l1: bool = True) -> None:
        """Compute block C = A @ B (``actual_shape`` = m, n, k) and store it; ``need_load_l1`` false reuses A's
        panel in L1."""
        spec, ctx, p = self.spec, self.ctx, self.spec.policy
        m, n, k = GemmCoord(*actual_shape)
        if k == 0:
            raise ArgumentError(f"{spec.name}: k == 0 (CATLASS would store whatever L0C held)")
        l1, l0, tc = spec.l1_tile_shape, spec.l0_tile_shape, spec.tile_copy
        layout_l1a = make_layout_tag(spec.element_a, tc.layout_tag_l1a, l1.m, k)
        if spec.element_a.nbytes(layout_l1a.cosize()) > spec.l1a_tile_size:
            raise ConfigError(f"{spec.name}: A's {l1.m} x {k} panel ({spec.element_a.nbytes(layout_l1a.cosize())} "
                              f"bytes) does not fit the {spec.l1a_tile_size} bytes of L1 reserved for it (the "
                              f"kernel's CanImplement: L1_TILE_M * K * sizeof(A) + L1_TILE_K * L1_TILE_N * 2 * "
                              f"sizeof(B) <= L1_SIZE)")
        tensor_l1a = make_tensor(self.l1a[0], layout_l1a)
        if need_load_l1:
            ctx.set_flag(HardEvent.MTE1_MTE2, self.l1a_event[0])
            ctx.wait_flag(HardEvent.MTE1_MTE2, self.l1a_event[0])
            tc.copy_gm_to_l1_a(tensor_l1a, get_tile(tensor_a, (0, 0), (m, k)))
            ctx.set_flag(HardEvent.MTE2_MTE1, self.l1a_event[0])
            ctx.wait_flag(HardEvent.MTE2_MTE1, self.l1a_event[0])
        m_l1 = 16 if (m == 1 and spec.arch.arch_code == 2201) else m
        n_l1 = n
        tensor_l0c = make_tensor(self.l0c[self.l0c_id], make_layout_l0c(m_l1, n_l1))
        k_tiles = ceil_div(k, l1.k)
        if p.l1b_stages == 1 and k_tiles > 1:
            # CATLASS (block_mmad_pingpong_full_loadA_tla.hpp) preloads B's next K tile into the one L1B buffer after
            # WaitFlag<MTE1_MTE2> on it, before the L1 -> L0B loads of the tile the cube still reads there: the
            # hardware's MTE2 stalls until MTE1 frees the buffer later in program order. This simulator runs a
            # core's instructions in program order, so it cannot reorder that load after the free.
            raise ConfigError(f"{spec.name}: L1B_STAGES = 1 with {k_tiles} K tiles of B (k = {k}, L1 K = {l1.k}): the "
                              "preload of each next tile waits for the buffer the current tile still occupies, which "
                              "this in-order simulator cannot run; use l1b_stages=2, or an L1 K tile that covers k")
        start = ctx.block_idx if p.enable_shuffle_k else 0
        first = start % k_tiles
        k_l1 = l1.k if first < k_tiles - 1 else k - first * l1.k
        self._load_b(tensor_b, self.l1b_id, first * l1.k, k_l1, n)
        if not p.enable_unit_flag:
            ctx.wait_flag(HardEvent.FIX_M, self.l0c_event[self.l0c_id])
        m_loops, n_loops = ceil_div(m_l1, l0.m), ceil_div(n_l1, l0.n)
        for kt in range(k_tiles):
            shuffle = (start + kt) % k_tiles
            b_next = (self.l1b_id + 1) % p.l1b_stages
            k_l1_next = 0
            if kt < k_tiles - 1:
                nxt = (start + kt + 1) % k_tiles
                k_l1_next = l1.k if nxt < k_tiles - 1 else k - nxt * l1.k
                self._load_b(tensor_b, b_next, nxt * l1.k, k_l1_next, n)
            tensor_l1b = make_tensor(self.l1b[self.l1b_id], spec.l1b_layout)
            k_loops = ceil_div(k_l1, l0.k)
            for mi in range(m_loops):
                m_l0 = l0.m if mi < m_loops - 1 else m_l1 - mi * l0.m
                for ki in range(k_loops):
                    k_l0 = l0.k if ki < k_loops - 1 else k_l1 - ki * l0.k
                    tensor_l0a = make_tensor(self.l0a[self.l0a_id],
                                             make_layout_tag(spec.element_a, tc.layout_tag_l0a, m_l0, k_l0))
                    tile_l1a = get_tile(tensor_l1a, (mi * l0.m, ki * l0.k + shuffle * l1.k), (m_l0, k_l0))
                    ctx.wait_flag(HardEvent.M_MTE1, self.l0a_event[self.l0a_id])
                    tc.copy_l1_to_l0a(tensor_l0a, tile_l1a)
                    init_c = kt == 0 and ki == 0
                    for ni in range(n_loops):
                        n_l0 = l0.n if ni < n_loops - 1 else n_l1 - ni * l0.n
                        tensor_l0b = make_tensor(self.l0b[self.l0b_id],
                                                 make_layout_tag(spec.element_b, tc.layout_tag_l0b, k_l0, n_l0))
                        tile_l1b = get_tile(tensor_l1b, (ki * l0.k, ni * l0.n), (k_l0, n_l0))
                        ctx.wait_flag(HardEvent.M_MTE1, self.l0b_event[self.l0b_id])
                        if mi == 0 and ki == 0 and ni == 0:
                            ctx.wait_flag(HardEvent.MTE2_MTE1, self.l1b_event[self.l1b_id])
                        tc.copy_l1_to_l0b(tensor_l0b, tile_l1b)
                        if mi == m_loops - 1 and ki == k_loops - 1 and ni == n_loops - 1:
                            ctx.set_flag(HardEvent.MTE1_MTE2, self.l1b_event[self.l1b_id])
                        ctx.set_flag(HardEvent.MTE1_M, self.l0c_event[self.l0c_id])
                        tile_l0c = get_tile(tensor_l0c, (mi * l0.m, ni * l0.n), (m_l0, n_l0))
                        ctx.wait_flag(HardEvent.MTE1_M, self.l0c_event[self.l0c_id])
                        unit_flag = 0
                        if p.enable_unit_flag:
                            last = kt == k_tiles - 1 and mi == m_loops - 1 and ki == k_loops - 1 and ni == n_loops - 1
                            unit_flag = 0b11 if last else 0b10
                        spec.tile_mmad(tile_l0c, tensor_l0a, tensor_l0b, m_l0, n_l0, k_l0, init_c, unit_flag)
                        ctx.set_flag(HardEvent.M_MTE1, self.l0b_event[self.l0b_id])
                        self.l0b_id = (self.l0b_id + 1) % p.l0b_stages
                    ctx.set_flag(HardEvent.M_MTE1, self.l0a_event[self.l0a_id])
                    self.l0a_id = (self.l0a_id + 1) % p.l0a_stages
            self.l1b_id = b_next
            k_l1 = k_l1_next
        if not p.enable_unit_flag:
            event = self.l0c_event[self.l0c_id]
            ctx.set_flag(HardEvent.M_FIX, event)
            ctx.wait_flag(HardEvent.M_FIX, event)
            tc.copy_l0c_to_gm(tensor_c, tensor_l0c)
            ctx.set_flag(HardEvent.FIX_M, event)
            self.l0c_id = (self.l0c_id + 1) % p.l0c_stages
        else:
            tc.copy_l0c_to_gm(tensor_c, tensor_l0c, 0b11)


__all__ = ["BlockMmadFullLoadATla"]
