"""Example 23 / FAInferKernel: CATLASS's compare rule against the example's golden, the fp64 error budget, random
small shapes, the split over cores and the cross-core handshake, bad input and assembly errors."""

from __future__ import annotations

import importlib

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catlass_py import golden_attention as G
from catlass_py.arch import LaunchParams
from catlass_py.cli import main
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.kernel.fa_infer import FAInferKernel, q_n_block_tile
from catlass_py.numerics.compare import compare_data
from catlass_py.ops import operator as operator_module
from catlass_py.ops.flash_attention_infer import (
    FAProblem,
    build_kernel,
    flash_attention_infer,
    launch_flash_attention,
    validate_inputs,
)

EX = importlib.import_module("catlass_py.examples.23_flash_attention_infer")


def make(q_lens, kv_lens, heads, kv_heads, d, *, dtype=np.float16, paged=True, seed=0, shuffle=True):
    rng = np.random.default_rng(seed)
    q = rng.uniform(-1, 1, (sum(q_lens), heads, d)).astype(dtype)
    if paged:
        max_blocks = -(-max(kv_lens) // 128)
        n = len(q_lens) * max_blocks + 2
        k = rng.uniform(-1, 1, (n, 128, kv_heads, d)).astype(dtype)
        v = rng.uniform(-1, 1, (n, 128, kv_heads, d)).astype(dtype)
        order = rng.permutation(n) if shuffle else np.arange(n)
        table = order[:len(q_lens) * max_blocks].reshape(len(q_lens), max_blocks).astype(np.int32)
    else:
        k = rng.uniform(-1, 1, (sum(kv_lens), kv_heads, d)).astype(dtype)
        v = rng.uniform(-1, 1, (sum(kv_lens), kv_heads, d)).astype(dtype)
        table = None
    return q, k, v, table


def check(q_lens, kv_lens, heads, kv_heads, d, causal, *, dtype=np.float16, paged=True, cores=2, races=True, seed=0):
    q, k, v, table = make(q_lens, kv_lens, heads, kv_heads, d, dtype=dtype, paged=paged, seed=seed)
    before = [x.copy() for x in (q, k, v)]
    o = flash_attention_infer(q, k, v, actual_seq_lengths=q_lens, actual_seq_lengths_kv=kv_lens, block_table=table,
                              mask="causal" if causal else None, core_num=cores,
                              options=LaunchParams(detect_races=races))
    assert o.dtype == q.dtype and o.shape == q.shape
    assert all(np.array_equal(a, b) for a, b in zip((q, k, v), before))  # inputs untouched
    expect = G.flash_attention_infer(q, k, v, q_lens, kv_lens, table, causal=causal)
    result = compare_data(o, expect.astype(np.float32), max(kv_lens))
    assert result.passed, (result, result.worst_index)
    # Error budget against exact arithmetic: the kernel stays within the golden's own error plus 1 ulp of O.
    exact = G.attention_fp64(q, k, v, q_lens, kv_lens, table, causal=causal)
    ulp = 2.0 ** -8 if dtype is ml_dtypes.bfloat16 else 2.0 ** -11
    kernel_err = np.abs(o.astype(np.float64) - exact).max()
    golden_err = np.abs(expect.astype(np.float64) - exact).max()
    assert kernel_err <= golden_err + ulp * max(1.0, np.abs(exact).max())
    return o


@pytest.mark.parametrize("q_lens,kv_lens,heads,kv_heads,d,causal", [
    ([1], [1], 1, 1, 16, False),               # one token, one KV token
    ([1], [1], 1, 1, 16, True),                # ... masked: the stack is the diagonal tile only
    ([1, 1], [300, 5], 4, 2, 32, True),        # decode with GQA groups of 2, KV not a multiple of 128
    ([3], [1100], 2, 1, 48, True),             # three stacks, a masked stack starting inside a KV block
    ([150], [150], 1, 1, 64, True),            # two query blocks of one head: the vector cores split tokens
])
def test_shapes_against_the_examples_golden(q_lens, kv_lens, heads, kv_heads, d, causal):
    check(q_lens, kv_lens, heads, kv_heads, d, causal)


def test_bf16_contiguous_cache_and_unit_flag():
    check([2, 5], [130, 384], 4, 2, 128, False, dtype=ml_dtypes.bfloat16, paged=False)
    q, k, v, table = make([3], [600], 2, 2, 64)
    o = flash_attention_infer(q, k, v, actual_seq_lengths=[3], actual_seq_lengths_kv=[600], block_table=table,
                              mask="causal", core_num=2, enable_unit_flag=True,
                              options=LaunchParams(detect_races=True))
    assert compare_data(o, G.flash_attention_infer(q, k, v, [3], [600], table, causal=True).astype(np.float32), 600)


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_small_problems(data):
    batch = data.draw(st.integers(1, 2))
    kv_heads = data.draw(st.sampled_from([1, 2]))
    heads = kv_heads * data.draw(st.sampled_from([1, 2, 3]))
    d = data.draw(st.sampled_from([16, 48, 128]))
    q_lens = [data.draw(st.integers(1, 140)) for _ in range(batch)]
    kv_lens = [ql + data.draw(st.integers(0, 300)) for ql in q_lens]
    causal = data.draw(st.booleans())
    dtype = data.draw(st.sampled_from([np.float16, ml_dtypes.bfloat16]))
    check(q_lens, kv_lens, heads, kv_heads, d, causal, dtype=dtype, cores=data.draw(st.integers(1, 3)), races=False)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_problems_slow(data):
    batch = data.draw(st.integers(1, 3))
    kv_heads = data.draw(st.sampled_from([1, 2, 4]))
    heads = kv_heads * data.draw(st.sampled_from([1, 2, 3, 8]))
    d = data.draw(st.sampled_from([16, 64, 80, 128]))
    q_lens = [data.draw(st.integers(1, 300)) for _ in range(batch)]
    kv_lens = [ql + data.draw(st.integers(0, 1200)) for ql in q_lens]
    causal = data.draw(st.booleans())
    paged = causal or data.draw(st.booleans())
    check(q_lens, kv_lens, heads, kv_heads, d, causal, paged=paged, cores=data.draw(st.integers(1, 4)),
          races=data.draw(st.booleans()), seed=data.draw(st.integers(0, 100)))


def _tasks(q_lens, heads, kv_heads):
    """(batch, q block, q head) of every task in the order the kernel deals them."""
    group = heads // kv_heads
    out = []
    for b, ql in enumerate(q_lens):
        tile = q_n_block_tile(ql, group)
        per_group = -(-group // tile)
        for qs in range(-(-ql // 128)):
            for qn in range(per_group * kv_heads):
                out.append((b, qs, (qn // per_group) * group + (qn % per_group) * tile))
    return out


def test_split_over_cores_and_handshake():
    """Task t (batch, 128-token query block, group of query heads) runs on AI core t % cores; both vector cores of
    that AI core take it; per task and stack the cube sets qkReady and pvReady once and waits softmaxReady once."""
    q_lens, kv_lens, heads, kv_heads = [130, 20], [700, 20], 4, 2
    q, k, v, table = make(q_lens, kv_lens, heads, kv_heads, 32)
    cores = 3
    o, report = flash_attention_infer(q, k, v, actual_seq_lengths=q_lens, actual_seq_lengths_kv=kv_lens,
                                      block_table=table, mask="causal", core_num=cores, return_report=True)
    tasks = _tasks(q_lens, heads, kv_heads)
    for c in range(cores):
        got = [(b["batch"], b["q_s_block"], b["q_head"]) for b in report.blocks.get(c, [])]
        assert got == tasks[c::cores]
        for sub in (0, 1):
            assert [e["task"] for e in report.epilogue_blocks[(c, sub)]] == list(range(c, len(tasks), cores))
    stacks = {c: sum(b["stacks"] for b in report.blocks.get(c, [])) for c in range(cores)}
    for core, traffic in report.flags.items():
        c = core.ai_core
        if core.type.value == "AIC":
            assert traffic.sets[1] == traffic.sets[3] == traffic.waits[2] == stacks[c]
        else:
            assert traffic.waits[1] == traffic.waits[3] == traffic.sets[2] == stacks[c]


def test_interleavings_give_the_same_output():
    q, k, v, table = make([40], [900], 2, 1, 32)
    outs = [flash_attention_infer(q, k, v, actual_seq_lengths=[40], actual_seq_lengths_kv=[900], block_table=table,
                                  mask="causal", core_num=1, options=LaunchParams(seed=s, preempt_on_set=True))
            for s in (None, 1, 2)]
    assert all(np.array_equal(outs[0], x) for x in outs[1:])


def test_contiguous_cache_with_a_masked_stack_inside_a_block_reproduces_catlass():
    """CATLASS's getKVOffset ignores maskTailS for the contiguous cache (the example builds only the paged
    kernel): the kernel, run directly, reads the masked stack's K and V from the KV block's start and misses the
    golden; the op refuses the combination."""
    q, k, v, _ = make([3], [130], 1, 1, 32, paged=False)
    with pytest.raises(ArgumentError, match="mask: needs the paged KV cache"):
        flash_attention_infer(q, k, v, actual_seq_lengths=[3], actual_seq_lengths_kv=[130], mask="causal")
    problem = validate_inputs(q, k, v, actual_seq_lengths=[3], actual_seq_lengths_kv=[130])
    problem = FAProblem(**{**problem.__dict__, "mask": np.triu(np.ones((1024, 1024)), 1).astype(np.float16)})
    o, _ = launch_flash_attention(build_kernel(element="float16", paged_cache=False), problem, q, k, v, core_num=1)
    expect = G.flash_attention_infer(q, k, v, [3], [130], None, causal=True)
    assert not compare_data(o, expect.astype(np.float32), 130).passed


@pytest.mark.parametrize("kwargs,match", [
    (dict(q=np.zeros((4, 2, 32), np.float32)), "q: expected dtype"),
    (dict(k=np.zeros((4, 32), np.float16)), "k: expected a 4-D paged cache"),
    (dict(v=np.zeros((3, 128, 1, 32), ml_dtypes.bfloat16)), "v: expected dtype float16"),
    (dict(num_kv_heads=2), "num_kv_heads: 2 does not match"),
    (dict(q=np.zeros((4, 3, 32), np.float16), k=np.zeros((3, 128, 2, 32), np.float16),
          v=np.zeros((3, 128, 2, 32), np.float16)), "multiple of the 2 KV heads"),
    (dict(actual_seq_lengths=[1, 2]), "sum to 3 but q has 4"),
    (dict(actual_seq_lengths_kv=[300]), "holds 1 blocks of 128"),
    (dict(block_table=np.array([[7]], np.int32)), r"block_table: entry \[0, 0\] = 7 points outside"),
    (dict(block_table=np.array([[0]], np.int64)), "block_table: expected dtype int32"),
    (dict(actual_seq_lengths_kv=[3], mask="causal"), "query length must be <= its KV length"),
    (dict(mask=np.zeros((128, 128), np.float16)), "expected shape \\(1024, 1024\\)"),
    (dict(mask="full"), "mask: expected None, 'causal'"),
    (dict(q=np.zeros((4, 1, 136), np.float16), k=np.zeros((3, 128, 1, 136), np.float16),
          v=np.zeros((3, 128, 1, 136), np.float16)), "head_dim must be a multiple of 16"),
    (dict(actual_seq_lengths=[0, 4]), "actual_seq_lengths: every length must be >= 1"),
    (dict(scale=float("nan")), "scale: expected a finite float"),
    (dict(core_num=25), "core_num: expected an int in 1..24"),
])
def test_bad_input_is_refused_before_any_launch(monkeypatch, kwargs, match):
    def no_launch(*a, **k):
        raise AssertionError("launched")

    monkeypatch.setattr(operator_module, "launch", no_launch)
    args = dict(q=np.zeros((4, 1, 32), np.float16), k=np.zeros((3, 128, 1, 32), np.float16),
                v=np.zeros((3, 128, 1, 32), np.float16), actual_seq_lengths=[4], actual_seq_lengths_kv=[100],
                block_table=np.array([[1]], np.int32))
    args.update(kwargs)
    with pytest.raises(ArgumentError, match=match):
        flash_attention_infer(args.pop("q"), args.pop("k"), args.pop("v"), **args)


def test_assembly_errors():
    from catlass_py.gemm import GemmShape, GemmType
    from catlass_py.gemm.block import BlockMmad
    from catlass_py.gemm.dispatch_policy_attention import MmadAtlasA2FAIQK
    from catlass_py.layout import ColumnMajor, RowMajor

    kernel = EX.assemble()
    with pytest.raises(ConfigError, match="L1TileShape and L0TileShape must be \\(128, 128, 128\\)"):
        BlockMmad(MmadAtlasA2FAIQK(True, False), GemmShape(128, 128, 64), GemmShape(128, 128, 64),
                  GemmType("float16", RowMajor), GemmType("float16", ColumnMajor), GemmType("float32", RowMajor))
    with pytest.raises(ConfigError, match="ElementC must be float"):
        BlockMmad(MmadAtlasA2FAIQK(True, False), GemmShape(128, 128, 128), GemmShape(128, 128, 128),
                  GemmType("float16", RowMajor), GemmType("float16", ColumnMajor), GemmType("float16", RowMajor))
    with pytest.raises(ConfigError, match="PAGED_CACHE_FLAG is False"):
        FAInferKernel(kernel.block_mmad_qk, kernel.block_mmad_pv, kernel.block_mmad_qk_tail, kernel.block_mmad_pv_tail,
                      kernel.epilogue_online_softmax, kernel.epilogue_rescale_o, False)
    bf = EX.assemble(element="bfloat16")
    with pytest.raises(ConfigError, match="share one element type"):
        FAInferKernel(kernel.block_mmad_qk, kernel.block_mmad_pv, kernel.block_mmad_qk_tail, kernel.block_mmad_pv_tail,
                      bf.epilogue_online_softmax, kernel.epilogue_rescale_o, True)


def test_example_run_and_cli(capsys):
    res = EX.run(["2", "20", "300", "4", "2", "64", "1", "1"], cores=2)
    assert res.passed and res.details["mask"] == "causal" and res.details["tasks"] == 4
    assert res.details["max_abs_error_vs_fp64"] < 1e-3
    assert main(["run", "23_flash_attention_infer", "1", "9", "40", "2", "1", "32", "0", "0", "--dtype", "bf16",
                 "--cores", "2", "--json", "--detect-races"]) == 0
    out = capsys.readouterr().out
    assert '"passed": true' in out and '"dtype": "bf16"' in out and '"races": 0' in out
    assert main(["run", "23_flash_attention_infer", "1", "9", "40", "2", "1", "32", "0", "2"]) == 2
    assert "maskType" in capsys.readouterr().err
    assert main(["run", "23_flash_attention_infer", "1", "9", "40", "2", "1", "32", "0", "0", "--dtype"]) == 2


@pytest.mark.slow
def test_readme_shape():
    """``23_flash_attention_infer 1 177 512 1 1 128 0 1 --dtype bf16`` (the README's case) on 24 cores."""
    res = EX.run(["1", "177", "512", "1", "1", "128", "0", "1", "--dtype", "bf16"],
                 options=LaunchParams(detect_races=True))
    assert res.passed and res.verdict == "Compare success."
