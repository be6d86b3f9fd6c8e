"""The mix-kernel examples (03, 07, 09, 11, 12, 27, 28, 34, 37) at the shapes of their CATLASS READMEs on all
24 AI cores (slow), race-checked, plus the tall-matrix (``VnchwND2NZ``) branch of the NZ padding of example 34."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from catlass_py import golden
from catlass_py.arch.params import LaunchParams
from catlass_py.ops.single_core_splitk_matmul import single_core_splitk_matmul

README = [
    ("03_matmul_add", ["256", "512", "1024"]),
    ("07_grouped_matmul_slice_m_per_token_dequant_moe", ["128", "512", "1024", "2048"]),
    ("09_splitk_matmul", ["256", "512", "1024"]),
    ("11_grouped_matmul_slice_k_per_token_dequant", ["128", "512", "1024", "2048"]),
    ("12_quant_matmul", ["256", "512", "1024"]),
    ("27_matmul_gelu", ["256", "512", "1024"]),
    ("28_matmul_silu", ["256", "512", "1024"]),
    ("34_single_core_splitk_matmul", ["256", "512", "1024"]),
    ("37_streamk_matmul", ["256", "512", "1024"]),
]


@pytest.mark.slow
@pytest.mark.parametrize("name,argv", README)
def test_readme_shapes(name, argv):
    ex = importlib.import_module(f"catlass_py.examples.{name}")
    res = ex.run(argv, options=LaunchParams(detect_races=True))
    assert res.passed, res.verdict
    assert res.cores == 24 and res.output_digest


@pytest.mark.slow
def test_nz_padding_of_a_tall_unaligned_matrix():
    # 1500 rows of 100 fp16 (not a multiple of C0 = 16, dense rows): CATLASS takes its VnchwND2NZ branch.
    rng = np.random.default_rng(3)
    a = rng.uniform(-1, 1, (1500, 100)).astype(np.float16)
    b = rng.uniform(-1, 1, (100, 40)).astype(np.float16)
    c = single_core_splitk_matmul(a, b, core_num=4)
    assert golden.compare_data(c, golden.matmul(a, b), 100).passed
