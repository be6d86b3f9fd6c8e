"""The TLA tile copies (catlass_py.tile.copy_tla) against the 1.x tile copies: on random tiles of random
matrices, the same source bytes must produce the same destination bytes (ND2NZ zero fill, whole-fractal L0 loads,
the fixpipe conversion), in every supported layout pair; and the errors for tensors that do not fit."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from catlass_py.arch import ATLAS_A2, GlobalBuffer, standalone_core
from catlass_py.errors import CapacityError, ConfigError
from catlass_py.gemm import GemmType
from catlass_py.layout import ColumnMajor, RowMajor, nZ, zN, zZ
from catlass_py.tile import CopyGmToL1, CopyL0CToGm, CopyL1ToL0A, CopyL1ToL0B
from catlass_py.tile.copy_tla import (
    CopyGmToL1Tla,
    CopyL0CToGmTla,
    CopyL1ToL0ATla,
    CopyL1ToL0BTla,
    PackedTileCopyTla,
    is_layout_kind,
    make_tensor,
)
from catlass_py.tla import get_tile, make_layout_from_tag, make_layout_l0c, make_layout_tag

NP = {"int8": np.int8, "float16": np.float16, "float32": np.float32, "int32": np.int32}
C0 = {"int8": 32, "float16": 16, "float32": 8}
CLS = {"RowMajor": RowMajor, "ColumnMajor": ColumnMajor, "zN": zN, "nZ": nZ}
L1 = {"RowMajor": "zN", "ColumnMajor": "nZ", "zN": "zN", "nZ": "nZ"}


def _rand(rng, dtype, n):
    if dtype == "int8":
        return rng.integers(-128, 128, n).astype(np.int8)
    return rng.standard_normal(n).astype(NP[dtype])


def _poisoned_l1(core):
    buf = core.resource.l1_buf
    buf.raw[:] = 0xA5
    return buf


@pytest.mark.parametrize("kind,dtype", [("RowMajor", "float16"), ("RowMajor", "int8"), ("ColumnMajor", "float16"),
                                        ("ColumnMajor", "float32"), ("zN", "float16"), ("nZ", "int8")])
@pytest.mark.parametrize("seed", range(4))
def test_gm_to_l1_matches_the_1x_copy(kind, dtype, seed):
    rng = np.random.default_rng(seed)
    c0 = C0[dtype]
    rows_all, cols_all = int(rng.integers(40, 150)), int(rng.integers(40, 150))
    # a fractal source is tiled at fractal boundaries (as the kernels do); a plain one anywhere
    r0 = int(rng.integers(0, 2)) * (16 if kind != "nZ" else c0)
    k0 = int(rng.integers(0, 2)) * (c0 if kind != "nZ" else 16)
    if kind in ("RowMajor", "ColumnMajor"):
        r0, k0 = int(rng.integers(0, 20)), int(rng.integers(0, 20))
    rows, cols = int(rng.integers(1, min(48, rows_all - r0) + 1)), int(rng.integers(1, min(96, cols_all - k0) + 1))
    old = CLS[kind].make_layout(dtype, rows_all, cols_all)
    host = _rand(rng, dtype, old.capacity)
    gm = GlobalBuffer.from_array(host, "src").tensor(dtype)
    results = []
    for which in ("1x", "tla"):
        core = standalone_core(ATLAS_A2, "AIC")
        l1 = _poisoned_l1(core).get_buffer_by_byte(dtype, 512)
        l1_layout_old = CLS[L1[kind]].make_layout(dtype, 48, 96)
        if which == "1x":
            CopyGmToL1(ATLAS_A2, GemmType(dtype, CLS[kind]))(l1, gm[old.offset(r0, k0)], l1_layout_old,
                                                             old.get_tile_layout(rows, cols))
        else:
            full = make_tensor(gm, make_layout_tag(dtype, kind, rows_all, cols_all))
            assert make_layout_from_tag(old) == full.layout
            CopyGmToL1Tla(ATLAS_A2, dtype, kind, L1[kind])(make_tensor(l1, make_layout_tag(dtype, L1[kind], 48, 96)),
                                                          get_tile(full, (r0, k0), (rows, cols)))
        results.append(core.resource.l1_buf.raw.copy())
    assert np.array_equal(*results)


@pytest.mark.parametrize("which,l1_kind,dtype", [("A", "zN", "float16"), ("A", "nZ", "int8"), ("A", "nZ", "float16"),
                                                 ("B", "zN", "int8"), ("B", "zN", "float16"), ("B", "nZ", "float32")])
@pytest.mark.parametrize("seed", range(4))
def test_l1_to_l0_matches_the_1x_copy(which, l1_kind, dtype, seed):
    rng = np.random.default_rng(seed)
    c0 = C0[dtype]
    m, k = int(rng.integers(1, 65)), int(rng.integers(1, 97))
    origin = (16 * int(rng.integers(0, 3)), c0 * int(rng.integers(0, 2))) if l1_kind == "zN" else \
        (c0 * int(rng.integers(0, 2)), 16 * int(rng.integers(0, 3)))
    results = []
    for version in ("1x", "tla"):
        core = standalone_core(ATLAS_A2, "AIC")
        res = core.resource
        l1 = res.l1_buf.get_buffer_by_byte(dtype, 0)
        l1.view()[: 192 * 192] = _rand(np.random.default_rng(seed + 100), dtype, 192 * 192)
        l0_buf = res.l0a_buf if which == "A" else res.l0b_buf
        l0_buf.raw[:] = 0x3C
        l0 = l0_buf.get_buffer_by_byte(dtype, 0)
        old_l1 = CLS[l1_kind].make_layout(dtype, 192, 192)
        if version == "1x":
            op = (CopyL1ToL0A if which == "A" else CopyL1ToL0B)(ATLAS_A2, GemmType(dtype, CLS[l1_kind], "L1"))
            dst_layout = (zZ if which == "A" else nZ).make_layout(dtype, m, k)
            op(l0, l1[old_l1.offset(*origin)], dst_layout, old_l1)
        else:
            op = (CopyL1ToL0ATla if which == "A" else CopyL1ToL0BTla)(ATLAS_A2, dtype, l1_kind)
            src = get_tile(make_tensor(l1, make_layout_tag(dtype, l1_kind, 192, 192)), origin, (m, k))
            op(make_tensor(l0, make_layout_tag(dtype, "zZ" if which == "A" else "nZ", m, k)), src)
        results.append(l0_buf.raw.copy())
    assert np.array_equal(*results)


@pytest.mark.parametrize("acc,out", [("float32", "float16"), ("float32", "bfloat16"), ("int32", "int32"),
                                     ("float32", "float32")])
def test_l0c_to_gm_matches_the_1x_copy(acc, out):
    m, n, rows, cols = 37, 70, 100, 90
    outs = []
    for version in ("1x", "tla"):
        core = standalone_core(ATLAS_A2, "AIC")
        l0c = core.resource.l0c_buf.get_buffer_by_byte(acc, 0)
        vals = np.random.default_rng(3).standard_normal(48 * 80) * 50  # the same accumulators in both runs
        l0c.view()[: 48 * 80] = vals.astype(acc)
        host = np.zeros((rows, cols), NP.get(out) or ml_dtypes.bfloat16)
        gm = GlobalBuffer.from_array(host, "C").tensor(out)
        if version == "1x":
            CopyL0CToGm(ATLAS_A2, acc, GemmType(out, RowMajor))(gm[5 * cols + 3], l0c, RowMajor(m, n, cols),
                                                                zN.make_layout_in_l0c(48, 80))
        else:
            dst = get_tile(make_tensor(gm, make_layout_tag(out, "RowMajor", rows, cols)), (5, 3), (m, n))
            CopyL0CToGmTla(ATLAS_A2, acc, out)(dst, make_tensor(l0c, make_layout_l0c(48, 80)))
        outs.append(host.copy())
    assert np.array_equal(outs[0].view(np.uint8), outs[1].view(np.uint8))
    assert np.any(outs[1] != 0)


def test_layout_kinds():
    for kind in ("RowMajor", "ColumnMajor", "zN", "zZ", "nZ"):
        for dtype in ("float16", "int8", "float32"):
            lay = make_layout_tag(dtype, kind, 70, 90)
            assert is_layout_kind(dtype, lay, kind)
            others = {"RowMajor", "ColumnMajor", "zN", "zZ", "nZ"} - {kind}
            assert not any(is_layout_kind(dtype, lay, o) for o in others), (kind, dtype)
    # one fractal column: zN and zZ are the same function, both tests accept it
    one = make_layout_tag("float16", "zZ", 70, 16)
    assert is_layout_kind("float16", one, "zN") and is_layout_kind("float16", one, "zZ")


def test_errors_name_the_rule():
    core = standalone_core(ATLAS_A2, "AIC")
    l1 = core.resource.l1_buf.get_buffer_by_byte("float16", 0)
    gm = GlobalBuffer.from_array(np.zeros(64 * 64, np.float16), "a").tensor("float16")
    src = make_tensor(gm, make_layout_tag("float16", "RowMajor", 64, 64))
    copy = CopyGmToL1Tla(ATLAS_A2, "float16", "RowMajor", "zN")
    with pytest.raises(CapacityError, match="does not fit the L1 layout"):
        copy(make_tensor(l1, make_layout_tag("float16", "zN", 32, 64)), src)
    with pytest.raises(ConfigError, match="destination layout .* is not zN"):
        copy(make_tensor(l1, make_layout_tag("float16", "nZ", 64, 64)), src)
    with pytest.raises(ConfigError, match="must be in L1"):
        copy(src, src)
    with pytest.raises(ConfigError, match="no GM->L1 copy from RowMajor to nZ"):
        CopyGmToL1Tla(ATLAS_A2, "float16", "RowMajor", "nZ")
    with pytest.raises(ConfigError, match="over a simulated tensor"):
        copy(make_layout_tag("float16", "zN", 64, 64), src)
    with pytest.raises(ConfigError, match="bias"):
        PackedTileCopyTla(ATLAS_A2, "float16", "RowMajor", "float16", "RowMajor", "float16", element_bias="float16")
    with pytest.raises(ConfigError, match="LayoutTagA must be"):
        PackedTileCopyTla(ATLAS_A2, "float16", "VectorLayout", "float16", "RowMajor", "float16")


def test_the_region_cache_stays_within_its_byte_budget_least_recently_used_first():
    from catlass_py.tile.copy_tla import _RegionCache

    cache = _RegionCache(100)
    cache.put("a", 1, 40)
    cache.put("b", 2, 40)
    assert cache.get("a") == 1  # "a" is now the most recently used
    cache.put("c", 3, 40)  # 120 > 100: the least recently used ("b") goes
    assert cache.get("b") is None and cache.get("a") == 1 and cache.get("c") == 3
    assert cache.nbytes == 80
    cache.put("a", 4, 90)  # replacing an entry frees its old bytes first
    assert cache.get("a") == 4 and cache.get("c") is None and cache.nbytes == 90
    cache.put("big", 5, 500)  # larger than the budget on its own: kept alone
    assert cache.get("big") == 5 and cache.get("a") is None and cache.nbytes == 500


@pytest.mark.parametrize("tag", ["RowMajor", "ColumnMajor", "zN", "nZ"])
@pytest.mark.parametrize("dtype", ["float16", "int8"])
def test_regions_moved_through_strided_views_hold_what_the_offsets_say(tag, dtype, monkeypatch):
    # tiles of 4096 elements and more (whole and tail tiles, at fractal-aligned and other coordinates) are read and
    # written through one strided view of the buffer; the TLA tensor's own gather and scatter (by its offsets)
    # say what they hold
    from catlass_py.tile import copy_tla
    from catlass_py.tla import make_tensor as tla_tensor

    taken = []
    strided = copy_tla._strided

    def counted(*a):
        view = strided(*a)
        taken.append(view is not None)
        return view

    monkeypatch.setattr(copy_tla, "_strided", counted)
    rng = np.random.default_rng(3)
    rows, cols = 160, 224
    layout = make_layout_tag(dtype, tag, rows, cols)
    size = int(tla_tensor(np.empty(1, NP[dtype]), layout).offsets().max()) + 1
    data = _rand(rng, dtype, size)
    for coord, shape in (((0, 0), (rows, cols)), ((32, 64), (96, 128)), ((64, 96), (128, 160)), ((16, 32), (64, 96))):
        tile = get_tile(tla_tensor(data, layout), coord, shape)
        extent = tile.layout.origin_shape
        np.testing.assert_array_equal(copy_tla.gather(tile, extent, "test"), tile.read())
        values = _rand(rng, dtype, int(np.prod(extent))).reshape(extent)
        mine, theirs = data.copy(), data.copy()
        copy_tla.scatter(get_tile(tla_tensor(mine, layout), coord, shape), extent, values, "test")
        get_tile(tla_tensor(theirs, layout), coord, shape).write(values)
        np.testing.assert_array_equal(mine.view(np.uint8), theirs.view(np.uint8))
    assert any(taken)
