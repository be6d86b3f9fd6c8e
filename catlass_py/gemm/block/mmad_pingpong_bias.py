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
from catlass_py.errors import ConfigError
from catlass_py.gemm.block.block_mmad_spec import BlockMmadSpec
from catlass_py.gemm.block.capabilities import BIAS_CALL, BlockMmadCapabilities
from catlass_py.gemm.block.mmad_pingpong import _PingpongBlock
from catlass_py.gemm.dispatch_policy import MmadAtlasA2PingpongBias
from catlass_py.gemm.gemm_type import GemmType
from catlass_py.layout import VectorLayout


class BlockMmadPingpongBias(BlockMmadSpec):
    """Assembled CATLASS ``BlockMmad<MmadAtlasA2PingpongBias<UNIT_FLAG>, L1, L0, A, B, C, BiasType, TileCopy,
    TileMmad>``.

    Checks: a VectorLayout ``BiasType`` whose element can initialise the accumulator (fp16/fp32 for float,
    int32 for int8; not bf16), ``L1A * STAGES + L1B * STAGES + L1.N * sizeof(bias) <= L1``, ``L0A_TILE * STAGES
    <= L0A``, ``L0B_TILE * STAGES <= L0B``, ``L0C_TILE <= L0C``, ``L0.N * sizeof(acc) <= BT``, L1/L0 tiles agree
    on M and N, ``L0.K <= L1.K``, 32-byte alignment, and the unit flag off for int8.
    """

    name = "BlockMmadPingpongBias"
    CAPABILITIES = BlockMmadCapabilities(BIAS_CALL)

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
        self._check_l0_stages(what, stages)
        self.bias_buf_size = self.element_accumulator.nbytes(l0.n)
        self._budget(what, "bias table (L0.N accumulators)", self.bias_buf_size, arch.bt_size,
                     "BIAS_BUF_SIZE = L0TileShape::N * sizeof(ElementAccumulator) <= BT_SIZE; reduce L0TileShape::N")
        self._events(what, "L1 A/B stages + bias (MTE1_MTE2)", 2 * stages + 1)
        self.layout_bias_in_l1 = VectorLayout(l1.n)

    def __call__(self, resource, l1_buf_addr_start: int = 0) -> "_PingpongBiasBlock":
        return _PingpongBiasBlock(self, resource, l1_buf_addr_start)


class _PingpongBiasBlock(_PingpongBlock):
    """One cube core's instance of :class:`BlockMmadPingpongBias`: the Pingpong block plus the bias row in L1
    (after the B stages) and in BT, with the bias events of the module doc."""

    def __init__(self, spec: BlockMmadPingpongBias, resource, l1_buf_addr_start: int = 0):
        super().__init__(spec, resource, l1_buf_addr_start)
        s = spec.stages
        self.bias_event = 2 * s
        l1_bias_off = l1_buf_addr_start + (spec.l1a_tile_size + spec.l1b_tile_size) * s
        self.l1_bias = resource.l1_buf.get_buffer_by_byte(spec.element_bias, l1_bias_off)
        self.l0_bias = resource.bt_buf.get_buffer_by_byte(spec.element_accumulator, 0)
        self.ctx.set_flag(HardEvent.MTE1_MTE2, self.bias_event)
        self.ctx.set_flag(HardEvent.M_MTE1, self.bias_event)

    def close(self) -> None:
        """The C++ destructor: wait for every buffer-free event, the bias ones included."""
        super().close()
        self.ctx.wait_flag(HardEvent.MTE1_MTE2, self.bias_event)
        self.ctx.wait_flag(HardEvent.M_MTE1, self.bias_event)

    def __call__(self, gm_a, layout_a, gm_b, layout_b, gm_c, layout_c, gm_bias, actual_shape) -> None:
        """Compute block C = bias + A @ B (``actual_shape`` = m, n, k; ``gm_bias`` points at the block's first
        column) and store it to ``gm_c``."""
        spec, ctx = self.spec, self.ctx
        m, n, k = self._checked_shape(actual_shape)
        k_actual = min(k, spec.l1_tile_shape.k)
        self.load_l1(self.l1_list_id, gm_a, layout_a, gm_b, layout_b, m, n, k_actual)
        ctx.wait_flag(HardEvent.MTE1_MTE2, self.bias_event)
        spec.tile_copy.copy_gm_to_l1_bias(self.l1_bias, gm_bias, spec.layout_bias_in_l1, VectorLayout(n))
        ctx.set_flag(HardEvent.MTE2_MTE1, self.bias_event)
        self._compute_and_store(gm_a, layout_a, gm_b, layout_b, gm_c, layout_c, m, n, k, k_actual)

    def before_first_mmad(self, ni: int, n_loops: int, n_part: int) -> None:
        """The bias slice of this N part goes L1 -> BT right before its first Mmad."""
        spec, ctx = self.spec, self.ctx
        if ni == 0:
            ctx.wait_flag(HardEvent.MTE2_MTE1, self.bias_event)
        ctx.wait_flag(HardEvent.M_MTE1, self.bias_event)
        spec.tile_copy.copy_l1_to_bt(self.l0_bias, self.l1_bias[ni * spec.l0_tile_shape.n], VectorLayout(n_part),
                                     spec.layout_bias_in_l1)
        if ni == n_loops - 1:
            ctx.set_flag(HardEvent.MTE1_MTE2, self.bias_event)

    def mmad(self, l0c_tile, l0a, l0b, m_part, n_part, k_part, init_c, unit_flag) -> None:
        """The Mmad that starts the accumulator adds the bias from BT, then frees BT (M_MTE1)."""
        if init_c:
            self.spec.tile_mmad(l0c_tile, l0a, l0b, m_part, n_part, k_part, init_c, unit_flag, bias=self.l0_bias)
            self.ctx.set_flag(HardEvent.M_MTE1, self.bias_event)
        else:
            self.spec.tile_mmad(l0c_tile, l0a, l0b, m_part, n_part, k_part, init_c, unit_flag)
