"""numpy integer scalars are accepted wherever a Python int is - operators, examples' run(), LaunchParams,
shapes, layouts, assembly parameters - and kept as Python ints (bools are not integers here)."""

from __future__ import annotations

import numpy as np
import pytest

from catlass_py import cli, golden, ops
from catlass_py.arch import ATLAS_A2, LaunchParams
from catlass_py.arch.cross_core_sync import CrossCoreFlagWithReverse
from catlass_py.epilogue import EpilogueAtlasA2PerTokenDequant
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.gemm import GemmShape
from catlass_py.gemm.block import GemmIdentityBlockSwizzle
from catlass_py.gemm.coord import MatrixShape
from catlass_py.integers import as_int, is_int
from catlass_py.layout import ColumnMajor, RowMajor
from catlass_py.runner import ExampleRun, parse_int, parse_positional

I = np.int64  # noqa: E741


def test_is_int():
    assert all(is_int(v) for v in (3, I(3), np.uint8(3), np.int32(-1)))
    assert not any(is_int(v) for v in (True, np.bool_(True), 3.0, np.float32(3), "3", None))
    assert type(as_int(np.uint64(7))) is int and as_int("x") == "x"


def test_launch_params_take_numpy_integers_and_keep_ints():
    p = LaunchParams(seed=I(3), blas_threads=np.int32(2), poison=np.uint8(0), memory_limit=I(1 << 30))
    assert (p.seed, p.blas_threads, p.poison, p.memory_limit) == (3, 2, 0, 1 << 30)
    assert all(type(v) is int for v in (p.seed, p.blas_threads, p.poison, p.memory_limit))
    for kw, match in (({"seed": True}, "seed"), ({"blas_threads": np.bool_(True)}, "blas_threads"),
                      ({"poison": 2.0}, "poison"), ({"poison": I(256)}, "poison")):
        with pytest.raises(ArgumentError, match=match):
            LaunchParams(**kw)


def test_an_op_runs_with_numpy_seed_core_count_and_options():
    r = np.random.default_rng(0)
    a, b = r.uniform(-1, 1, (70, 40)).astype(np.float16), r.uniform(-1, 1, (40, 90)).astype(np.float16)
    c, launch = ops.basic_matmul(a, b, core_num=I(2), seed=I(7), options=LaunchParams(seed=I(7)), return_launch=True)
    assert launch.block_dim == 2 and golden.compare_data(c, golden.matmul(a, b), 40).passed


def test_shapes_layouts_and_assembly_parameters():
    s = GemmShape(I(128), np.int32(256), np.uint16(64)).check("L1TileShape")
    assert s == (128, 256, 64) and all(type(v) is int for v in s)
    assert all(type(v) is int for v in MatrixShape(I(2), I(3)).check("tile"))
    with pytest.raises(ConfigError, match="M must be a positive int"):
        GemmShape(True, 16, 16).check("L1TileShape")
    for layout in (RowMajor(I(4), I(8)), ColumnMajor(I(4), I(8), I(16)), RowMajor.make_layout("float16", I(4), I(8))):
        assert all(type(v) is int for v in (layout.rows, layout.cols))
    assert type(EpilogueAtlasA2PerTokenDequant(I(2)).ub_stages) is int
    sw = GemmIdentityBlockSwizzle(I(3), I(1))
    assert type(sw.swizzle_offset) is int and type(sw.swizzle_direction) is int
    f = CrossCoreFlagWithReverse(I(1), I(2))
    assert type(f.id) is int and type(f.reverse_id) is int


def test_example_run_takes_numpy_integers_in_argv_cores_and_seed():
    example = cli.load_script("10")
    result = example.run([I(2), np.int32(40), "64", 32], cores=I(2), seed=I(1))
    assert result.passed and result.cores == 2 and type(result.cores) is int
    assert result.shape == {"problem_count": 2, "m": 40, "n": 64, "k": 32}
    for bad in (0, 25, 2.0, True, "2"):
        with pytest.raises(ArgumentError, match="cores: expected an int in 1..24"):
            example.run(["2", "40", "64", "32"], cores=bad)


@pytest.mark.parametrize("text", ["1_28", "١٢٨", " 128", "128 ", "+128", "-1", "0x80", "1e2", "", "12.0", True])
def test_positional_integers_are_ascii_digits(text):
    with pytest.raises(ArgumentError, match=r"^m: expected (a decimal integer \(ASCII digits\)|an integer in)"):
        parse_positional("ex", "m n k", [text, "1", "1"])


def test_positional_integers_are_uint32_and_may_be_ints():
    assert parse_positional("ex", "m n k [device_id]", ["0", I(4294967295), 7, "0"]) == [0, 4294967295, 7, 0]
    with pytest.raises(ArgumentError, match=r"k: expected an integer in \[0, 4294967295\], got 4294967296"):
        parse_positional("ex", "m n k", ["1", "1", "4294967296"])
    with pytest.raises(ArgumentError, match="usage: ex m n k"):
        parse_positional("ex", "m n k", "123")
    assert parse_int("--seed", "-5", low=-10) == -5


def test_example_run_refuses_bad_core_counts_before_anything():
    with pytest.raises(ArgumentError, match="cores"):
        ExampleRun("x", ATLAS_A2, cores="4")
