"""pypto-gym transpose_quant_batch_matmul (seed 004; pto-mx-semantics 7): the seed's test configurations against
the golden with rtol = atol = 1e-3, tails and K steps, argument checks, and the golden itself against an
element-by-element float64 reading of the contract.
"""

import json
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from catlass_py import golden
from catlass_py.arch import ATLAS_A2
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.kernel.transpose_quant_batch_matmul import TransposeQuantBatchMatmulKernel
from catlass_py.ops import transpose_quant_batch_matmul
from catlass_py.ops.transpose_quant_batch_matmul import make_inputs

RTOL = ATOL = 1e-3  # the pypto-gym test's assert_allclose


def _check(m, k, n, b, in_dtype, out_dtype, perm_x2, **kw):
    x1, x2, s1, s2 = make_inputs(m, k, n, b, in_dtype=in_dtype, out_dtype=out_dtype, perm_x2=perm_x2, seed=m + n + b)
    out = transpose_quant_batch_matmul(x1, x2, s1, s2, perm_x2=perm_x2, out_dtype=out_dtype, **kw)
    want = golden.transpose_quant_batch_matmul(x1, x2, s1, s2, perm_x2=perm_x2, out_dtype=out_dtype)
    assert out.shape == (m, b, n) and out.dtype == want.dtype
    for bi in range(b):  # batch by batch: test3's output is 1 GiB, whole-array temporaries would be several
        np.testing.assert_allclose(out[:, bi].astype(np.float32), want[:, bi].astype(np.float32), rtol=RTOL, atol=ATOL)
    return out, want


def test_seed_test1():
    # ShapeConfig(ori_shape=[8, 128, 512], batch_size=128, DT_FP8E5M2 -> DT_BF16, permX2=[0, 2, 1])
    _check(8, 128, 512, 128, "float8_e5m2", "bfloat16", (0, 2, 1))


@pytest.mark.slow
@pytest.mark.parametrize("m", [8192, 32768], ids=["test3", "test4"])
def test_seed_large_streamed(m):
    # ShapeConfig(ori_shape=[M, 128, 512], batch_size=128, DT_FP8E4M3 -> DT_FP16, permX2=[0, 1, 2]), M = 8192 / 32768:
    # run M-chunk by M-chunk (tests/pto/tqbmm_streamed.py) in a child process that must stay under 2 GiB and 10 min
    here = Path(__file__).parent
    res = subprocess.run([sys.executable, str(here / "tqbmm_streamed.py"), str(m)], cwd=here, capture_output=True,
                         text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-4000:]
    rows, peak = (int(v) for v in res.stdout.split()[-2:])
    assert rows == m
    assert peak < 2 * 1024**3, f"peak RSS {peak / 1024**3:.2f} GiB"


@pytest.mark.parametrize("m, k, n, b, in_dtype, out_dtype, perm", [
    (300, 320, 80, 2, "float8_e4m3fn", "float16", (0, 1, 2)),   # M tail, three K steps (128, 128, 64), N < n0
    (40, 192, 272, 3, "float8_e5m2", "bfloat16", (0, 2, 1)),     # N tail past one 256 block
    (16, 64, 16, 1, "float8_e4m3fn", "bfloat16", (0, 2, 1)),
])
def test_tails_and_k_steps(m, k, n, b, in_dtype, out_dtype, perm):
    _check(m, k, n, b, in_dtype, out_dtype, perm, core_num=5)


def test_result_independent_of_cores_and_interleaving():
    x1, x2, s1, s2 = make_inputs(64, 128, 64, 6, perm_x2=(0, 1, 2), out_dtype="float16", seed=9)
    ref = transpose_quant_batch_matmul(x1, x2, s1, s2, out_dtype="float16", core_num=1)
    for cores, seed in ((3, None), (32, 7)):
        got = transpose_quant_batch_matmul(x1, x2, s1, s2, out_dtype="float16", core_num=cores, seed=seed,
                                           tile_shape=(32, 32, 64))
        np.testing.assert_allclose(got.astype(np.float32), ref.astype(np.float32), rtol=RTOL, atol=ATOL)


def test_nan_scale_and_inputs_untouched():
    x1, x2, s1, s2 = make_inputs(16, 128, 32, 2, perm_x2=(0, 2, 1), seed=3)
    s1 = s1.copy()
    s1[5, 1, 1, 0] = 0xFF  # NaN scale for row 5 of batch 1, k in [64, 96)
    copies = [x.copy() for x in (x1, x2, s1, s2)]
    want = golden.transpose_quant_batch_matmul(x1, x2, s1, s2, perm_x2=(0, 2, 1), out_dtype="bfloat16")
    assert np.isnan(want[5, 1].astype(np.float32)).all()
    out = transpose_quant_batch_matmul(x1, x2, s1.view(ml_dtypes.float8_e8m0fnu), s2, perm_x2=(0, 2, 1), out_dtype=27,
                                       saturation=False)
    assert out.dtype == np.dtype(ml_dtypes.bfloat16)
    np.testing.assert_allclose(out.astype(np.float32), want.astype(np.float32), rtol=RTOL, atol=ATOL, equal_nan=True)
    # the default saturating fixpipe (CTRL[48] = 0) turns the NaN accumulator row into zeros
    sat = transpose_quant_batch_matmul(x1, x2, s1, s2, perm_x2=(0, 2, 1), out_dtype="bfloat16")
    assert (sat[5, 1].astype(np.float32) == 0).all()
    np.testing.assert_array_equal(np.delete(sat, 5, axis=0).view(np.uint16), np.delete(out, 5, axis=0).view(np.uint16))
    for a, b in zip(copies, (x1, x2, s1, s2)):
        np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


def test_golden_against_elementwise_contract():
    rng = np.random.default_rng(11)
    m, b, k, n = 3, 2, 128, 5
    x1 = rng.uniform(-2, 2, (m, b, k)).astype(ml_dtypes.float8_e4m3fn)
    s1 = rng.integers(118, 129, (m, b, k // 64, 2)).astype(np.uint8)
    for perm in ((0, 1, 2), (0, 2, 1)):
        x2 = rng.uniform(-2, 2, (b, k, n) if perm == (0, 1, 2) else (b, n, k)).astype(ml_dtypes.float8_e4m3fn)
        s2 = rng.integers(118, 129, (b, k // 64, n, 2) if perm == (0, 1, 2) else (b, n, k // 64, 2)).astype(np.uint8)
        got = golden.transpose_quant_batch_matmul(x1, x2, s1, s2, perm_x2=perm, out_dtype="float16")
        for mi in range(m):
            for bi in range(b):
                for ni in range(n):
                    acc = 0.0
                    for ki in range(k):
                        a = float(x1[mi, bi, ki]) * 2.0 ** (int(s1[mi, bi, ki // 64, (ki // 32) % 2]) - 127)
                        if perm == (0, 1, 2):
                            w = float(x2[bi, ki, ni]) * 2.0 ** (int(s2[bi, ki // 64, ni, (ki // 32) % 2]) - 127)
                        else:
                            w = float(x2[bi, ni, ki]) * 2.0 ** (int(s2[bi, ni, ki // 64, (ki // 32) % 2]) - 127)
                        acc += a * w
                    assert abs(float(got[mi, bi, ni]) - acc) <= 1e-3 * abs(acc) + 1e-6


@pytest.mark.parametrize("change, match", [
    (dict(k=96), "K must be a positive multiple of 64"),
    (dict(perm_x1=(0, 1, 2)), "perm_x1"),
    (dict(perm_y=(0, 1, 2)), "perm_y"),
    (dict(perm_x2=(1, 0, 2)), "perm_x2"),
    (dict(x1_dtype=np.float16), "x1: expected dtype float8_e4m3fn or float8_e5m2"),
    (dict(x2_dtype=ml_dtypes.float8_e5m2), "x2: expected the dtype of x1"),
    (dict(s1_shape=(4, 2, 2, 1)), r"x1_scale: expected shape \(4, 2, 2, 2\)"),
    (dict(s2_shape=(2, 2, 32, 2)), r"x2_scale: expected shape \(2, 32, 2, 2\) \(\[B, N, K//64, 2\]"),
    (dict(s1_dtype=np.float32), "E8M0 scales as uint8"),
    (dict(out_dtype="float32"), "out_dtype"),
    (dict(core_num=0), "core_num"),
    (dict(x2_shape=(3, 32, 128)), r"x2: expected shape \(2, N, 128\)"),
])
def test_argument_errors(change, match):
    m, b, k, n = 4, 2, change.get("k", 128), 32
    x1 = np.zeros((m, b, k), change.get("x1_dtype", ml_dtypes.float8_e4m3fn))
    x2 = np.zeros(change.get("x2_shape", (b, n, k)), change.get("x2_dtype", ml_dtypes.float8_e4m3fn))
    s1 = np.zeros(change.get("s1_shape", (m, b, max(k // 64, 1), 2)), change.get("s1_dtype", np.uint8))
    s2 = np.zeros(change.get("s2_shape", (b, n, max(k // 64, 1), 2)), np.uint8)
    kw = {key: change[key] for key in ("perm_x1", "perm_y", "out_dtype", "core_num") if key in change}
    with pytest.raises(ArgumentError, match=match):
        transpose_quant_batch_matmul(x1, x2, s1, s2, perm_x2=change.get("perm_x2", (0, 2, 1)), **kw)


def test_kernel_assembly_checks():
    with pytest.raises(ConfigError, match="only on Ascend 950"):
        TransposeQuantBatchMatmulKernel(arch=ATLAS_A2)
    with pytest.raises(ConfigError, match="k0 % 64"):
        TransposeQuantBatchMatmulKernel(tile_shape=(256, 256, 96))
    with pytest.raises(ConfigError, match="bytes of L0C"):
        TransposeQuantBatchMatmulKernel(tile_shape=(512, 256, 64))
    with pytest.raises(ConfigError, match="fp8 e4m3fn or e5m2"):
        TransposeQuantBatchMatmulKernel(in_dtype="float16")
    with pytest.raises(ConfigError, match="float16 or bfloat16"):
        TransposeQuantBatchMatmulKernel(out_dtype="float32")
    with pytest.raises(ConfigError, match="perm_x2"):
        TransposeQuantBatchMatmulKernel(perm_x2=(1, 0, 2))


def test_example_runs_from_the_cli(capsys):
    from catlass_py.cli import load_script, main

    ex = load_script("transpose_quant_batch_matmul")
    res = ex.run(["32", "64", "48", "3", "e5m2", "fp16", "021"], cores=4)
    assert res.passed and res.error_count == 0 and sum(res.blocks_per_core) == 3
    assert main(["run", "transpose_quant_batch_matmul", "test1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["passed"] and out["shape"] == {"m": 8, "k": 128, "n": 512, "batch": 128}
    assert out["details"]["perm_x2"] == [0, 2, 1] and out["details"]["out_dtype"] == "bfloat16"
    assert main(["run", "transpose_quant_batch_matmul", "8", "100", "64", "1"]) == 2  # K % 64 != 0
