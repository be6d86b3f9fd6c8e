"""Tests of catlass_py.data: glibc rand() replica, FillRandomData, GenerateGroupList, example 10 inputs."""

from __future__ import annotations

import ctypes
import ctypes.util

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from catlass_py.data import (
    RAND_MAX,
    GlibcRand,
    example10_inputs,
    fill_random,
    generate_group_list,
    host_cast,
)
from catlass_py.errors import ArgumentError

SEED1_FIRST8 = [1804289383, 846930886, 1681692777, 1714636915, 1957747793, 424238335, 719885386, 1649760492]


def ref_rand(seed: int, count: int) -> list[int]:
    """glibc TYPE_3 rand() written straight from its textbook definition (seeds 0 .. 2^31-2)."""
    r = [seed or 1]
    for i in range(1, 31):
        r.append(16807 * r[i - 1] % 2147483647)
    for i in range(31, 34):
        r.append(r[i - 31])
    for i in range(34, 344 + count):
        r.append((r[i - 31] + r[i - 3]) & 0xFFFFFFFF)
    return [r[k + 344] >> 1 for k in range(count)]


def _glibc():
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
        libc.gnu_get_libc_version  # noqa: B018 - only glibc has it
    except (OSError, AttributeError):
        return None
    libc.srand.argtypes = [ctypes.c_uint]
    libc.rand.restype = ctypes.c_int
    return libc


# ---------------------------------------------------------------------------------------------------
# GlibcRand
# ---------------------------------------------------------------------------------------------------


def test_seed1_check_values():
    g = GlibcRand()
    assert [g.rand() for _ in range(8)] == SEED1_FIRST8
    assert GlibcRand(1).rand_array(8).tolist() == SEED1_FIRST8
    assert ref_rand(1, 8) == SEED1_FIRST8
    assert RAND_MAX == 2147483647 == GlibcRand.RAND_MAX


def test_srand0_equals_srand1():
    a, b = GlibcRand(0), GlibcRand(1)
    assert a.rand_array(1000).tolist() == b.rand_array(1000).tolist()
    g = GlibcRand(5)
    g.rand()
    g.srand(0)
    assert g.drawn == 0
    assert [g.rand() for _ in range(8)] == SEED1_FIRST8


@pytest.mark.parametrize("seed", [1, 2, 42, 123456789, 2147483646])
def test_scalar_matches_textbook_definition(seed):
    g = GlibcRand(seed)
    assert [g.rand() for _ in range(500)] == ref_rand(seed, 500)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 30, 31, 32, 33, 34, 62, 1023, 1024, 1025, 1026, 2047, 4096, 4097, 9001])
def test_rand_array_equals_scalar_stream(n):
    ref = ref_rand(7, n + 50)
    g = GlibcRand(7)
    head = [g.rand() for _ in range(17)]  # start the array mid-stream
    arr = g.rand_array(n)
    assert arr.dtype == np.int64 and arr.shape == (n,)
    assert head + arr.tolist() == ref[:17 + n]
    tail = [g.rand() for _ in range(33)]  # the state after the array is right
    assert tail == ref[17 + n:17 + n + 33]
    assert g.drawn == n + 50


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 2), st.lists(st.integers(0, 3000), min_size=1, max_size=6))
def test_rand_array_any_split(seed, lengths):
    ref = ref_rand(seed, sum(lengths))
    g = GlibcRand(seed)
    got = np.concatenate([g.rand_array(n) for n in lengths]).tolist()
    assert got == ref


@pytest.mark.parametrize("chunk", [1, 31, 100, 1000, 1500])
def test_chunk_boundaries(chunk):
    n = 5000
    ref = ref_rand(3, n)
    got = np.concatenate(list(GlibcRand(3)._chunks(n, chunk=chunk))).tolist()
    assert got == ref


def test_large_multilane_draw_matches_small_draws():
    n = 300_000  # lanes of 1024, jump-ahead over many lanes, partial last lane
    big = GlibcRand(11).rand_array(n)
    g = GlibcRand(11)
    small = np.concatenate([g.rand_array(1000) for _ in range(n // 1000)])
    assert np.array_equal(big, small)


def test_skip_is_jump_ahead():
    ref = ref_rand(1, 20_000)
    for n in (0, 1, 31, 344, 12_345):
        g = GlibcRand()
        g.skip(n)
        assert g.drawn == n
        assert g.rand_array(100).tolist() == ref[n:n + 100]
    g = GlibcRand()
    big = g.rand_array(1 << 20)
    h = GlibcRand()
    h.skip((1 << 20) - 5)
    assert h.rand_array(5).tolist() == big[-5:].tolist()
    assert g.rand() == h.rand()


def test_draw_across_internal_chunks_matches_jump_ahead():
    n = (1 << 23) + 5  # two internal chunks, lanes of 4096
    big = GlibcRand(5).rand_array(n)
    for pos in (0, 4095, 4096, 4097, (1 << 22) + 1, (1 << 23) - 1, 1 << 23, n - 1):
        g = GlibcRand(5)
        g.skip(pos)
        assert g.rand() == big[pos], pos


def test_copy_and_state_are_independent():
    g = GlibcRand(9)
    g.rand_array(77)
    c = g.copy()
    assert c.state() == g.state() and len(g.state()) == 31
    assert c.rand_array(10).tolist() == g.rand_array(10).tolist()


def test_against_system_glibc():
    libc = _glibc()
    if libc is None:
        pytest.skip("not a glibc system")
    for seed in (1, 0, 42, 2**31 - 1, 2**31 + 5, 2**32 - 1):
        libc.srand(seed)
        ref = [libc.rand() for _ in range(3000)]
        g = GlibcRand(seed)
        assert g.rand_array(3000).tolist() == ref, seed


def test_seed_wraps_like_unsigned_int():
    assert GlibcRand(-1).rand_array(5).tolist() == GlibcRand(2**32 - 1).rand_array(5).tolist()
    assert GlibcRand(2**32 + 3).rand_array(5).tolist() == GlibcRand(3).rand_array(5).tolist()


@pytest.mark.parametrize("bad", [1.5, "1", None, True])
def test_bad_seed(bad):
    with pytest.raises(ArgumentError, match="seed"):
        GlibcRand(bad)


def test_bad_counts():
    g = GlibcRand()
    with pytest.raises(ArgumentError, match="n:"):
        g.rand_array(-1)
    with pytest.raises(ArgumentError, match="n:"):
        g.skip(-3)
    with pytest.raises(ArgumentError, match="n:"):
        g.rand_array(2.0)


# ---------------------------------------------------------------------------------------------------
# fill_random / host_cast
# ---------------------------------------------------------------------------------------------------


def test_fill_int8_formula_and_inclusive_range():
    n = 20_000
    vals = fill_random(GlibcRand(), n, -2, 2, "int8")
    assert vals.dtype == np.int8
    ref = np.array(ref_rand(1, n))
    assert np.array_equal(vals, -2 + ref % 5)
    assert set(np.unique(vals).tolist()) == {-2, -1, 0, 1, 2}
    v = fill_random(GlibcRand(), 50_000, -16, 16, np.int8)
    assert v.min() == -16 and v.max() == 16
    assert np.all(fill_random(GlibcRand(), 100, 3, 3, "int8") == 3)
    full = fill_random(GlibcRand(), 100_000, -128, 127, "int8")
    assert full.min() == -128 and full.max() == 127


def test_fill_other_integer_dtypes():
    ref = np.array(ref_rand(1, 1000))
    v = fill_random(GlibcRand(), 1000, -1000, 1000, "int32")
    assert v.dtype == np.int32 and np.array_equal(v, -1000 + ref % 2001)
    u = fill_random(GlibcRand(), 1000, 0, 255, np.uint8)
    assert u.dtype == np.uint8 and np.array_equal(u, ref % 256)


def test_fill_advances_stream_by_n():
    g = GlibcRand()
    fill_random(g, 1234, -16, 16, "int8")
    fill_random(g, 10, 0.0, 1.0, "bf16")
    assert g.drawn == 1244
    assert g.rand() == ref_rand(1, 1245)[-1]


def test_fill_double_bf16_known_value():
    # first draw 1804289383 / RAND_MAX = 0.8401877171547095 -> float 0.84018773 -> bf16 215/256 = 0.83984375
    v = fill_random(GlibcRand(), 1, 0.0, 1.0, "bfloat16")
    assert v.dtype == ml_dtypes.bfloat16
    assert v.view(np.uint16)[0] == 0x3F57
    assert float(v[0]) == 0.83984375


def test_fill_double_matches_scalar_formula():
    n = 3000
    ref = ref_rand(1, n)
    for dtype, np_t in (("float32", np.float32), ("float16", np.float16), ("bf16", ml_dtypes.bfloat16)):
        got = fill_random(GlibcRand(), n, -5.0, 5.0, dtype)
        assert got.dtype == np.dtype(np_t)
        exp = [-5.0 + (r / float(RAND_MAX)) * (5.0 - -5.0) for r in ref]
        if dtype == "bf16":
            exp = np.array(exp).astype(np.float32).astype(np_t)
        else:
            exp = np.array(exp).astype(np_t)
        assert np.array_equal(got.view(np.uint8), exp.view(np.uint8)), dtype
        assert float(np.min(got.astype(np.float64))) >= -5.0 and float(np.max(got.astype(np.float64))) <= 5.0


def test_fill_float_compute_like_cpp_float_literals():
    # FillRandomData<fp16_t>(hostA, -5.0f, 5.0f): every operation in float
    n = 2000
    ref = ref_rand(1, n)
    got = fill_random(GlibcRand(), n, np.float32(-5.0), np.float32(5.0), "float16")
    f = np.float32
    exp = np.array([f(-5.0) + (f(r) / f(RAND_MAX)) * (f(5.0) - f(-5.0)) for r in ref], dtype=np.float32)
    assert np.array_equal(got, exp.astype(np.float16))
    same = fill_random(GlibcRand(), n, -5.0, 5.0, "float16", compute="float")
    assert np.array_equal(same, got)


def test_fill_int_bounds_float_dtype_is_degenerate_like_cpp():
    # FillRandomData<fp16_t>(hostA, -5, 5): (rand() / RAND_MAX) is integer division -> low unless rand()==RAND_MAX
    got = fill_random(GlibcRand(), 5000, -5, 5, "float16")
    assert np.all(got == -5)


def test_fill_float_to_int_truncates():
    ref = np.array(ref_rand(1, 500), dtype=np.float64)
    got = fill_random(GlibcRand(), 500, -10.0, 10.0, "int8")
    assert np.array_equal(got, np.trunc(-10.0 + (ref / RAND_MAX) * 20.0).astype(np.int8))


def test_host_cast_bf16_rounds_through_float():
    # 1 + 2^-8 + 2^-30: direct double->bf16 RNE gives 1 + 2^-7 (0x3F81); CANN's op::bfloat16 converts to
    # float first (1 + 2^-8, a tie) and then rounds to even: 1.0 (0x3F80)
    x = np.array([1 + 2**-8 + 2**-30])
    assert host_cast(x, "bf16").view(np.uint16)[0] == 0x3F80
    assert host_cast(np.array([1 + 2**-8 + 2**-22], dtype=np.float32), "bf16").view(np.uint16)[0] == 0x3F81
    assert host_cast(np.array([1 + 2**-8], dtype=np.float32), "bf16").view(np.uint16)[0] == 0x3F80
    assert host_cast(np.array([1 + 3 * 2**-8], dtype=np.float32), "bf16").view(np.uint16)[0] == 0x3F82


def test_host_cast_fp16_rounds_once():
    # op::fp16_t converts a double directly: 1 + 2^-11 + 2^-40 -> 1 + 2^-10 (a float detour would tie to 1.0)
    x = np.array([1 + 2**-11 + 2**-40])
    assert host_cast(x, "fp16").view(np.uint16)[0] == 0x3C01
    assert host_cast(np.array([2.5, -2.5, 127.9]), "int8").tolist() == [2, -2, 127]


@pytest.mark.parametrize("dtype", ["int4", "float64", np.float64, "foo", "e4m3", "hif8"])
def test_fill_unknown_dtype(dtype):
    with pytest.raises(ArgumentError, match="dtype"):
        fill_random(GlibcRand(), 4, 0, 1, dtype)


def test_fill_argument_errors():
    g = GlibcRand()
    with pytest.raises(ArgumentError, match="n:"):
        fill_random(g, -1, 0, 1, "int8")
    with pytest.raises(ArgumentError, match="high"):
        fill_random(g, 4, 5, 1, "int8")
    with pytest.raises(ArgumentError, match="high"):
        fill_random(g, 4, 1.0, 0.5, "bf16")
    with pytest.raises(ArgumentError, match="low/high"):
        fill_random(g, 4, -200, 0, "int8")
    with pytest.raises(ArgumentError, match="low/high"):
        fill_random(g, 4, 0, 1.0, "bf16")
    with pytest.raises(ArgumentError, match="low"):
        fill_random(g, 4, float("nan"), 1.0, "bf16")
    with pytest.raises(ArgumentError, match="low"):
        fill_random(g, 4, True, 1, "int8")
    with pytest.raises(ArgumentError, match="compute"):
        fill_random(g, 4, 0, 1, "int8", compute="long double")
    with pytest.raises(ArgumentError, match="rng"):
        fill_random(np.random.default_rng(), 4, 0, 1, "int8")
    with pytest.raises(ArgumentError, match="high"):
        fill_random(g, 4, -(2**31), 2**31 - 1, "int32")
    assert g.drawn == 0  # nothing was drawn by rejected calls


# ---------------------------------------------------------------------------------------------------
# GenerateGroupList
# ---------------------------------------------------------------------------------------------------


def test_group_list_check_values():
    g8 = generate_group_list(512, 8)
    assert g8.dtype == np.int64
    assert g8.tolist() == [79, 154, 160, 181, 201, 205, 257, 288]
    g128 = generate_group_list(512, 128)
    assert g128[:8].tolist() == [2, 16, 20, 22, 23, 33, 37, 41]
    assert g128[-4:].tolist() == [496, 504, 504, 507]
    assert g128.tolist() == sorted(v % 513 for v in ref_rand(1, 128))
    # README facts (reference 8.5): 15 empty groups, 24 one-row groups, max 15 rows
    sizes = np.diff(g128, prepend=0)
    assert (sizes == 0).sum() == 15 and (sizes == 1).sum() == 24 and sizes.max() == 15


def test_group_list_segmented():
    pref = generate_group_list(512, 8)
    seg = generate_group_list(512, 8, segmented=True)
    assert seg.tolist() == [79, 75, 6, 21, 20, 4, 52, 31]
    assert np.array_equal(np.cumsum(seg), pref)
    assert generate_group_list(10, 1, segmented=True).tolist() == generate_group_list(10, 1).tolist()


def test_group_list_reseeds_given_stream():
    g = GlibcRand()
    g.rand_array(1000)
    gl = generate_group_list(100, 5, rng=g)
    assert gl.tolist() == sorted(v % 101 for v in SEED1_FIRST8[:5])
    assert g.drawn == 5
    assert g.rand() == SEED1_FIRST8[5]


def test_group_list_edge_cases():
    assert generate_group_list(0, 4).tolist() == [0, 0, 0, 0]
    assert generate_group_list(7, 0).tolist() == []
    with pytest.raises(ArgumentError, match="m"):
        generate_group_list(-1, 3)
    with pytest.raises(ArgumentError, match="group_count"):
        generate_group_list(5, -3)
    with pytest.raises(ArgumentError, match="rng"):
        generate_group_list(5, 3, rng=42)


# ---------------------------------------------------------------------------------------------------
# Example 10 inputs
# ---------------------------------------------------------------------------------------------------


def test_example10_inputs_order_and_shapes():
    G, m, n, k = 6, 40, 24, 32
    x = example10_inputs(G, m, n, k)
    assert x.a.shape == (m, k) and x.a.dtype == np.int8
    assert x.b.shape == (G, k, n) and x.b.dtype == np.int8
    assert x.scale.shape == (G, n) and x.scale.dtype == ml_dtypes.bfloat16
    assert x.per_token_scale.shape == (m,) and x.per_token_scale.dtype == ml_dtypes.bfloat16
    assert x.group_list.shape == (G,) and x.group_list.dtype == np.int64
    assert x.a.ravel()[:8].tolist() == [12, -6, -10, -3, 7, -12, 6, -10]

    r = ref_rand(1, m * k + G * k * n + G * n + m)
    ints = -16 + np.array(r[: m * k + G * k * n]) % 33
    assert np.array_equal(x.a.ravel(), ints[: m * k])
    assert np.array_equal(x.b.ravel(), ints[m * k:])
    dbl = np.array(r[m * k + G * k * n:], dtype=np.float64) / RAND_MAX
    bf = dbl.astype(np.float32).astype(ml_dtypes.bfloat16)
    assert np.array_equal(x.scale.ravel().view(np.uint16), bf[: G * n].view(np.uint16))
    assert np.array_equal(x.per_token_scale.view(np.uint16), bf[G * n:].view(np.uint16))
    assert np.array_equal(x.group_list, generate_group_list(m, G))
    assert set(x.as_dict()) == {"a", "b", "scale", "per_token_scale", "group_list"}


def test_example10_inputs_errors():
    with pytest.raises(ArgumentError, match="group_count"):
        example10_inputs(0, 4, 4, 4)
    with pytest.raises(ArgumentError, match="k"):
        example10_inputs(2, 4, 4, -4)
