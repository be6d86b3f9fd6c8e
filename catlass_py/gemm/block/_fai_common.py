"""What the four flash-attention-inference BlockMmads share (CATLASS ``gemm/block/block_mmad_fai_qk_normal.hpp``,
``block_mmad_fai_qk_head_tail.hpp``, ``block_mmad_fai_pv_normal.hpp``, ``block_mmad_fai_pv_head_tail.hpp``):
the assembly checks, the constants, ``getBlockShape`` and ``getKVOffset``.

The blocks walk the KV sequence in blocks of ``KV_SPLIT_SIZE = 128`` (the paged-cache block size) and the head
dimension in pieces of ``EMBED_SPLIT_SIZE = 128``; one call covers a *stack* of up to ``UNIT_BLOCK_STACK_NUM =
4`` KV blocks (512 columns of S). The kernel sets every buffer-free event once at its start and waits for
them at its end; the blocks only wait and set them in between.
"""

from __future__ import annotations

from catlass_py.errors import ConfigError
from catlass_py.gemm.block.block_mmad_spec import BlockMmadSpec
from catlass_py.gemm.coord import GemmCoord
from catlass_py.layout import RowMajor
from catlass_py.numerics import dtypes as dt
from catlass_py.tile.ascendc_copy import gm_get_value

BLOCK_SIZE = 16
EMBED_SPLIT_SIZE = 128
UNIT_BLOCK_STACK_NUM = 4
KV_BASE_BLOCK = 512
KV_SPLIT_SIZE = 128


class FAIBlockMmadSpec(BlockMmadSpec):
    """Assembly checks of the FAI blocks: fp16 or bf16 operands, fp32 RowMajor C, the 128 x 128 x 128 tiles
    the blocks' constants assume, and each 2-stage L0A/L0B buffer holding one tile."""

    A_LAYOUT = RowMajor
    B_LAYOUT = RowMajor

    def __init__(self, policy, l1_tile_shape, l0_tile_shape, a_type, b_type, c_type, bias_type=None, tile_copy=None,
                 tile_mmad=None):
        super().__init__(policy, l1_tile_shape, l0_tile_shape, a_type, b_type, c_type, bias_type, tile_copy, tile_mmad)
        what = self.describe_short(policy)
        if bias_type is not None:
            raise ConfigError(f"{what}: the attention blocks take no bias (BiasType = void)")
        if self.element_a != self.element_b or self.element_a not in (dt.FLOAT16, dt.BFLOAT16):
            raise ConfigError(f"{what}: ElementA and ElementB must both be half or both bfloat16, got "
                              f"{self.element_a} and {self.element_b}")
        if self.element_c != dt.FLOAT32:
            raise ConfigError(f"{what}: ElementC must be float (the fp32 S / O_tmp workspace), got {self.element_c}")
        if a_type.layout is not self.A_LAYOUT or b_type.layout is not self.B_LAYOUT:
            raise ConfigError(f"{what}: layouts must be A {self.A_LAYOUT.__name__}, B {self.B_LAYOUT.__name__}; got "
                              f"{a_type.layout.__name__}, {b_type.layout.__name__}")
        if tuple(self.l1_tile_shape) != (128, 128, 128) or tuple(self.l0_tile_shape) != (128, 128, 128):
            raise ConfigError(
                f"{what}: L1TileShape and L0TileShape must be (128, 128, 128): the block splits KV and the head "
                f"dimension in KV_SPLIT_SIZE = EMBED_SPLIT_SIZE = 128, got L1 {tuple(self.l1_tile_shape)}, "
                f"L0 {tuple(self.l0_tile_shape)}")
        arch = self.arch
        stages = policy.STAGES
        self.l0a_pingpong_size = arch.l0a_size // stages
        self.l0b_pingpong_size = arch.l0b_size // stages
        self.l0c_pingpong_size = arch.l0c_size // stages
        self._budget(what, "L0A tile", self.l0a_tile_size, self.l0a_pingpong_size,
                     "L1TileShape::M * L1TileShape::K * sizeof(ElementA) <= L0A_SIZE / STAGES")
        self._budget(what, "L0B tile", self.l0b_tile_size, self.l0b_pingpong_size,
                     "L1TileShape::N * L1TileShape::K * sizeof(ElementB) <= L0B_SIZE / STAGES")

    @property
    def paged_cache(self) -> bool:
        return self.policy.paged_cache


class FAIBlockInstance:
    """Per-core helpers: ``getBlockShape``, ``getKVOffset`` and the lazily formed KV pointer."""

    spec: FAIBlockMmadSpec
    ctx = None

    def get_kv_offset(self, g_block_table, now_n_idx: int, k_idx: int, n_loop: int, k_loop: int, stride_kv: int,
                      block_size: int, mask_tail_s: int = 0) -> int:
        """CATLASS ``getKVOffset``: the element offset of KV block ``now_n_idx``, head-dimension piece ``k_idx``.
        With the paged cache it reads the block table (``GetValue``, PIPE_S) even for the index one past the
        last block, as the C++ does for the "next" block of the last iteration (the value is never used).
        Like the C++, the contiguous-cache branch ignores ``mask_tail_s``: a masked stack that starts inside a
        KV block reads K and V from the block's start there (CATLASS builds only the paged kernel, in example
        23); ``ops.flash_attention_infer`` therefore refuses a mask with a contiguous cache."""
        if self.spec.paged_cache:
            block_table_id = int(gm_get_value(self.ctx, g_block_table, now_n_idx))
            return block_table_id * block_size * stride_kv + mask_tail_s * stride_kv + k_idx * EMBED_SPLIT_SIZE
        return now_n_idx * KV_SPLIT_SIZE * stride_kv + k_idx * EMBED_SPLIT_SIZE


def r16(n: int) -> int:
    """``n`` rounded up to 16: an L1 tile of fp16/bf16 holds whole 16 x 16 fractals (CATLASS's zN / nZ
    ``MakeLayout`` rounds both extents the same way), which the L1 -> L0 loads move."""
    return -(-n // 16) * 16


def fai_block_shape(actual: GemmCoord, now_n_idx: int, k_idx: int, n_loop: int, k_loop: int, kv_seqlen: int,
                    embed: int, first_block: bool, mask_tail_s: int, *, pv: bool, loab_block: int = 1) -> GemmCoord:
    """CATLASS ``getBlockShape``: the KV columns (``nSplitSize``) and head-dimension piece (``embedSplitSize``) of
    block ``now_n_idx``; QK puts them in (n, k), PV in (k, n)."""
    n_split = KV_SPLIT_SIZE * loab_block
    last = (now_n_idx + loab_block > n_loop - 1) if pv else (now_n_idx == n_loop - 1)
    if last:
        n_split = kv_seqlen - now_n_idx * KV_SPLIT_SIZE
    if first_block and mask_tail_s != 0:
        n_split -= mask_tail_s
    embed_split = EMBED_SPLIT_SIZE
    if k_idx == k_loop - 1:
        embed_split = embed - k_idx * EMBED_SPLIT_SIZE
    if pv:
        return GemmCoord(actual.m, embed_split, n_split)
    return GemmCoord(actual.m, n_split, embed_split)


__all__ = ["BLOCK_SIZE", "EMBED_SPLIT_SIZE", "FAIBlockInstance", "FAIBlockMmadSpec", "KV_BASE_BLOCK", "KV_SPLIT_SIZE",
           "UNIT_BLOCK_STACK_NUM", "fai_block_shape", "r16"]
