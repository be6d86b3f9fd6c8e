"""Soak test: 200 random small launches of every shipped example in one process (slow).

Each launch draws a small shape, a core count and an interleaving seed at random; every run must pass its
example's own golden compare, a rerun of the same shape under another seed must give the same output digest,
and the process must hold up: the resident set size stays flat after a warm-up (the launch releases what it
allocated) and no thread is left behind.
"""

from __future__ import annotations

import os
import re
import threading

import numpy as np
import pytest

from catlass_py.cli import example_names, load_script

pytestmark = pytest.mark.slow

LAUNCHES = 200
WARM_UP = 40

#: examples whose positional arguments are not CATLASS's ``m n k`` family: shapes drawn from these lists
FIXED = {
    "19_mla": [["2", "1,2", "200,300", "8", "8", "128"], ["1", "1", "300", "16", "3", "128"],
               ["1", "2", "130", "8", "4", "128", "--dtype", "bf16"]],
    "23_flash_attention_infer": [["1", "20", "130", "2", "1", "32", "0", "1"], ["2", "20", "300", "4", "2", "64", "1", "1"],
                                 ["2", "130", "200", "2", "2", "64", "1", "0"]],
    "transpose_quant_batch_matmul": [["8", "128", "64", "3"], ["20", "64", "300", "2", "e5m2", "fp16", "021"],
                                     ["16", "64", "128", "1", "e4m3", "bf16", "012"]],
}

#: extents an example requires to be multiples (example 21: B's zN buffer holds exactly k * n values; example 41, below)
MULTIPLES = {"21_basic_matmul_preload_zN": {"n": 16, "k": 16},
             # 41: sparse k in whole index bytes; m, n whole fractals (the last block is stored in whole fractals)
             "41_sparse_matmul_tla": {"m": 16, "n": 16, "k": 8}}

#: examples that need more than one AI core (52's epilogue steps by half the AI cores: 0 on one core, a hang)
MIN_CORES = {"52_quant_multi_core_splitk_matmul_tla": 2}


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _draw(rng: np.random.Generator, name: str) -> list[str]:
    """Random small positional arguments of example ``name`` (from its USAGE's words)."""
    if name in FIXED:
        choices = FIXED[name]
        return list(choices[rng.integers(len(choices))])
    words = re.sub(r"\[[^\]]*\]", " ", load_script(name).USAGE).split()  # the optional [groups] dropped whole
    counts = {"problem_count": (1, 5), "batch_count": (1, 3)}
    step = MULTIPLES.get(name, {})
    values = [int(rng.integers(*counts.get(w, (1, 300)))) for w in words]
    return [str(-(-v // step.get(w, 1)) * step.get(w, 1)) for v, w in zip(values, words)]


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads the resident set size from /proc")
def test_random_small_launches_hold_up():
    rng = np.random.default_rng(2026)
    names = example_names()
    threads = threading.active_count()
    digests: dict[tuple, str] = {}
    rss_after_warm_up = None
    for i in range(LAUNCHES):
        name = names[i % len(names)]
        args = _draw(rng, name)
        cores = max(int(rng.integers(1, 5)), MIN_CORES.get(name, 1))
        seed = int(rng.integers(0, 1 << 16))
        result = load_script(name).run(args, cores=cores, seed=seed)
        assert result.passed, (name, args, cores, seed)
        key = (name, tuple(args), cores)
        if key in digests:
            assert result.output_digest == digests[key], (name, args, cores, seed)
        digests[key] = result.output_digest
        # the same shape again under another interleaving seed: the same output
        if i % 10 == 0:
            again = load_script(name).run(args, cores=cores, seed=seed + 1)
            assert again.output_digest == result.output_digest, (name, args, cores, seed)
        assert threading.active_count() == threads, f"threads left behind after {name} {args}"
        if i == WARM_UP - 1:
            rss_after_warm_up = _rss()
    growth = _rss() - rss_after_warm_up
    assert growth < max(64 << 20, rss_after_warm_up // 10), (
        f"resident set grew by {growth / 2**20:.1f} MiB over {LAUNCHES - WARM_UP} launches "
        f"(from {rss_after_warm_up / 2**20:.1f} MiB)")
