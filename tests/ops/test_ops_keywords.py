"""Every operator takes the same launch keywords, parsed by one function (catlass_py.ops.operator.op_options):
numpy integer core counts, a custom ArchSpec that reaches the kernel's assembly, launch options, the report and
the LaunchResult; ``out_dtype`` accepts numpy types wherever the output type is a choice."""

import inspect

import ml_dtypes
import numpy as np
import pytest

from catlass_py import golden, ops
from catlass_py.arch import ATLAS_A2, LaunchParams, LaunchResult
from catlass_py.analysis import WorkloadReport
from catlass_py.data import example10_inputs
from catlass_py.errors import ArgumentError
from catlass_py.ops.grouped_matmul_slice_m_per_token_dequant import build_kernel as build_flagship
from catlass_py.ops.transpose_quant_batch_matmul import make_inputs

KEYWORDS = {"core_num", "arch", "seed", "observers", "options", "return_report", "return_launch", "kernel"}
A48 = ATLAS_A2.model_copy(update={"core_num": 48})


def _f16(rng, *shape):
    return rng.uniform(-2, 2, size=shape).astype(np.float16)


def _calls():
    """(op name, callable(**launch keywords)) with small inputs, for every operator."""
    r = np.random.default_rng(3)
    a, b = _f16(r, 130, 64), _f16(r, 64, 260)
    a8, b8 = r.integers(-8, 8, (130, 64), dtype=np.int8), r.integers(-8, 8, (64, 260), dtype=np.int8)
    gl = np.array([40, 40, 130], np.int64)
    glk = np.array([20, 40, 64], np.int64)  # no empty K group: example 05 zero-fills those racily (as CATLASS)
    bf = lambda *s: r.uniform(0.5, 1.5, s).astype(np.float32).astype(ml_dtypes.bfloat16)  # noqa: E731
    f16 = lambda *s: r.uniform(0.5, 1.5, s).astype(np.float16)  # noqa: E731
    f32 = lambda *s: r.uniform(0.5, 1.5, s).astype(np.float32)  # noqa: E731
    tq = make_inputs(8, 64, 64, 1, out_dtype="float16")
    fa_q, fa_kv = _f16(r, 6, 2, 32), _f16(r, 40, 1, 32)
    sparse_b = (r.integers(-8, 8, (64, 512)) * (r.random((16, 4, 512)).argsort(axis=1) < 2).reshape(64, 512)).astype(
        np.int8)  # 4:2 along k; two blocks along n
    mla_args = (_f16(r, 2, 4, 512), _f16(r, 2, 4, 64), _f16(r, 2, 128, 1, 512), _f16(r, 2, 128, 1, 64),
                np.array([[0], [1]], np.int32))
    return {
        "basic_matmul": lambda **kw: ops.basic_matmul(a, b, **kw),
        "basic_matmul_preload_zn": lambda **kw: ops.basic_matmul_preload_zn(a, b, **kw),
        "basic_matmul_tla": lambda **kw: ops.basic_matmul_tla(a, b, **kw),
        "batched_matmul": lambda **kw: ops.batched_matmul(a[None], b[None], **kw),
        "flash_attention_infer": lambda **kw: ops.flash_attention_infer(fa_q, fa_kv, fa_kv, actual_seq_lengths=[6],
                                                                        actual_seq_lengths_kv=[40], **kw),
        "grouped_matmul": lambda **kw: ops.grouped_matmul([a], [b], **kw),
        "grouped_matmul_slice_k": lambda **kw: ops.grouped_matmul_slice_k(a, b, glk, **kw),
        "grouped_matmul_slice_k_per_token_dequant":
            lambda **kw: ops.grouped_matmul_slice_k_per_token_dequant(a8, b8, glk, bf(3, 260), bf(3, 130), **kw),
        "grouped_matmul_slice_m": lambda **kw: ops.grouped_matmul_slice_m(a, np.stack([b] * 3), gl, **kw),
        "grouped_matmul_slice_m_per_token_dequant":
            lambda **kw: ops.grouped_matmul_slice_m_per_token_dequant(a8, np.stack([b8] * 3), gl, bf(3, 260), bf(130),
                                                                      **kw),
        "grouped_matmul_slice_m_per_token_dequant_moe":
            lambda **kw: ops.grouped_matmul_slice_m_per_token_dequant_moe(
                a8, np.stack([b8] * 3), gl.astype(np.int32), r.uniform(0.5, 1.5, (3, 260)).astype(np.float32),
                r.uniform(0.5, 1.5, 130).astype(np.float32), **kw),
        "matmul_add": lambda **kw: ops.matmul_add(a, b, _f16(r, 130, 260), **kw),
        "matmul_bias": lambda **kw: ops.matmul_bias(a, b, _f16(r, 260), **kw),
        "matmul_gelu": lambda **kw: ops.matmul_gelu(a, b, **kw),
        "matmul_relu": lambda **kw: ops.matmul_relu(a, b, **kw),
        "matmul_silu": lambda **kw: ops.matmul_silu(a, b, **kw),
        "optimized_matmul": lambda **kw: ops.optimized_matmul(a, b, **kw),
        "optimized_matmul_tla": lambda **kw: ops.optimized_matmul_tla(a, b, **kw),
        "mla": lambda **kw: ops.mla(*mla_args, actual_seq_lengths=[1, 1], actual_seq_lengths_kv=[100, 60], **kw),
        "quant_matmul": lambda **kw: ops.quant_matmul(a8, b8, f16(260), f16(130), **kw),
        "quant_matmul_full_load_a_tla": lambda **kw: ops.quant_matmul_full_load_a_tla(a8, b8, f32(260), f32(130), **kw),
        # one block: with 2 AI cores the epilogue's step is 1 (half the cores), and a second block would be
        # dequantised twice (a benign race the detector would report, see docs/kernels.md)
        "quant_multi_core_splitk_matmul_tla":
            lambda **kw: ops.quant_multi_core_splitk_matmul_tla(a8[:100], b8[:, :200], f32(200), f32(100), **kw),
        "quant_optimized_matmul_tla": lambda **kw: ops.quant_optimized_matmul_tla(a8, b8, f32(260), f32(130), **kw),
        "single_core_splitk_matmul": lambda **kw: ops.single_core_splitk_matmul(a, b, **kw),
        "sparse_matmul_tla": lambda **kw: ops.sparse_matmul_tla(a8[:128], sparse_b, **kw),
        "splitk_matmul": lambda **kw: ops.splitk_matmul(a, b, **kw),
        "streamk_matmul": lambda **kw: ops.streamk_matmul(a, b, **kw),
        "strided_batched_matmul_tla": lambda **kw: ops.strided_batched_matmul_tla(a[None], b[None], **kw),
        "transpose_quant_batch_matmul": lambda **kw: ops.transpose_quant_batch_matmul(*tq, out_dtype="float16", **kw),
    }


CALLS = _calls()


def test_every_op_has_the_same_launch_keywords():
    assert set(CALLS) == set(ops.__all__)
    for name in ops.__all__:
        params = inspect.signature(getattr(ops, name)).parameters
        missing = KEYWORDS - set(params)
        assert not missing, (name, missing)
        assert all(params[k].kind is inspect.Parameter.KEYWORD_ONLY for k in KEYWORDS), name


@pytest.mark.parametrize("name", sorted(CALLS))
def test_numpy_core_num_and_the_report_and_launch_result(name):
    out, report, launch = CALLS[name](core_num=np.int64(2), return_report=True, return_launch=True,
                                      options=LaunchParams(detect_races=True))
    assert isinstance(report, WorkloadReport) and isinstance(launch, LaunchResult)
    assert launch.block_dim == 2 and launch.race_detector is not None
    assert sum(report.blocks_per_core()) > 0


@pytest.mark.parametrize("bad", [0, np.int64(25), 2.0, True, "2"])
def test_core_num_is_checked_by_one_function(bad):
    for name in ("basic_matmul", "quant_matmul", "grouped_matmul_slice_m_per_token_dequant"):
        with pytest.raises(ArgumentError, match="core_num: expected an int in 1..24"):
            CALLS[name](core_num=bad)


def test_a_custom_arch_reaches_the_kernel_assembly():
    r = np.random.default_rng(0)
    a, b = _f16(r, 300, 100), _f16(r, 100, 520)
    c, launch = ops.basic_matmul(a, b, core_num=48, arch=A48, return_launch=True)
    assert launch.arch == A48 and launch.block_dim == 48
    assert golden.compare_data(c, golden.matmul(a, b), 100).passed
    x = example10_inputs(4, 128, 256, 512)
    kernel = build_flagship(A48, "bfloat16")
    assert kernel.arch == A48 and kernel.block_mmad.policy.arch == A48 and kernel.block_epilogue.arch == A48
    d = ops.grouped_matmul_slice_m_per_token_dequant(x.a, x.b, x.group_list, x.scale, x.per_token_scale, core_num=40,
                                                     arch=A48)
    want = golden.grouped_matmul_slice_m_per_token_dequant(x.a, x.b, x.group_list, x.scale, x.per_token_scale)
    assert np.array_equal(d, want.astype(d.dtype))


@pytest.mark.parametrize("name", ["splitk_matmul", "single_core_splitk_matmul", "matmul_gelu", "basic_matmul"])
@pytest.mark.parametrize("out_dtype", [np.float32, np.dtype("float32"), "float32"])
def test_out_dtype_takes_numpy_types(name, out_dtype):
    c = CALLS[name](core_num=2, out_dtype=out_dtype)
    assert c.dtype == np.float32


def test_out_dtype_errors_name_the_allowed_types():
    with pytest.raises(ArgumentError, match=r"out_dtype: expected one of \('float16', 'bfloat16', 'float32'\)"):
        CALLS["splitk_matmul"](core_num=2, out_dtype=np.int8)
    with pytest.raises(ArgumentError, match="out_dtype"):
        ops.transpose_quant_batch_matmul(*make_inputs(8, 64, 64, 1), out_dtype=np.float32)
