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


def ref_glibc(seed: int, count: int) -> list[int]:
    """glibc rand() after srand(seed), written straight from glibc's stdlib/random_r.c for any unsigned seed:
    __srandom_r's Schrage steps on an int32_t word (negative for seeds >= 2^31, / and % truncating toward
    zero), r[31..33] = r[0..2], 310 discarded outputs, then r[i] = r[i-31] + r[i-3] (mod 2^32) >> 1."""
    seed &= 0xFFFFFFFF
    seed = seed or 1
    r = [seed]
    word = seed - (1 << 32) if seed >= 1 << 31 else seed
    for _ in range(1, 31):
        hi = int(word / 127773)  # C truncation
        lo = word - hi * 127773
        word = 16807 * lo - 2836 * hi
        if word < 0:
            word += 2147483647
        r.append(word & 0xFFFFFFFF)
    r += r[:3]
    for i in range(34, 344 + count):
        r.append((r[i - 31] + r[i - 3]) & 0xFFFFFFFF)
    return [v >> 1 for v in r[344:]]


MANY_SEEDS = [0, 1, 2, 3, 42, 12345, 123456789, 2**31 - 2, 2**31 - 1, 2**31, 2**31 + 1, 2**31 + 5,
              3_000_000_000, 2**32 - 2, 2**32 - 1]


def test_ref_glibc_agrees_with_textbook_definition_below_2_31():
    for seed in (0, 1, 7, 2**31 - 2):
        assert ref_glibc(seed, 200) == ref_rand(seed, 200)


@pytest.mark.parametrize("seed", MANY_SEEDS)
def test_bulk_draws_match_scalar_reference_on_many_seeds(seed):
    ref = ref_glibc(seed, 9000)
    g = GlibcRand(seed)
    got = np.concatenate([g.rand_array(n) for n in (1, 1023, 1025, 33, 6000)])  # one lane and lanes
    assert got.tolist() == ref[:8082]
    assert [g.rand() for _ in range(5)] == ref[8082:8087]


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1025, 40_000))
def test_bulk_draw_any_seed_any_size(seed, n):
    ref = ref_glibc(seed, n + 3)
    g = GlibcRand(seed)
    assert g.rand_array(n).tolist() == ref[:n]
    assert [g.rand() for _ in range(3)] == ref[n:]


@pytest.fixture
def tiny_lanes(monkeypatch):
    """Lanes of 8 x 8-row passes and no single-lane shortcut: every lane, pass and word boundary of the
    bulk generator shows up in a few hundred values."""
    import catlass_py.data as D

    monkeypatch.setattr(D, "_LANES_MAX", 8)
    monkeypatch.setattr(D, "_ROWS", 8)
    monkeypatch.setattr(D, "_SINGLE_LANE_MAX", 0)
    return D


@pytest.mark.parametrize("swar", [True, False])
@pytest.mark.parametrize("n", [1, 7, 8, 9, 31, 63, 64, 65, 500, 511, 512, 513, 1000, 4099])
def test_lane_and_pass_boundaries(tiny_lanes, monkeypatch, n, swar):
    monkeypatch.setattr(tiny_lanes, "_SWAR", swar)
    ref = ref_glibc(77, n + 40)
    g = GlibcRand(77)
    assert g.rand_array(n).tolist() == ref[:n]
    assert g.rand_array(40).tolist() == ref[n:]
    assert g.drawn == n + 40


@pytest.mark.parametrize("swar", [True, False])
@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.float16, np.int32, np.float32, np.int64])
def test_draw_every_element_size(tiny_lanes, monkeypatch, dtype, swar):
    """Words of 8, 4, 2 and 1 elements (SWAR stages 3..0), and the plain transposing copy."""
    monkeypatch.setattr(tiny_lanes, "_SWAR", swar)
    n = 777
    ref = np.array(ref_glibc(5, n), dtype=np.int64)

    def mapper(u, out):
        np.copyto(out, (u % 1000).astype(out.dtype))

    got = GlibcRand(5)._draw(n, dtype, mapper)
    assert got.dtype == dtype and got.shape == (n,)
    assert np.array_equal(got, (ref % 1000).astype(dtype))


@pytest.mark.parametrize("g", [2, 4, 8])
def test_swar_transpose_is_a_block_transpose(g):
    from catlass_py.data import _swar_transpose

    rng = np.random.default_rng(g)
    rows, cols = 3, 5
    words = rng.integers(0, 2**63, (rows, g, cols), dtype=np.uint64)
    elems = words.view(f"<u{8 // g}").reshape(rows, g, cols, g)  # [r, i, c, l]
    expect = elems.transpose(0, 3, 2, 1).copy()  # word l, element i
    _swar_transpose(words, g, np.empty(words.size // 2, np.uint64))
    assert np.array_equal(words.view(f"<u{8 // g}").reshape(rows, g, cols, g), expect)


# sha256[:16] of (dtype, shape, bytes) of streams and fills made by the previous generator (lane-major
# draws with tiled transposes, before the SWAR version): the current one must give the same bits.
def _digest(a) -> str:
    import hashlib

    a = np.ascontiguousarray(a)
    return hashlib.sha256(f"{a.dtype.str}|{a.shape}|".encode() + a.view(np.uint8).tobytes()).hexdigest()[:16]


RAND_DIGESTS = {0: "d49ad6892f4b2b31", 1: "d49ad6892f4b2b31", 2: "14e8b3006b374ca8", 42: "6bedc4a24390de5c",
                2**31 - 1: "87f130f945e4e826", 2**31: "4ff125ba4d72055c", 2**31 + 5: "f18ec76a3d440f64",
                2**32 - 1: "6bc9ce3aa380f5ab"}
FILL_DIGESTS = [
    ((-16, 16, "int8"), "95df35c32b91d04b"), ((-128, 127, "int8"), "2172a76d3dc3de1c"),
    ((-1000, 1000, "int32"), "41eebd1d2a316120"), ((0, 255, "uint8"), "f8019c5c5309de35"),
    ((-300, 300, "int16"), "a84697591bad8e7d"), ((0.0, 1.0, "bfloat16"), "90345a91a792f17a"),
    ((-5.0, 5.0, "float16"), "34dc085c2f104395"), ((np.float32(-5.0), np.float32(5.0), "float16"), "1d8ac77aee12ccbb"),
    ((0.0, 1.0, "float32"), "4674cba0b215c490"), ((-5, 5, "float16"), "82e9ad37added19e"),
    ((-10.0, 10.0, "int8"), "fafed7b403e0c6f2"), ((np.float32(-2.5), np.float32(7.0), "bfloat16"), "0a4aaade9ec331b1"),
]
EX10_DIGESTS = {
    (8, 64, 96, 160): ["f737c6eb4a67b8c1", "f8ff82cdf7cd519d", "7ba6adb21aaa5b88", "b0f60e943068f326", "1c51f9d33cedb431"],
    (3, 40, 24, 32): ["6d79a0cc6652acd1", "f3891a726673b9ff", "63a781249c8ddf66", "d9c2630a9f386732", "a79f762c1b42c699"],
    (16, 100, 200, 300): ["51e15f174b4d0b23", "a9f1d283715035b6", "f00d394f6a45d884", "debe2d9abcbd3106",
                          "921e30f321c9f9b5"],
}


@pytest.mark.parametrize("seed", sorted(RAND_DIGESTS))
def test_streams_match_previous_generator(seed):
    assert _digest(GlibcRand(seed).rand_array(200_003)) == RAND_DIGESTS[seed]


@pytest.mark.parametrize("case", range(len(FILL_DIGESTS)))
def test_fills_match_previous_generator(case):
    (low, high, dtype), digest = FILL_DIGESTS[case]
    g = GlibcRand(7)
    g.rand_array(77)
    assert _digest(fill_random(g, 100_003, low, high, dtype)) == digest
    assert g.rand() == 199665581


def test_fill_fp16_t_and_example10_match_previous_generator():
    from catlass_py.data import fill_random_fp16_t

    assert _digest(fill_random_fp16_t(GlibcRand(), 50_001, -5.0, 5.0)) == "96ac0675fbc38429"
    for shape, digests in EX10_DIGESTS.items():
        assert [_digest(v) for v in example10_inputs(*shape).as_dict().values()] == digests, shape


@pytest.mark.slow
def test_example10_readme_shape_matches_previous_generator():
    x = example10_inputs(128, 512, 1024, 2048)
    assert [_digest(v) for v in x.as_dict().values()] == [
        "5aa48bf25dde0f2e", "9029775d8ca90716", "6d9c0b1775d81eb8", "29edf3f9cb6483a5", "2f3a2f0678d1cdbe"]
    g = GlibcRand(5)
    assert _digest(g.rand_array((1 << 23) + 12345)) == "ba642a05351eaa2b"
    assert g.rand() == 535793418


def test_large_multilane_draw_matches_small_draws():
    n = 300_000  # many lanes and passes, partial last lane
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


def test_large_draw_matches_jump_ahead():
    n = (1 << 23) + 5  # 2048 lanes, a partial last lane
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
    # Facts of the CATLASS example README: 15 empty groups, 24 one-row groups, max 15 rows
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


def test_fill_fp16_t_matches_its_formula_including_rare_small_draws():
    from catlass_py.data import fill_random_fp16_t

    n = 2_000_000
    r = GlibcRand(3).rand_array(n)
    with np.errstate(over="ignore"):
        x = r.astype(np.float64).astype(np.float16)
    q = np.where(np.isinf(x), np.float16(1.0), (x.astype(np.float32) / np.float32(65536.0)).astype(np.float16))
    lo, hi = np.float16(-5.0), np.float16(5.0)
    want = (lo + (q * np.float16(hi - lo)).astype(np.float16)).astype(np.float16)
    got = fill_random_fp16_t(GlibcRand(3), n, -5.0, 5.0)
    assert (r < 65520).sum() > 20  # draws that fp16_t does not round to +inf
    assert np.array_equal(got.view(np.uint16), want.view(np.uint16))
    with pytest.raises(ArgumentError, match="rng"):
        fill_random_fp16_t(np.random.default_rng(), 3, -5.0, 5.0)
    with pytest.raises(ArgumentError, match="n:"):
        fill_random_fp16_t(GlibcRand(), -3, -5.0, 5.0)
