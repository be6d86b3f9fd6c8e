"""BlockMmad for ``MmadAtlasA2PingpongBias`` (CATLASS ``gemm/block/block_mmad_pingpong_bias.hpp``).

The Pingpong block plus a bias row: at the start of each block the bias slice of the block's columns is
copied GM -> L1 (its own L1 region after the A/B stages, its own event id ``2 * STAGES``); for the first
L0 K-part of the block (``initC``) each L0 N-part of it is moved L1 -> BT and the Mmad starts L0C from the
bias instead of zero. Synchronous: one call computes and stores one block.

Bias events (id ``EVENT_ID_BIAS = 2 * STAGES``):

=================  =====================================  =======================================
event              set                                    waited
=================  =====================================  =======================================
MTE1_MTE2          construction; after the last L1->BT    before the next block's GM->L1 bias copy
MTE2_MTE1          after the GM->L1 bias copy             before the first L1->BT of the block
M_MTE1             construction; after each bias Mmad     before each L1->BT
=================  =====================================  =======================================
"""

from __future__ import annotations

from catlass_py.arch.pipes import HardEvent
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.gemm.block._base import BlockMmadSpec
from catlass_py.gemm.coord import GemmCoord, ceil_div, round_up
from catlass_py.gemm.dispatch_policy import MmadAtlasA2PingpongBias
from catlass_py.gemm.gemm_type import GemmType
from catlass_py.layout import VectorLayout, zN


class BlockMmadPingpongBias(BlockMmadSpec):
    """Assembled CATLASS ``BlockMmad<MmadAtlasA2PingpongBias<UNIT_FLAG>, L1, L0, A, B, C, BiasType, TileCopy,
    TileMmad>``.

    Checks: a VectorLayout ``BiasType`` whose element can initialise the accumulator (fp16/fp32 for float,
    int32 for int8; not bf16), ``L1A * STAGES + L1B * STAGES + L1.N * sizeof(bias) <= L1``, ``L0A_TILE * STAGES
    <= L0A``, ``L0B_TILE * STAGES <= L0B``, ``L0C_TILE <= L0C``, ``L0.N * sizeof(acc) <= BT``, L1/L0 tiles agree
    on M and N, ``L0.K <= L1.K``, 32-byte alignment, and the unit flag off for int8.
    """

    name = "BlockMmadPingpongBias"
    ASYNC = False

    def __init__(self, policy: MmadAtlasA2PingpongBias, *args):
        super().__init__(policy, *args)
        what = self.describe_short(policy)
        stages = policy.STAGES
        self.stages = stages
        bias = self.bias_type
        if not isinstance(bias, GemmType):
            raise ConfigError(f"{what}: BiasType must be a GemmType (e.g. GemmType('float16', VectorLayout)), got {bias!r}")
        if bias.layout is not VectorLayout:
            raise ConfigError(f"{what}: BiasType must use VectorLayout, got {bias.layout.__name__}")
        if bias.element.name == "bfloat16":
            raise ConfigError(f"{what}: Bias does not support bfloat16 (CATLASS static_assert)")
        if self.tile_copy.copy_gm_to_l1_bias is None or self.tile_copy.copy_l1_to_bt is None:
            raise ConfigError(f"{what}: the TileCopy bundle has no bias copies (build it with bias_type)")
        if policy.enable_unit_flag and self.element_a.bits == 8 and self.element_a.kind == "int":
            raise ConfigError(f"{what}: the unit flag must be off for int8 inputs (CATLASS dispatch_policy.hpp)")
        arch, l1, l0 = self.arch, self.l1_tile_shape, self.l0_tile_shape
        self.element_bias = bias.element
        self.l1_bias_size = bias.element.nbytes(l1.n)
        self._budget(what, "L1 (A + B tiles) x stages + bias",
                     (self.l1a_tile_size + self.l1b_tile_size) * stages + self.l1_bias_size, arch.l1_size,
                     "L1A_SIZE * STAGES + L1B_SIZE * STAGES + L1BIAS_SIZE <= L1_SIZE")
        self._budget(what, "L0A tiles", self.l0a_tile_size * stages, arch.l0a_size, "L0A_TILE_SIZE * STAGES <= L0A_SIZE")
        self._budget(what, "L0B tiles", self.l0b_tile_size * stages, arch.l0b_size, "L0B_TILE_SIZE * STAGES <= L0B_SIZE")
        self.l0c_tile_size = self.element_accumulator.nbytes(l0.m * l0.n)
        self._budget(what, "L0C tile", self.l0c_tile_size, arch.l0c_size, "L0C_TILE_SIZE <= L0C_SIZE")
        self.bias_buf_size = self.element_accumulator.nbytes(l0.n)
        self._budget(what, "bias table (L0.N accumulators)", self.bias_buf_size, arch.bt_size,
                     "BIAS_BUF_SIZE = L0TileShape::N * sizeof(ElementAccumulator) <= BT_SIZE; reduce L0TileShape::N")
        self._events(what, "L1 A/B stages + bias (MTE1_MTE2)", 2 * stages + 1)
        self.l0a_pingpong_size = arch.l0a_size // stages
        self.l0b_pingpong_size = arch.l0b_size // stages
        self.layout_bias_in_l1 = VectorLayout(l1.n)

    def __call__(self, resource, l1_buf_addr_start: int = 0) -> "_PingpongBiasBlock":
        return _PingpongBiasBlock(self, resource, l1_buf_addr_start)


class _PingpongBiasBlock:
    """One cube core's instance of :class:`BlockMmadPingpongBias`."""

    def __init__(self, spec: BlockMmadPingpongBias, resource, l1_buf_addr_start: int = 0):
        self.spec = spec
        self.ctx = ctx = resource.ctx
        s = spec.stages
        ea, eb = spec.element_a, spec.element_b
        l1b_off = l1_buf_addr_start + spec.l1a_tile_size * s
        l1_bias_off = l1b_off + spec.l1b_tile_size * s
        self.l1a = [resource.l1_buf.get_buffer_by_byte(ea, l1_buf_addr_start + spec.l1a_tile_size * i) for i in range(s)]
        self.l1b = [resource.l1_buf.get_buffer_by_byte(eb, l1b_off + spec.l1b_tile_size * i) for i in range(s)]
        self.l0a = [resource.l0a_buf.get_buffer_by_byte(ea, spec.l0a_pingpong_size * i) for i in range(s)]
        self.l0b = [resource.l0b_buf.get_buffer_by_byte(eb, spec.l0b_pingpong_size * i) for i in range(s)]
        self.l1a_event = list(range(s))
        self.l1b_event = [i + s for i in range(s)]
        self.l0a_event = list(range(s))
        self.l0b_event = [i + s for i in range(s)]
        for i in range(s):
            ctx.set_flag(HardEvent.MTE1_MTE2, self.l1a_event[i])
            ctx.set_flag(HardEvent.MTE1_MTE2, self.l1b_event[i])
            ctx.set_flag(HardEvent.M_MTE1, self.l0a_event[i])
            ctx.set_flag(HardEvent.M_MTE1, self.l0b_event[i])
        self.bias_event = 2 * s
        self.l0c = resource.l0c_buf.get_buffer_by_byte(spec.element_accumulator, 0)
        self.l1_bias = resource.l1_buf.get_buffer_by_byte(spec.element_bias, l1_bias_off)
        self.l0_bias = resource.bt_buf.get_buffer_by_byte(spec.element_accumulator, 0)
        ctx.set_flag(HardEvent.FIX_M, 0)
        ctx.set_flag(HardEvent.MTE1_MTE2, self.bias_event)
        ctx.set_flag(HardEvent.M_MTE1, self.bias_event)
        self.l1_list_id = 0
        self.l0a_list_id = 0
        self.l0b_list_id = 0

    def close(self) -> None:
        """The C++ destructor: wait for every buffer-free event, the bias ones included."""
        ctx = self.ctx
        for i in range(self.spec.stages):
            ctx.wait_flag(HardEvent.MTE1_MTE2, self.l1a_event[i])
            ctx.wait_flag(HardEvent.MTE1_MTE2, self.l1b_event[i])
            ctx.wait_flag(HardEvent.M_MTE1, self.l0a_event[i])
            ctx.wait_flag(HardEvent.M_MTE1, self.l0b_event[i])
        ctx.wait_flag(HardEvent.FIX_M, 0)
        ctx.wait_flag(HardEvent.MTE1_MTE2, self.bias_event)
        ctx.wait_flag(HardEvent.M_MTE1, self.bias_event)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        return False

    def synchronize_block(self) -> None:
        """Nothing is pending in a synchronous block (present so kernels can call it uniformly)."""

    def _load(self, idx, gm_a, layout_a, gm_b, layout_b, m, n, k_actual) -> None:
        spec, ctx = self.spec, self.ctx
        ctx.wait_flag(HardEvent.MTE1_MTE2, self.l1a_event[idx])
        spec.tile_copy.copy_gm_to_l1_a(self.l1a[idx], gm_a, spec.l1a_layout, layout_a.get_tile_layout(m, k_actual))
        ctx.set_flag(HardEvent.MTE2_MTE1, self.l1a_event[idx])
        ctx.wait_flag(HardEvent.MTE1_MTE2, self.l1b_event[idx])
        spec.tile_copy.copy_gm_to_l1_b(self.l1b[idx], gm_b, spec.l1b_layout, layout_b.get_tile_layout(k_actual, n))
        ctx.set_flag(HardEvent.MTE2_MTE1, self.l1b_event[idx])

    def __call__(self, gm_a, layout_a, gm_b, layout_b, gm_c, layout_c, gm_bias, actual_shape) -> None:
        """Compute block C = bias + A @ B (``actual_shape`` = m, n, k; ``gm_bias`` points at the block's first
        column) and store it to ``gm_c``."""
        spec, ctx = self.spec, self.ctx
        m, n, k = GemmCoord(*actual_shape)
        if k == 0:
            raise ArgumentError("BlockMmadPingpongBias: k == 0 (CATLASS would store whatever L0C held)")
        l1, l0, stages = spec.l1_tile_shape, spec.l0_tile_shape, spec.stages
        m_round = round_up(m, spec.l1_a_align.m_aligned)
        n_round = round_up(n, spec.l1_b_align.n_aligned)
        layout_c_in_l0 = zN.make_layout_in_l0c(m_round, n_round)
        k_actual = min(k, l1.k)
        self._load(self.l1_list_id, gm_a, layout_a, gm_b, layout_b, m, n, k_actual)
        ctx.wait_flag(HardEvent.MTE1_MTE2, self.bias_event)
        spec.tile_copy.copy_gm_to_l1_bias(self.l1_bias, gm_bias, spec.layout_bias_in_l1, VectorLayout(n))
        ctx.set_flag(HardEvent.MTE2_MTE1, self.bias_event)
        unit_flag = spec.policy.enable_unit_flag
        if not unit_flag:
            ctx.wait_flag(HardEvent.FIX_M, 0)
        m_loops = ceil_div(m_round, l0.m)
        n_loops = ceil_div(n_round, l0.n)
        k_tiles = ceil_div(k, l1.k)
        for k_loop in range(k_tiles):
            next_id = (self.l1_list_id + 1) % stages
            k_actual_next = 0
            if k_loop < k_tiles - 1:
                k_next = k_loop + 1
                k_actual_next = l1.k if k_next < k_tiles - 1 else k - k_next * l1.k
                self._load(next_id, gm_a[layout_a.offset(0, k_next * l1.k)], layout_a,
                           gm_b[layout_b.offset(k_next * l1.k, 0)], layout_b, m, n, k_actual_next)
            self._compute(k_loop, k_tiles, k_actual, m_loops, n_loops, m_round, n_round, layout_c_in_l0)
            self.l1_list_id = next_id
            k_actual = k_actual_next
        layout_block = layout_c.get_tile_layout(m, n)
        if not unit_flag:
            ctx.set_flag(HardEvent.M_FIX, 0)
            ctx.wait_flag(HardEvent.M_FIX, 0)
            spec.tile_copy.copy_l0c_to_gm(gm_c, self.l0c, layout_block, layout_c_in_l0)
            ctx.set_flag(HardEvent.FIX_M, 0)
        else:
            spec.tile_copy.copy_l0c_to_gm(gm_c, self.l0c, layout_block, layout_c_in_l0, 0b11)

    def _compute(self, k_loop, k_tiles, k_actual, m_loops, n_loops, m_round, n_round, layout_c_in_l0) -> None:
        spec, ctx = self.spec, self.ctx
        l1, l0, stages, lid = spec.l1_tile_shape, spec.l0_tile_shape, spec.stages, self.l1_list_id
        l1a, l1b = self.l1a[lid], self.l1b[lid]
        unit_flag = spec.policy.enable_unit_flag
        k_parts = ceil_div(k_actual, l0.k)
        layout_bias_in_l1 = VectorLayout(l1.n)
        for mi in range(m_loops):
            m_part = l0.m if mi < m_loops - 1 else m_round - mi * l0.m
            for ki in range(k_parts):
                k_part = l0.k if ki < k_parts - 1 else k_actual - ki * l0.k
                l0a = self.l0a[self.l0a_list_id]
                ctx.wait_flag(HardEvent.M_MTE1, self.l0a_event[self.l0a_list_id])
                if mi == 0 and ki == 0:
                    ctx.wait_flag(HardEvent.MTE2_MTE1, self.l1a_event[lid])
                spec.tile_copy.copy_l1_to_l0a(l0a, l1a[spec.l1a_layout.offset(mi * l0.m, ki * l0.k)],
                                              spec.layout_a_in_l0.make_layout(spec.element_a, m_part, k_part),
                                              spec.l1a_layout)
                if mi == m_loops - 1 and ki == k_parts - 1:
                    ctx.set_flag(HardEvent.MTE1_MTE2, self.l1a_event[lid])
                for ni in range(n_loops):
                    n_part = l0.n if ni < n_loops - 1 else n_round - ni * l0.n
                    l0b = self.l0b[self.l0b_list_id]
                    ctx.wait_flag(HardEvent.M_MTE1, self.l0b_event[self.l0b_list_id])
                    if ki == 0 and ni == 0:
                        ctx.wait_flag(HardEvent.MTE2_MTE1, self.l1b_event[lid])
                    spec.tile_copy.copy_l1_to_l0b(l0b, l1b[spec.l1b_layout.offset(ki * l0.k, ni * l0.n)],
                                                  spec.layout_b_in_l0.make_layout(spec.element_b, k_part, n_part),
                                                  spec.l1b_layout)
                    if ki == k_parts - 1 and ni == n_loops - 1:
                        ctx.set_flag(HardEvent.MTE1_MTE2, self.l1b_event[lid])
                    init_c = k_loop == 0 and ki == 0
                    if init_c:
                        # The bias slice of this N-part goes L1 -> BT right before its first Mmad.
                        if ni == 0:
                            ctx.wait_flag(HardEvent.MTE2_MTE1, self.bias_event)
                        ctx.wait_flag(HardEvent.M_MTE1, self.bias_event)
                        spec.tile_copy.copy_l1_to_bt(self.l0_bias, self.l1_bias[ni * l0.n], VectorLayout(n_part),
                                                     layout_bias_in_l1)
                        if ni == n_loops - 1:
                            ctx.set_flag(HardEvent.MTE1_MTE2, self.bias_event)
                    ctx.set_flag(HardEvent.MTE1_M, 0)
                    l0c_tile = self.l0c[layout_c_in_l0.offset(mi * l0.m, ni * l0.n)]
                    ctx.wait_flag(HardEvent.MTE1_M, 0)
                    flag = 0
                    if unit_flag:
                        last = k_loop == k_tiles - 1 and mi == m_loops - 1 and ki == k_parts - 1 and ni == n_loops - 1
                        flag = 0b11 if last else 0b10
                    if init_c:
                        spec.tile_mmad(l0c_tile, l0a, l0b, m_part, n_part, k_part, init_c, flag, bias=self.l0_bias)
                        ctx.set_flag(HardEvent.M_MTE1, self.bias_event)
                    else:
                        spec.tile_mmad(l0c_tile, l0a, l0b, m_part, n_part, k_part, init_c, flag)
                    ctx.set_flag(HardEvent.M_MTE1, self.l0b_event[self.l0b_list_id])
                    self.l0b_list_id = (self.l0b_list_id + 1) % stages
                ctx.set_flag(HardEvent.M_MTE1, self.l0a_event[self.l0a_list_id])
                self.l0a_list_id = (self.l0a_list_id + 1) % stages
