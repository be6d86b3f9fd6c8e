"""What a BlockMmad can do is declared on the block (CAPABILITIES), registered in one place, and checked by every
kernel at assembly: an unfit policy is a ConfigError naming the policy, what the kernel needs and the policies
that fit - never a TypeError inside a core."""

import pytest

from catlass_py.arch import ASCEND_950, ATLAS_A2
from catlass_py.assemblies import grouped_matmul_slice_m_per_token_dequant as ex10
from catlass_py.assemblies import quant_matmul as ex12
from catlass_py.epilogue import EpilogueAtlasA2PerTokenDequant
from catlass_py.errors import ConfigError
from catlass_py.gemm import (
    GemmType,
    MmadAtlasA2Pingpong,
    MmadAtlasA2Preload,
    MmadAtlasA2PreloadAsync,
    MmadAtlasA2PreloadAsyncWithCallback,
)
from catlass_py.gemm.block import (
    PLAIN_CALL,
    BlockMmad,
    BlockMmadCapabilities,
    BlockMmadRequirement,
    check_block_mmad,
    register_block_mmad,
    registered_block_mmads,
)
from catlass_py.layout import RowMajor


def test_every_registered_block_declares_its_capabilities():
    pairs = registered_block_mmads()
    assert len(pairs) == 13  # 7 GEMM blocks, 6 attention blocks (examples 19 and 23)
    for policy_type, impl in pairs:
        assert isinstance(impl.CAPABILITIES, BlockMmadCapabilities), impl
    caps = {p.__name__: impl.CAPABILITIES for p, impl in pairs}
    assert caps["MmadAtlasA2Pingpong"] == BlockMmadCapabilities(PLAIN_CALL)
    assert caps["MmadAtlasA2PreloadAsync"] == BlockMmadCapabilities(PLAIN_CALL, asynchronous=True, callbacks=1)
    assert caps["MmadAtlasA2PreloadAsyncWithCallback"].callbacks == 2
    assert caps["MmadAtlasA2Preload"].call.name == "preload"


def test_register_rejects_a_block_without_capabilities():
    class Bare:
        pass

    with pytest.raises(ConfigError, match="must declare CAPABILITIES"):
        register_block_mmad(type("P", (), {}), Bare)
    with pytest.raises(ConfigError, match="synchronous block takes no callbacks"):
        BlockMmadCapabilities(PLAIN_CALL, asynchronous=False, callbacks=1)


def _int8_block(policy):
    a, c = GemmType("int8", RowMajor), GemmType("int32", RowMajor)
    return BlockMmad(policy, (128, 256, 512), (128, 256, 128), a, a, c)


def test_example_10_kernel_with_a_preload_block_fails_at_assembly():
    preload = MmadAtlasA2Preload(enable_unit_flag=False, enable_shuffle_k=True)
    with pytest.raises(ConfigError) as info:
        ex10.assemble(dispatch_policy=preload)
    msg = str(info.value)
    assert msg.startswith("GroupedMatmulSliceMPerTokenDequantMultiStageWorkspace: MmadAtlasA2Preload's BlockMmad")
    assert "needs a BlockMmad(gmA, layoutA, gmB, layoutB, gmC, layoutC, actualShape)" in msg
    assert "policies that fit: MmadAtlasA2PreloadAsyncWithCallback, MmadAtlasA2Pingpong" in msg
    ex10.assemble(dispatch_policy=MmadAtlasA2Pingpong())  # a synchronous plain block fits


def test_callback_counts_are_checked():
    one = MmadAtlasA2PreloadAsync(1, 2, 2, 2, 1, False, True)
    with pytest.raises(ConfigError, match="two callbacks, run before and after the fixpipe"):
        ex10.assemble(dispatch_policy=one)
    kernel = ex12.assemble()
    with pytest.raises(ConfigError, match="only one callback|two callbacks"):
        type(kernel)(_int8_block(one), kernel.block_epilogue, kernel.block_scheduler)


def test_check_block_mmad_returns_the_capabilities_and_rejects_non_blocks():
    block = _int8_block(MmadAtlasA2PreloadAsyncWithCallback(1, 2, 2, 2, 1, False, True))
    assert check_block_mmad("K", block, BlockMmadRequirement()).callbacks == 2
    with pytest.raises(ConfigError, match="must be an assembled BlockMmad"):
        check_block_mmad("K", object(), BlockMmadRequirement())


def test_policies_carry_an_atlas_a2_arch():
    variant = ATLAS_A2.model_copy(update={"core_num": 48})
    assert MmadAtlasA2Pingpong(arch=variant).arch == variant
    assert MmadAtlasA2Pingpong(True) == MmadAtlasA2Pingpong(enable_unit_flag=True)
    assert repr(MmadAtlasA2Pingpong()) == "MmadAtlasA2Pingpong(enable_unit_flag=False)"
    with pytest.raises(ConfigError, match="arch_code 2201"):
        MmadAtlasA2Pingpong(arch=ASCEND_950)
    with pytest.raises(ConfigError, match="arch_code 2201"):
        EpilogueAtlasA2PerTokenDequant(arch="AtlasA2")
