"""Runners and a per-runner mutant check for the attention kernels (used by test_kernels_attention_mutants.py).

A runner launches one kernel on a fixed small problem with the given LaunchParams and checks the output
against the example's golden with the example's tolerance rule (a wrong output is not a detection: only the
race / deadlock / flag checks count). :func:`check_mutants` runs each mutant only on the runners that execute
every site it edits (the others cannot see it), cheapest first.

Run as a script to print the undetected mutants: ``python tests/kernels/attention_mutants.py fa|mla``.
"""

from __future__ import annotations

import dataclasses
import linecache
import os
import sys
from functools import lru_cache

import numpy as np

from catlass_py import golden_attention as G
from catlass_py.analysis.mutants import MutantResult, automatic_equivalence, catalogue, check
from catlass_py.arch import LaunchParams
from catlass_py.numerics.compare import compare_data, error_metrics

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# -- flash attention inference (example 23) ------------------------------------------------------------------


def fa_runner(q_lens, kv_lens, heads, kv_heads, d, causal, *, cores=1, unit_flag=False, seed=0):
    from catlass_py.ops.flash_attention_infer import build_kernel, launch_flash_attention, validate_inputs

    rng = np.random.default_rng(seed)
    batch, blocks = len(q_lens), -(-max(kv_lens) // 128)
    q = rng.uniform(-1, 1, (sum(q_lens), heads, d)).astype(np.float16)
    k = rng.uniform(-1, 1, (batch * blocks, 128, kv_heads, d)).astype(np.float16)
    v = rng.uniform(-1, 1, (batch * blocks, 128, kv_heads, d)).astype(np.float16)
    table = rng.permutation(batch * blocks).reshape(batch, blocks).astype(np.int32)
    golden = G.flash_attention_infer(q, k, v, q_lens, kv_lens, table, causal=causal).astype(np.float32)
    problem = validate_inputs(q, k, v, actual_seq_lengths=q_lens, actual_seq_lengths_kv=kv_lens, block_table=table,
                              mask="causal" if causal else None)
    kernel = build_kernel(enable_unit_flag=unit_flag)

    def run(options):
        o, result = launch_flash_attention(kernel, problem, q, k, v, core_num=cores, options=options)
        verdict = compare_data(o, golden, max(kv_lens))
        assert verdict.passed, str(verdict)
        return result

    run.label = f"fa q={q_lens} kv={kv_lens} heads={heads}/{kv_heads} d={d} causal={causal} cores={cores}" + (
        " unit_flag" if unit_flag else "")
    return run


#: The FA runners: together they execute every synchronisation site of FAInferKernel and its blocks (one or
#: two cores per AI core's task sequence, several tasks per core, odd and even KV block counts, masked and
#: unmasked stacks, the tail blocks of a head dimension below 128, the unit-flag variant, masked tails in either
#: P stage right after a normal stack that read the same L1 bytes).
FA_RUNNERS = (
    ("decode", dict(q_lens=[1, 2], kv_lens=[384, 300], heads=2, kv_heads=2, d=64, causal=False)),
    ("causal", dict(q_lens=[20], kv_lens=[1100], heads=4, kv_heads=1, d=48, causal=True)),
    ("short causal", dict(q_lens=[1], kv_lens=[130], heads=1, kv_heads=1, d=32, causal=True)),
    ("tasks", dict(q_lens=[3, 2], kv_lens=[300, 650], heads=4, kv_heads=4, d=32, causal=False)),
    ("causal tasks", dict(q_lens=[130, 5], kv_lens=[260, 700], heads=2, kv_heads=2, d=32, causal=True)),
    ("one-block tasks", dict(q_lens=[1, 1, 1], kv_lens=[100, 64, 128], heads=2, kv_heads=2, d=32, causal=False)),
    ("64-column stack", dict(q_lens=[3], kv_lens=[576], heads=2, kv_heads=1, d=32, causal=False)),
    ("one-stack causal tasks", dict(q_lens=[20, 16], kv_lens=[20, 100], heads=2, kv_heads=2, d=32, causal=True)),
    ("GQA causal", dict(q_lens=[60, 60], kv_lens=[700, 190], heads=2, kv_heads=1, d=64, causal=True)),
    ("unit flag", dict(q_lens=[2, 3], kv_lens=[300, 520], heads=2, kv_heads=2, d=32, causal=True, unit_flag=True)),
    # 64-row tasks whose masked tail starts at an even (kv 364) or odd (kv 236) KV block, so the tail PV loads its P
    # into L1 stage 1 after waiting MTE1_MTE2[5] alone (stage 0, [4]), each tail followed by the next task's normal
    # PV. With kv 364 the normal stack before the tail has three blocks, and its last L0A copy (block 2 of a 64-row
    # stack starts where stage 1 does) reads the bytes the tail then loads: dropping the normal PV's id-5 pair is
    # a race here only
    ("tails after long stacks", dict(q_lens=[64, 64, 64], kv_lens=[364, 236, 364], heads=1, kv_heads=1, d=32,
                                     causal=True)),
)


# -- multi-head latent attention (example 19) ------------------------------------------------------------------


def mla_runner(q_lens, kv_lens, heads, *, cores=1, seed=0):
    from catlass_py.ops.mla import build_kernel, launch_mla, validate_inputs

    rng = np.random.default_rng(seed)
    batch, blocks = len(q_lens), -(-max(kv_lens) // 128)
    q = rng.uniform(-1, 1, (sum(q_lens), heads, 512)).astype(np.float16)
    q_rope = rng.uniform(-1, 1, (sum(q_lens), heads, 64)).astype(np.float16)
    k = rng.uniform(-1, 1, (batch * blocks, 128, 1, 512)).astype(np.float16)
    k_rope = rng.uniform(-1, 1, (batch * blocks, 128, 1, 64)).astype(np.float16)
    table = rng.permutation(batch * blocks).reshape(batch, blocks).astype(np.int32)
    golden, low = G.mla(q, q_rope, k, k_rope, table, q_lens, kv_lens)
    problem = validate_inputs(q, q_rope, k, k_rope, table, q_lens, kv_lens)
    kernel = build_kernel()

    def run(options):
        o, result, _ = launch_mla(kernel, problem, q, q_rope, k, k_rope, core_num=cores, options=options)
        verdict = error_metrics(o, golden, low, mare_threshold=10.0, mere_threshold=2.0, rmse_threshold=2.0)
        assert verdict.passed, str(verdict)
        return result

    run.label = f"mla q={q_lens} kv={kv_lens} heads={heads} cores={cores}"
    return run


#: The MLA runners: several tasks per core, KV lengths with partial blocks, multi-token queries, tasks of a single
#: KV block, and a KV split over three cores (flash decoding).
MLA_RUNNERS = (
    ("decode", dict(q_lens=[1, 2], kv_lens=[300, 130], heads=8)),
    # tasks of one KV block (at most 64 tokens for the second): the rescale's first block is also its last, so the
    # running sum it copies from the softmax's row sum is read back at once (the barrier after that copy)
    ("one-block tasks", dict(q_lens=[1, 2], kv_lens=[100, 60], heads=8)),
    ("tasks", dict(q_lens=[1, 1, 3], kv_lens=[200, 700, 129], heads=20, cores=2)),
    # KV split over 3 cores (the combine's double buffer wraps), 7 head groups of 12 over 6 vector cores (two
    # combines on the first)
    ("flash decoding", dict(q_lens=[1], kv_lens=[1600], heads=84, cores=3)),
    # KV split over 4 cores (the combine's ring of two buffers turns twice)
    ("flash decoding x4", dict(q_lens=[1], kv_lens=[2100], heads=8, cores=4)),
)


@lru_cache(maxsize=None)
def runners(kind: str):
    make, table = (fa_runner, FA_RUNNERS) if kind == "fa" else (mla_runner, MLA_RUNNERS)
    return tuple(make(**kw) for _, kw in table)


# -- sites, mutants, checks ------------------------------------------------------------------------------------


def record(runs):
    """Per runner: the sites it executes ({site: record})."""
    options = LaunchParams(record_sync_sites=True, detect_races=True)
    return [{rec.site: rec for rec in run(options).sync_sites or []} for run in runs]


def merged_sites(per_runner):
    from catlass_py.analysis.mutants import record_sites

    # merge exactly as record_sites does, without running again
    class _Result:
        def __init__(self, recs):
            self.sync_sites = list(recs.values())

    return record_sites([lambda options, r=r: _Result(r) for r in per_runner])


def check_mutants(runs, per_runner, mutants) -> list[MutantResult]:
    """Each mutant on the runners that execute all its sites (in the given order) until one reports it."""
    out = []
    for mut in mutants:
        sites = {e.site for e in mut.edits}
        relevant = [run for run, recs in zip(runs, per_runner) if sites <= recs.keys()]
        res = check(relevant, [mut])[0] if relevant else MutantResult(mut, None, None, "no runner executes it")
        out.append(res)
    return out


def source_line(site) -> str:
    path = site.file if os.path.isabs(site.file) else os.path.join(ROOT, site.file)
    return linecache.getline(path, site.line).strip()


def site_names(sites) -> dict:
    """A line-number-free name per site: file, function and the source text of the call, with ``#k`` for the
    k-th (k >= 2) call of the same text in the same function."""
    names, seen = {}, {}
    for rec in sorted(sites, key=lambda r: r.site):
        key = f"{os.path.basename(rec.site.file)}:{rec.function}: {source_line(rec.site)}"
        seen[key] = seen.get(key, 0) + 1
        names[rec.site] = key if seen[key] == 1 else f"{key} #{seen[key]}"
    return names


def describe(mut, names) -> str:
    """A mutant by its edits and the site names of :func:`site_names`."""
    parts = []
    for e in mut.edits:
        extra = f" {e.ids[0]}<->{e.ids[1]}" if e.action == "swap_ids" else ""
        parts.append(f"{e.action}{extra} {names.get(e.site, str(e.site))}")
    return " + ".join(parts)


def main(kind: str) -> None:
    import time

    runs = runners(kind)
    t0 = time.time()
    per_runner = record(runs)
    sites = merged_sites(per_runner)
    functions = site_names(sites)
    muts = catalogue(sites)
    print(f"{len(sites)} sites, {len(muts)} mutants ({time.time() - t0:.1f} s)", flush=True)
    only = sys.argv[2] if len(sys.argv) > 2 else None
    if only and os.path.exists(only):  # a previous run's output: re-check its undetected mutants
        keep = {line.split(" | ")[0][len("UNDETECTED "):] for line in open(only) if line.startswith("UNDETECTED")}
        muts = [m for m in muts if str(m) in keep]
    elif only:
        muts = [m for m in muts if only in describe(m, functions) or only in str(m)]
    res = check_mutants(runs, per_runner, muts)
    records = {r.site: r for r in sites}
    und = [r for r in res if not r.detected and not automatic_equivalence(r.mutation, records)]
    print(f"checked {len(res)} in {time.time() - t0:.0f} s; {len(und)} undetected and not automatically equivalent")
    for r in und:
        print("UNDETECTED", str(r.mutation), "|", describe(r.mutation, functions), "|", r.message)


if __name__ == "__main__":
    main(sys.argv[1])
