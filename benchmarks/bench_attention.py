"""Speed of the attention kernels (examples 19 and 23) against their numpy goldens.

    python benchmarks/bench_attention.py [--repeat N] [--cores N] [--only decode|prefill|mla]

Three problems: one decode step of flash attention inference (batch 8, 32 query and 32 KV heads,
head dim 128, KV length 4096, paged fp16 cache), one causal prefill (batch 1, 2048 tokens, 32 heads, head dim
128) and one MLA decode step (batch 8, 32 heads, KV length 4096). For each it prints the simulation's wall time
(``ops.flash_attention_infer`` / ``ops.mla``, kernel assembly cached, best of ``--repeat``) over the wall time
of the example's own numpy golden (``catlass_py.golden_attention``, best of ``--repeat``), and over a plain
numpy softmax attention in float32 (one batched matmul per batch, the fastest numpy formulation). Target:
simulation / golden at most 10x. Nothing here is asserted by the test suite.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from catlass_py import golden_attention as G
from catlass_py.numerics.compare import compare_data, error_metrics
from catlass_py.ops import flash_attention_infer, mla


def _best(fn, repeat):
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _paged(rng, batch, kv_len, kv_heads, d, dtype=np.float16):
    blocks = -(-kv_len // 128)
    k = rng.uniform(-1, 1, (batch * blocks, 128, kv_heads, d)).astype(dtype)
    v = rng.uniform(-1, 1, (batch * blocks, 128, kv_heads, d)).astype(dtype)
    table = rng.permutation(batch * blocks).reshape(batch, blocks).astype(np.int32)
    return k, v, table


def _plain_attention(q, k, v, q_lens, kv_lens, table, causal):
    """float32 softmax(Q K^T / sqrt(d)) V per batch, heads batched in one matmul (GQA by repetition)."""
    heads, d = q.shape[1], q.shape[2]
    out = np.empty(q.shape, np.float32)
    start = 0
    for b, (ql, kl) in enumerate(zip(q_lens, kv_lens)):
        kb = k[table[b]].reshape(-1, *k.shape[2:])[:kl].astype(np.float32)
        vb = v[table[b]].reshape(-1, *v.shape[2:])[:kl].astype(np.float32)
        rep = heads // kb.shape[1]
        kb, vb = np.repeat(kb, rep, axis=1), np.repeat(vb, rep, axis=1)
        qb = q[start:start + ql].astype(np.float32).transpose(1, 0, 2)
        s = qb @ kb.transpose(1, 2, 0) * np.float32(1 / np.sqrt(d))
        if causal:
            s = np.where(np.triu(np.ones((ql, kl), bool), 1 + kl - ql), np.float32(-np.inf), s)
        s = np.exp(s - s.max(-1, keepdims=True))
        out[start:start + ql] = ((s / s.sum(-1, keepdims=True)) @ vb.transpose(1, 0, 2)).transpose(1, 0, 2)
        start += ql
    return out


def _report(title, t_sim, t_gold, t_plain, verdict):
    print(title)
    print(f"  golden {t_gold:8.3f} s   plain numpy {t_plain:8.3f} s   simulation {t_sim:8.3f} s")
    print(f"  simulation / golden {t_sim / t_gold:6.2f}x (target <= 10x)   simulation / plain numpy "
          f"{t_sim / t_plain:6.2f}x   {verdict}")
    return t_sim / t_gold


def bench_fa(title, q_lens, kv_len, heads, kv_heads, d, causal, cores, repeat):
    rng = np.random.default_rng(0)
    batch = len(q_lens)
    q = rng.uniform(-1, 1, (sum(q_lens), heads, d)).astype(np.float16)
    k, v, table = _paged(rng, batch, kv_len, kv_heads, d)
    kv_lens = [kv_len] * batch
    mask = "causal" if causal else None
    kw = dict(actual_seq_lengths=q_lens, actual_seq_lengths_kv=kv_lens, block_table=table, mask=mask, core_num=cores)
    flash_attention_infer(q[:q_lens[0]], k, v, **{**kw, "actual_seq_lengths": q_lens[:1],
                                                   "actual_seq_lengths_kv": kv_lens[:1], "block_table": table[:1]})
    t_gold, expect = _best(lambda: G.flash_attention_infer(q, k, v, q_lens, kv_lens, table, causal=causal), repeat)
    t_plain, _ = _best(lambda: _plain_attention(q, k, v, q_lens, kv_lens, table, causal), repeat)
    t_sim, o = _best(lambda: flash_attention_infer(q, k, v, **kw), repeat)
    verdict = compare_data(o, expect.astype(np.float32), kv_len)
    return _report(title, t_sim, t_gold, t_plain, "Compare success." if verdict.passed else "Compare failed.")


def bench_mla(title, batch, kv_len, heads, cores, repeat):
    rng = np.random.default_rng(0)
    q_lens, kv_lens = [1] * batch, [kv_len] * batch
    q = rng.uniform(-1, 1, (batch, heads, 512)).astype(np.float16)
    q_rope = rng.uniform(-1, 1, (batch, heads, 64)).astype(np.float16)
    k, k_rope, table = _paged(rng, batch, kv_len, 1, 512)
    k_rope = k_rope[..., :64].copy()
    run = lambda: mla(q, q_rope, k, k_rope, table, actual_seq_lengths=q_lens, actual_seq_lengths_kv=kv_lens,  # noqa
                      core_num=cores)
    mla(q[:1], q_rope[:1], k, k_rope, table[:1, :1], actual_seq_lengths=[1], actual_seq_lengths_kv=[128], core_num=cores)
    t_gold, (high, low) = _best(lambda: G.mla(q, q_rope, k, k_rope, table, q_lens, kv_lens), repeat)
    qq = np.concatenate([q, q_rope], axis=-1)
    kk = np.concatenate([k, k_rope], axis=-1)
    vv = np.concatenate([k, np.zeros_like(k_rope)], axis=-1)
    t_plain, _ = _best(lambda: _plain_attention(qq, kk, vv, q_lens, kv_lens, table, False), repeat)
    t_sim, o = _best(run, repeat)
    verdict = error_metrics(o, high, low, mare_threshold=10.0, mere_threshold=2.0, rmse_threshold=2.0)
    return _report(title, t_sim, t_gold, t_plain, "Compare success." if verdict.passed else "Compare failed.")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--cores", type=int, default=24)
    parser.add_argument("--only", choices=("decode", "prefill", "mla"), default=None)
    ns = parser.parse_args(argv)
    c, r = ns.cores, ns.repeat
    if ns.only in (None, "decode"):
        bench_fa(f"FA decode: batch 8, 32 / 32 heads, head dim 128, KV 4096, paged fp16, {c} cores",
                 [1] * 8, 4096, 32, 32, 128, False, c, r)
    if ns.only in (None, "prefill"):
        bench_fa(f"FA prefill: batch 1, 2048 tokens, 32 heads, head dim 128, causal, paged fp16, {c} cores",
                 [2048], 2048, 32, 32, 128, True, c, r)
    if ns.only in (None, "mla"):
        bench_mla(f"MLA decode: batch 8, 32 heads, KV 4096, paged fp16, {c} cores", 8, 4096, 32, c, r)


if __name__ == "__main__":
    main()
