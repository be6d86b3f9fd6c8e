"""Divides and products: CuTe's documented results and the identities that define them."""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tla_helpers import POW2, SETTINGS, compact_layouts, injective_layouts, pow2_layouts, values

from catlass_py.errors import ArgumentError
from catlass_py.tla import (
    Layout,
    blocked_product,
    complement,
    composition,
    flat_divide,
    flat_product,
    logical_divide,
    logical_product,
    make_layout,
    raked_product,
    size,
    tiled_divide,
    tiled_product,
    zipped_divide,
    zipped_product,
)

L = Layout
A2D = L((9, (4, 8)), (59, (13, 1)))
TILER2D = (L(3, 3), L((2, 4), (1, 8)))


@pytest.mark.parametrize(
    "fn, a, b, expected",
    [
        # CuTe media/docs/cpp/cute/02_layout_algebra.md
        (logical_divide, L((4, 2, 3), (2, 1, 8)), L(4, 2), L(((2, 2), (2, 3)), ((4, 1), (2, 8)))),
        (logical_divide, A2D, TILER2D, L(((3, 3), ((2, 4), (2, 2))), ((177, 59), ((13, 2), (26, 1))))),
        (zipped_divide, A2D, TILER2D, L(((3, (2, 4)), (3, (2, 2))), ((177, (13, 2)), (59, (26, 1))))),
        (tiled_divide, A2D, TILER2D, L(((3, (2, 4)), 3, (2, 2)), ((177, (13, 2)), 59, (26, 1)))),
        (flat_divide, A2D, TILER2D, L((3, (2, 4), 3, (2, 2)), (177, (13, 2), 59, (26, 1)))),
        (logical_product, L((2, 2), (4, 1)), L(6, 1), L(((2, 2), (2, 3)), ((4, 1), (2, 8)))),
        (blocked_product, L((2, 5), (5, 1)), L((3, 4), (1, 3)), L(((2, 3), (5, 4)), ((5, 10), (1, 30)))),
        (raked_product, L((2, 5), (5, 1)), L((3, 4), (1, 3)), L(((3, 2), (4, 5)), ((10, 5), (30, 1)))),
        # a tile of 4 rows out of a 10-row column-major matrix: the rest rounds up (3 tiles)
        (logical_divide, L((10, 6), (1, 10)), (4, None), L(((4, 3), 6), ((1, 4), 10))),
        (zipped_divide, L((8, 6), (1, 8)), (4, 3), L(((4, 3), (2, 2)), ((1, 8), (4, 24)))),
        (zipped_product, L((2, 2)), L((3, 2)), L(((2, 2), (3, 2)), ((1, 2), (4, 12)))),
        (tiled_product, L((2, 2)), L((3, 2)), L(((2, 2), 3, 2), ((1, 2), 4, 12))),
        (flat_product, L((2, 2)), L((3, 2)), L((2, 2, 3, 2), (1, 2, 4, 12))),
        # by mode, each mode is multiplied on its own (CuTe: "not the recommended approach")
        (zipped_product, L((2, 2)), (3, 2), L(((2, 2), (3, 2)), ((1, 2), (2, 1)))),
    ],
    ids=lambda x: getattr(x, "__name__", str(x)),
)
def test_known_results(fn, a, b, expected):
    assert fn(a, b) == expected


def test_doc_facts():
    # "layout<0>(zipped_divide(a, b)) == composition(a, b)"
    assert zipped_divide(A2D, TILER2D)[0] == composition(A2D, TILER2D)
    # the 1-D divide and product examples of the document produce the same layout
    assert logical_divide(L((4, 2, 3), (2, 1, 8)), L(4, 2)) == logical_product(L((2, 2), (4, 1)), L(6, 1))
    assert logical_divide(A2D, None) == A2D and logical_product(A2D, None) == A2D


@SETTINGS
@given(pow2_layouts(max_size=128), compact_layouts(extents=POW2, max_size=128))
def test_logical_divide_is_composition_with_tiler_and_complement(a, b):
    if size(b) > size(a):
        return
    d = logical_divide(a, b)
    assert d == composition(a, make_layout(b, complement(b, size(a))))
    # a compact tile whose size divides size(a): (b, b*) permutes [0, size a), so the divide permutes a
    assert size(d) == size(a)
    assert sorted(values(d)) == sorted(values(a))
    assert values(d[0]) == values(composition(a, b))


@SETTINGS
@given(pow2_layouts(max_size=32), st.sampled_from([1, 2, 4, 8]), st.sampled_from([1, 2, 4]))
def test_zipped_tiled_flat_divide_rearrange_logical_divide(a, t0, t1):
    a2 = make_layout(a, a)
    tiler = (t0, t1)
    ld, zd, td, fd = (fn(a2, tiler) for fn in (logical_divide, zipped_divide, tiled_divide, flat_divide))
    assert size(ld) == size(zd) == size(td) == size(fd)
    assert sorted(values(ld)) == sorted(values(zd)) == sorted(values(td)) == sorted(values(fd))
    assert zd[0] == composition(a2, tiler)
    # tile (i, j) of zipped_divide at rest coordinate r is logical_divide's ((i, r0), (j, r1))
    r0, r1 = size(zd[1][0]) - 1, size(zd[1][1]) - 1
    for i in range(t0):
        for j in range(t1):
            assert zd((i, j), (r0, r1)) == ld((i, r0), (j, r1))


@SETTINGS
@given(
    injective_layouts(extents=POW2, max_size=64, gaps=st.sampled_from([1, 1, 2, 4])),
    compact_layouts(extents=POW2, max_size=32),
)
def test_logical_product_repeats_the_block_without_overlap(a, b):
    _check_product(a, b, logical_product(a, b))


@SETTINGS
@given(injective_layouts(max_size=64), compact_layouts(max_size=24))
def test_logical_product_of_any_block_is_correct_or_refused(a, b):
    try:
        p = logical_product(a, b)
    except ArgumentError as e:
        assert "divisibility" in str(e) or "not representable" in str(e)
        return
    _check_product(a, b, p)


def _check_product(a, b, p):
    assert p[0] == a and size(p) == size(a) * size(b)
    vals = values(p)
    assert len(set(vals)) == len(vals)  # injective: the copies of a never overlap
    base = values(a)
    for t in range(size(b)):
        shift = p((0, t))
        assert [p((i, t)) - shift for i in range(size(a))] == base


@SETTINGS
@given(
    compact_layouts(max_size=24).filter(lambda x: x.rank <= 2),
    compact_layouts(max_size=12).filter(lambda x: x.rank <= 2),
)
def test_blocked_and_raked_products_are_regroupings(a, b):
    blk = blocked_product(a, b)
    rak = raked_product(a, b)
    r = max(a.rank, b.rank)
    assert blk.rank == rak.rank == r
    assert size(blk) == size(rak) == size(a) * size(b)
    vals = values(blk)
    assert len(set(vals)) == len(vals)
    # the same function of (block coordinate, tile coordinate), with the two halves of each mode swapped
    for m in range(r):
        assert size(blk[m][0]) == size(rak[m][1]) and size(blk[m][1]) == size(rak[m][0])
    a_r = [size(blk[m][0]) for m in range(r)]
    b_r = [size(blk[m][1]) for m in range(r)]
    for idx in range(size(blk)):
        digits = []
        rest = idx
        for m in range(r):
            n = a_r[m] * b_r[m]
            digits.append(rest % n)
            rest //= n
        blk_crd = tuple((d % a_r[m], d // a_r[m]) for m, d in enumerate(digits))
        rak_crd = tuple((bc, ac) for ac, bc in blk_crd)
        assert blk(blk_crd) == rak(rak_crd)
    # every tile is a copy of the block: blocked coordinate ((i, t0), (j, t1)) minus the tile's origin is a(i, j)
    if r == 2 and a.rank == 2:
        for t0 in range(b_r[0]):
            for t1 in range(b_r[1]):
                origin = blk(((0, t0), (0, t1)))
                for i in range(a_r[0]):
                    for j in range(a_r[1]):
                        assert blk(((i, t0), (j, t1))) - origin == a((i, j))


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: logical_divide(L((4, 4)), (2, 2, 2)), "tiler of 3 modes"),
        (lambda: logical_divide(L(8), 0), "tile size must be positive"),
        (lambda: logical_divide(L(8), "x"), "tiler: expected a tla.Layout"),
        (lambda: logical_product(L(8), (2, 2)), "tiler of 2 modes"),
        (lambda: blocked_product(L(8), (2, 2)), "tiler: expected a tla.Layout"),
        (lambda: zipped_divide((4, 4), 2), "layout: expected a tla.Layout"),
        (lambda: logical_divide(L((4, 3), (1, 10)), L(2, 3)), "stride divisibility"),
    ],
)
def test_errors(call, match):
    with pytest.raises(ArgumentError, match=match):
        call()


def test_inputs_are_not_mutated():
    a, b = L(((2, 2), 3), ((1, 4), 16)), L(2, 2)
    snap = (a.shape, a.stride, b.shape, b.stride)
    logical_divide(a, b)
    logical_product(a, b)
    blocked_product(a, b)
    assert (a.shape, a.stride, b.shape, b.stride) == snap
