"""Dispatch policies and the static checks of BlockMmad assembly."""

from dataclasses import dataclass

import pytest

from catlass_py.arch import ATLAS_A2
from catlass_py.errors import ConfigError
from catlass_py.gemm import (
    GemmShape,
    GemmType,
    MmadAtlasA2Pingpong,
    MmadAtlasA2Preload,
    MmadAtlasA2PreloadAsync,
    MmadAtlasA2PreloadAsyncWithCallback,
    MmadBase,
)
from catlass_py.gemm.block import BlockMmad
from catlass_py.layout import ColumnMajor, RowMajor
from catlass_py.tile import TileCopy

I8 = GemmType("int8", RowMajor)
I32 = GemmType("int32", RowMajor)
L1_EX10 = GemmShape(128, 256, 512)
L0_EX10 = GemmShape(128, 256, 128)


def cb(*stages, unit=False, shuffle=True):
    return MmadAtlasA2PreloadAsyncWithCallback(*stages, unit, shuffle)


# --- dispatch policies -----------------------------------------------------------------------------


@pytest.mark.parametrize("cls", [MmadAtlasA2PreloadAsync, MmadAtlasA2PreloadAsyncWithCallback])
@pytest.mark.parametrize("kw", [
    {"preload_stages": 0}, {"l1_stages": 0}, {"l0a_stages": 0}, {"l0b_stages": 0}, {"l0c_stages": 0},
    {"preload_stages": -1}, {"l1_stages": 2.0}, {"l0a_stages": "2"}, {"l0c_stages": True},
    {"preload_stages": 2, "l1_stages": 2}, {"preload_stages": 3, "l1_stages": 2}, {"preload_stages": 1, "l1_stages": 1},
    {"enable_unit_flag": 1}, {"enable_shuffle_k": "yes"},
])
def test_preload_async_policies_reject_bad_stage_counts(cls, kw):
    with pytest.raises(ConfigError):
        cls(**kw)


def test_preload_stages_below_l1_stages_is_accepted():
    p = MmadAtlasA2PreloadAsyncWithCallback(2, 3, 2, 2, 1, False, True)
    assert (p.preload_stages, p.l1_stages) == (2, 3) and p.ASYNC


def test_policy_flags():
    assert MmadAtlasA2Pingpong().STAGES == 2 and MmadAtlasA2Pingpong.ASYNC is False
    assert MmadAtlasA2PreloadAsync.ASYNC is True and MmadAtlasA2PreloadAsyncWithCallback.ASYNC is True
    with pytest.raises(ConfigError):
        MmadAtlasA2Pingpong(enable_unit_flag=0)
    with pytest.raises(ConfigError):
        MmadAtlasA2Preload(enable_shuffle_k=None)


# --- example 10 fits exactly ---------------------------------------------------------------------------


def test_example_10_assembles_and_fills_l0b_and_l0c_exactly():
    bm = BlockMmad(cb(1, 2, 2, 2, 1), L1_EX10, L0_EX10, I8, I8, I32)
    assert (bm.l1a_tile_size, bm.l1b_tile_size) == (65536, 131072)
    assert (bm.l1a_tile_size + bm.l1b_tile_size) * 2 == 393216
    assert bm.l0a_tile_size * 2 == 32768
    assert bm.l0b_tile_size * 2 == 65536
    assert bm.l0c_tile_size * 1 == 131072
    assert bm.CAPABILITIES.asynchronous and bm.CAPABILITIES.callbacks == 2
    # "L1 M=128, K=128 -> l0AStages <= 4": four L0A stages still fit
    BlockMmad(cb(1, 2, 4, 2, 1), L1_EX10, L0_EX10, I8, I8, I32)


@pytest.mark.parametrize("stages,numbers", [
    ((1, 2, 2, 3, 1), ("98304", "65536")),       # L0B: one more stage overflows
    ((1, 2, 2, 2, 2), ("262144", "131072")),     # L0C: one more stage overflows
    ((1, 2, 5, 2, 1), ("81920", "65536")),       # L0A: a fifth stage overflows
    ((1, 3, 2, 2, 1), ("589824", "524288")),     # L1: a third stage overflows
])
def test_one_more_stage_overflows_its_buffer(stages, numbers):
    with pytest.raises(ConfigError) as info:
        BlockMmad(cb(*stages), L1_EX10, L0_EX10, I8, I8, I32)
    for num in numbers:
        assert num in str(info.value)


def test_layout_c_must_be_row_major():
    with pytest.raises(ConfigError, match="RowMajor"):
        BlockMmad(cb(1, 2, 2, 2, 1), L1_EX10, L0_EX10, I8, I8, GemmType("int32", ColumnMajor))


@pytest.mark.parametrize("l1,l0", [
    ((128, 256, 512), (64, 256, 128)),    # L0.M != L1.M
    ((128, 256, 512), (128, 128, 128)),   # L0.N != L1.N
    ((128, 128, 128), (128, 128, 256)),   # L0.K > L1.K
])
def test_l1_l0_shape_rules(l1, l0):
    with pytest.raises(ConfigError):
        BlockMmad(cb(1, 2, 2, 2, 1), GemmShape(*l1), GemmShape(*l0), I8, I8, I32)


@pytest.mark.parametrize("l1,l0", [
    ((112, 256, 512), (112, 256, 128)),   # 112 int8 = 112 bytes: not a multiple of 32 bytes
    ((128, 256, 496), (128, 256, 128)),   # L1.K
    ((128, 240, 512), (128, 240, 128)),   # N
    ((128, 256, 512), (128, 256, 112)),   # L0.K
])
def test_32_byte_alignment(l1, l0):
    with pytest.raises(ConfigError, match="32-byte"):
        BlockMmad(cb(1, 2, 2, 2, 1), GemmShape(*l1), GemmShape(*l0), I8, I8, I32)


def test_16_element_fp16_tiles_are_aligned():
    f16, f32 = GemmType("float16", RowMajor), GemmType("float32", RowMajor)
    BlockMmad(cb(1, 2, 2, 2, 1), GemmShape(16, 16, 16), GemmShape(16, 16, 16), f16, f16, f32)
    with pytest.raises(ConfigError):
        BlockMmad(cb(1, 2, 2, 2, 1), GemmShape(8, 16, 16), GemmShape(8, 16, 16), f16, f16, f32)


@pytest.mark.parametrize("stages", [
    (1, 5, 2, 2, 1),    # 2 * 5 L1 events (MTE1_MTE2)
    (1, 2, 5, 4, 1),    # 9 M_MTE1 events
    (1, 2, 2, 2, 9),    # 9 FIX_M events
])
def test_event_ids_are_limited_to_8_per_pair(stages):
    small = GemmShape(32, 32, 32)
    with pytest.raises(ConfigError, match="event"):
        BlockMmad(cb(*stages), small, small, I8, I8, I32)


def test_event_ids_at_the_limit_are_fine():
    small = GemmShape(32, 32, 32)
    BlockMmad(cb(1, 4, 4, 4, 8), small, small, I8, I8, I32)


def test_pingpong_checks():
    bm = BlockMmad(MmadAtlasA2Pingpong(), GemmShape(128, 256, 256), GemmShape(128, 256, 64), I8, I8, I32)
    assert bm.CAPABILITIES.asynchronous is False
    with pytest.raises(ConfigError, match="786432"):   # (131072 + 262144) * 2 > 524288
        BlockMmad(MmadAtlasA2Pingpong(), GemmShape(128, 256, 1024), GemmShape(128, 256, 64), I8, I8, I32)
    with pytest.raises(ConfigError):                    # L0B: 256 x 256 int8 x 2 = 131072 > 65536
        BlockMmad(MmadAtlasA2Pingpong(), GemmShape(128, 256, 256), GemmShape(128, 256, 256), I8, I8, I32)
    with pytest.raises(ConfigError, match="unit flag"):
        BlockMmad(MmadAtlasA2Pingpong(True), GemmShape(128, 256, 256), GemmShape(128, 256, 64), I8, I8, I32)


def test_policy_without_implementation_and_mismatched_tile_copy():
    @dataclass(frozen=True)
    class UnregisteredPolicy(MmadBase):
        pass

    with pytest.raises(ConfigError):
        BlockMmad(UnregisteredPolicy(), L1_EX10, L0_EX10, I8, I8, I32)
    f16 = GemmType("float16", RowMajor)
    other = TileCopy(ATLAS_A2, f16, f16, GemmType("float32", RowMajor))
    with pytest.raises(ConfigError):
        BlockMmad(cb(1, 2, 2, 2, 1), L1_EX10, L0_EX10, I8, I8, I32, tile_copy=other)
    with pytest.raises(ConfigError):
        BlockMmad(cb(1, 2, 2, 2, 1), L1_EX10, L0_EX10, I8, GemmType("float16", RowMajor), I32)


def test_tile_rounded_to_fractals_must_not_overlap_the_next_stage():
    # fp32 B with L1.K = 8: zN rounds the 8 rows up to one 16-row fractal, so each 512-byte B stage would be
    # stored across 1024 bytes and overwrite the next stage (CATLASS lets this through).
    from catlass_py.errors import ConfigError
    from catlass_py.gemm import GemmType, MmadAtlasA2Pingpong
    from catlass_py.gemm.block import BlockMmad
    from catlass_py.layout import RowMajor

    f32 = GemmType("float32", RowMajor)
    with pytest.raises(ConfigError, match=r"L1 B tile is stored as zN.*spans 1024 bytes.*512 bytes apart"):
        BlockMmad(MmadAtlasA2Pingpong(), (16, 16, 8), (16, 16, 8), f32, f32, f32)
    BlockMmad(MmadAtlasA2Pingpong(), (16, 16, 16), (16, 16, 8), f32, f32, f32)  # 16 rows: fits
