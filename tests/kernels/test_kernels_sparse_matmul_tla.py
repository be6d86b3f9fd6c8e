"""Example 41 / KernelSparseMatmul + BlockMmadSparseTla + BlockSchedulerIterateK: the 4:2 format on the host (the
index table of Ascend C's MmadWithSparse, packing, the NZ layout the kernel reads), the README shape, small shapes
and random shapes against an independent golden (the sparse B multiplied as it is), the scheduler, races and
interleavings, the sparse tile ops (LoadDataWithSparse carries the indices, an unloaded index is caught), argument
errors before the launch, CATLASS's out-of-bounds stores for the shapes the op refuses, assembly rules."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from catlass_py import golden, ops, sparse
from catlass_py.arch import ATLAS_A2, Observer, standalone_core
from catlass_py.assemblies import sparse_matmul_tla as assembly
from catlass_py.errors import ArgumentError, ConfigError, OutOfBoundsError
from catlass_py.gemm import MmadPingpong, SparseMatmulMultiBlockOnKAxis
from catlass_py.gemm.block import BlockMmadSparseTla, BlockMmadTla, BlockSchedulerIterateK, MatmulShape
from catlass_py.kernel import DeviceGemm
from catlass_py.kernel.sparse_matmul_tla import KernelSparseMatmul, SparseBlockMmadArguments, index_layout
from catlass_py.runner import to_device
from catlass_py.testing import check
from catlass_py.tile.copy_sparse_tla import CopyL1ToL0BSparseTla, SparseTileCopyTla, TileMmadSparse
from catlass_py.tile.copy_tla import make_tensor
from catlass_py.tla import make_layout_l0c, make_layout_tag

EX = importlib.import_module("catlass_py.examples.41_sparse_matmul_tla")
op = ops.sparse_matmul_tla


def _inputs(m, n, k, seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(-128, 128, (m, k)).astype(np.int8), _sparse(rng, k, n)


def _sparse(rng, k, n):
    """A 4:2 sparse B with every kind of group: 0, 1 or 2 non-zeros anywhere in the group, full int8 range."""
    b = rng.integers(-128, 128, (k, n)).astype(np.int8)
    keep = rng.random((k // 4, 4, n)).argsort(axis=1) < rng.integers(0, 3, (k // 4, 1, n))
    return (b.reshape(k // 4, 4, n) * keep).reshape(k, n).astype(np.int8)


def _want(a, b):
    """Independent golden: the sparse B as it is, exact int64 product wrapped to int32."""
    return (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32)


# -- the host format ---------------------------------------------------------------------------------------------

#: Ascend C MmadWithSparse's table: a group of four (X, Y non-zero) -> (first index, second index)
TABLE = [((0, 0, 5, 7), (2, 2)), ((0, 5, 0, 7), (1, 2)), ((5, 0, 0, 7), (0, 2)), ((0, 5, 7, 0), (1, 1)),
         ((5, 0, 7, 0), (0, 1)), ((5, 7, 0, 0), (0, 0)), ((0, 0, 0, 5), (0, 2)), ((0, 0, 5, 0), (2, 0)),
         ((0, 5, 0, 0), (1, 0)), ((5, 0, 0, 0), (0, 0)), ((0, 0, 0, 0), (0, 0))]


@pytest.mark.parametrize("group,codes", TABLE)
def test_index_table_of_mmad_with_sparse(group, codes):
    b = np.zeros((8, 1), np.int8)
    b[:4, 0] = group
    dense, index = sparse.compress_4to2(b)
    assert int(index[0, 0]) & 0xF == codes[0] | codes[1] << 2  # the group's two indices, the first in the low bits
    assert sorted(v for v in dense[0, :2] if v) == sorted(v for v in group if v)
    assert np.array_equal(sparse.decompress_4to2(dense, index), b)


def test_index_packing_is_low_bits_first():
    """Ascend C's example: the indices 1 2 0 1 are the byte read 1 0 2 1 from its high bits, 0b01_00_10_01; then
    0 2 1 1 is 0b01_01_10_00."""
    b = np.zeros((16, 1), np.int8)
    for g, (i0, i1) in enumerate([(1, 2), (0, 1), (0, 2), (1, 1)]):  # first at i0, second at 1 + i1
        b[4 * g + i0, 0], b[4 * g + 1 + i1, 0] = 3, 4
    _, index = sparse.compress_4to2(b)
    assert index[0].tolist() == [0b01_00_10_01, 0b01_01_10_00]


def test_nz_index_matches_the_kernel_index_layout():
    rng = np.random.default_rng(3)
    n, k = 40, 136
    index = rng.integers(0, 256, (n, k // 8)).astype(np.uint8)
    nz = sparse.index_to_nz(index)
    assert nz.size == sparse.index_nz_bytes(n, k) == 48 * 24
    layout = index_layout(n, k)
    offsets = [layout((r, c)) for c in range(n) for r in range(k // 8)]  # byte r of column c, column by column
    assert np.array_equal(nz[offsets], index.ravel())


def test_compression_refuses_three_non_zeros_and_round_trips():
    b = np.zeros((8, 3), np.int8)
    b[4:7, 2] = 1
    with pytest.raises(ArgumentError, match="column 2, rows 4..7 hold 3 non-zeros"):
        sparse.compress_4to2(b)
    rng = np.random.default_rng(0)
    b = _sparse(rng, 64, 30)
    dense, index = sparse.compress_4to2(b)
    assert np.array_equal(sparse.decompress_4to2(dense, index), b)
    a = rng.integers(-128, 128, (7, 64)).astype(np.int8)
    assert np.array_equal(golden.sparse_matmul(a, dense, index), _want(a, b))


# -- the kernel ----------------------------------------------------------------------------------------------------

def test_readme_shape_compare_success():
    res = EX.run(["160", "320", "64", "0"])
    assert res.passed and res.verdict == "Compare success."
    assert res.details["total_blocks"] == res.details["block_num"] == 4


@pytest.mark.parametrize("m,n,k,cores", [(1, 16, 8, 1), (20, 40, 72, 2), (144, 100, 200, 3), (128, 256, 128, 1),
                                         (17, 304, 64, 2), (64, 512, 264, 3), (33, 7, 520, 2)])
def test_small_shapes_against_an_independent_golden(m, n, k, cores):
    a, b = _inputs(m, n, k, seed=m + n + k)
    assert np.array_equal(op(a, b, core_num=cores), _want(a, b))


@settings(max_examples=12, deadline=None)
@given(m=st.integers(1, 300), n=st.integers(1, 600), k8=st.integers(1, 50), cores=st.integers(1, 6),
       seed=st.integers(0, 2**16))
def test_random_shapes(m, n, k8, cores, seed):
    m = m if m <= 128 else -(-m // 16) * 16
    n = n if n <= 256 else -(-n // 16) * 16
    a, b = _inputs(m, n, 8 * k8, seed)
    assert np.array_equal(op(a, b, core_num=cores), _want(a, b))


@pytest.mark.parametrize("shape,cores", [((256, 512, 200), 3), ((100, 300 - 12, 136), 4), ((1, 40, 64), 2)])
def test_races_and_interleavings(shape, cores):
    a, b = _inputs(*shape, seed=2)
    result = check(op, a, b, core_num=cores, golden=_want(a, b), k=shape[2], seeds=2)
    assert result.compare.passed and not result.interleavings.differ


def test_scheduler_and_block_num():
    s = BlockSchedulerIterateK((128, 256, 128), (128, 256, 64)).update(MatmulShape(300, 600, 64), 1, 4, 20)
    assert s.get_tile_num() == 9 and s.get_per_block_num() == 3
    assert [s.get_block_coord(t)[:2] for t in (0, 2, 3, 8)] == [(0, 0), (0, 512), (128, 0), (256, 512)]
    assert s.get_block_shape(8) == (300 - 256, 600 - 512, 64, 1) and s.get_block_shape(4) == (128, 256, 64, 1)
    kernel = assembly.assemble()
    # GetTotalBlockNum: all tiles below the core count, else ceil(total / ceil(total / cores))
    assert kernel.block_num(MatmulShape(300, 600, 64), 20) == 9
    assert kernel.block_num(MatmulShape(128 * 5, 256 * 5, 64), 20) == 13
    with pytest.raises(ArgumentError, match="block_num"):
        BlockSchedulerIterateK((128, 256, 128), (128, 256, 64)).update(MatmulShape(1, 1, 8), 0, 0, 1)


class _Launches(Observer):
    def __init__(self):
        self.count = 0

    def on_launch_start(self, info):
        self.count += 1


@pytest.mark.parametrize("a,b,match", [
    (np.zeros((4, 12), np.int8), np.zeros((12, 4), np.int8), "multiple of 8"),
    (np.zeros((4, 0), np.int8), np.zeros((0, 4), np.int8), "multiple of 8"),
    (np.zeros((4, 8), np.int8), np.ones((8, 4), np.int8), "not 4:2 sparse: column 0, rows 0..3 hold 4"),
    (np.zeros((130, 8), np.int8), np.zeros((8, 4), np.int8), "m = 130: with more than one block"),
    (np.zeros((4, 8), np.int8), np.zeros((8, 260), np.int8), "n = 260: with more than one block"),
    (np.zeros((4, 8), np.float16), np.zeros((8, 4), np.int8), "expected dtype int8"),
    (np.zeros((4, 8), np.int8), np.zeros((16, 4), np.int8), "expected shape"),
])
def test_bad_input_is_refused_before_the_launch(a, b, match):
    launches = _Launches()
    with pytest.raises(ArgumentError, match=match):
        op(a, b, core_num=2, observers=(launches,))
    assert launches.count == 0


def _kernel_args(kernel, a, b):
    m, k = a.shape
    n = b.shape[1]
    dense, index = sparse.compress_4to2(b)
    c = np.zeros((m, n), np.int32)
    mmad = SparseBlockMmadArguments(to_device("a", a), to_device("b", dense), to_device("c", c, read_only=False), None,
                                    to_device("index", sparse.index_to_nz(index)),
                                    make_layout_tag("int8", "RowMajor", m, k),
                                    make_layout_tag("int8", "ColumnMajor", k // 2, n),
                                    make_layout_tag("int32", "RowMajor", m, n))
    return kernel.Arguments(MatmulShape(m, n, k), mmad, 4), c


def test_catlass_stores_whole_fractals_of_the_last_block():
    """What the op's m / n rule prevents: CATLASS's kernel itself, on m = 140 (two blocks along m, the last of 12
    rows), loads 16 rows of A from row 128 and stores 16 rows of C there, past the end of both."""
    kernel = assembly.assemble()
    a, b = _inputs(140, 32, 64)
    args, _ = _kernel_args(kernel, a, b)
    op_ = DeviceGemm(kernel)
    assert op_.can_implement(args)
    op_.initialize(args)
    with pytest.raises(OutOfBoundsError):
        op_.run(2)


def test_can_implement_shape_rules():
    kernel = assembly.assemble()
    a, b = _inputs(16, 16, 64)
    args, _ = _kernel_args(kernel, a, b)
    with pytest.raises(ArgumentError, match="Sparse only support batch 1"):
        kernel.can_implement(kernel.Arguments(MatmulShape(16, 16, 64, 2), args.mmad_args, 4))
    with pytest.raises(ArgumentError, match="Sparse k must be multiple of 8"):
        kernel.can_implement(kernel.Arguments(MatmulShape(16, 16, 60), args.mmad_args, 4))
    with pytest.raises(ConfigError, match="layoutA has origin shape"):
        kernel.can_implement(kernel.Arguments(MatmulShape(16, 16, 128), args.mmad_args, 4))


def test_assembly_rules():
    p = SparseMatmulMultiBlockOnKAxis()
    with pytest.raises(ConfigError, match=r"L1TileShape exceeding the L1 space! \(\(L1A_TILE_SIZE \+ L1B_TILE_SIZE"):
        BlockMmadSparseTla(p, (128, 256, 2048), (128, 256, 64))
    with pytest.raises(ConfigError, match="L1_M == L0_M && L1_N == L0_N"):
        BlockMmadSparseTla(p, (128, 256, 128), (64, 256, 64))
    with pytest.raises(ConfigError, match="L0TileShape::K cannot exceed L1TileShape::K"):
        BlockMmadSparseTla(p, (128, 256, 64), (128, 256, 128))
    with pytest.raises(ConfigError, match="Unsupported dtype"):
        BlockMmadSparseTla(p, (128, 256, 128), (128, 256, 64), "float16", "float16", "float32")
    with pytest.raises(ConfigError, match="Only support MatrixB transpose"):
        SparseTileCopyTla(ATLAS_A2, "int8", "RowMajor", "int8", "RowMajor")
    with pytest.raises(ConfigError, match="multiple of 64"):
        BlockMmadSparseTla(p, (128, 256, 128), (128, 256, 32))
    with pytest.raises(ConfigError, match="multiple of L0TileShape::K"):
        BlockMmadSparseTla(p, (128, 256, 192), (128, 256, 128))
    with pytest.raises(ConfigError, match=r"CanImplement's tile rule fails: \(L1_M \* L1_K \* sizeof\(AType\)"):
        assembly.assemble(l1_tile=(128, 256, 768))
    kernel = assembly.assemble()
    other = BlockMmadTla(MmadPingpong(), (128, 256, 256), (128, 256, 64), "int8", "int8", "int32")
    with pytest.raises(ConfigError, match="tensorIdx.*only SparseMatmulMultiBlockOnKAxis fits"):
        KernelSparseMatmul(other, None, kernel.block_scheduler)
    with pytest.raises(ConfigError, match="BlockSchedulerIterateK"):
        KernelSparseMatmul(kernel.block_mmad, None, object())


# -- the sparse tile ops ---------------------------------------------------------------------------------------------

def test_load_data_with_sparse_carries_the_index_and_mmad_uses_it():
    """A 32 x 48 dense tile and its index through L1 -> L0B, then MmadWithSparse with a 20 x 64 A: the result is A
    times the expanded B; an Mmad on L0B bytes no LoadDataWithSparse wrote finds index 3 (the poison)."""
    rng = np.random.default_rng(7)
    m, n, k = 20, 48, 64
    b = _sparse(rng, k, n)
    a = rng.integers(-128, 128, (m, k)).astype(np.int8)
    dense, index = sparse.compress_4to2(b)
    ctx = standalone_core(ATLAS_A2, "AIC")
    r = ctx.resource
    l1b = make_tensor(r.l1_buf.get_buffer_by_byte("int8", 4096), make_layout_tag("int8", "nZ", k // 2, n))
    l1i = make_tensor(r.l1_buf.get_buffer_by_byte("uint8", 32768), make_layout_tag("int32", "nZ", k // 8, n))
    l1b.write(dense.T)
    l1i.write(index.T)
    l0a = r.l0a_buf.get_buffer_by_byte("int8", 0)
    make_tensor(l0a, make_layout_tag("int8", "zZ", m, k)).write(a)
    l0b = r.l0b_buf.get_buffer_by_byte("int8", 512)
    CopyL1ToL0BSparseTla(ATLAS_A2)(make_tensor(l0b, make_layout_tag("int8", "nZ", k // 2, n)), l1b, l1i)
    l0c = r.l0c_buf.get_buffer_by_byte("int32", 0)
    TileMmadSparse(ATLAS_A2)(l0c, l0a, l0b, m, n, k)
    got = make_tensor(l0c, make_layout_l0c(m, n)).read()
    assert np.array_equal(got, _want(a, b))
    with pytest.raises(ArgumentError, match="index of dense value .* is 3"):
        TileMmadSparse(ATLAS_A2)(l0c, l0a, r.l0b_buf.get_buffer_by_byte("int8", 32768), m, n, k)
