"""Validation: bad sizes, shapes, dtypes and buffers raise catlass_py errors naming what is wrong."""

import numpy as np
import pytest

from catlass_py.errors import ArgumentError, CatlassError, OutOfBoundsError
from catlass_py.layout import (
    L0C,
    ColumnMajor,
    PaddingColumnMajor,
    PaddingRowMajor,
    RowMajor,
    VectorLayout,
    make_layout,
    nZ,
    show,
    zN,
)

LAYOUTS = [
    RowMajor(8, 8),
    ColumnMajor(8, 8, 10),
    zN.make_layout("int8", 40, 70),
    nZ.make_layout("fp16", 40, 70),
    L0C.make_layout(20, 30),
    PaddingRowMajor(9, 9, 4, 4),
]


@pytest.mark.parametrize(
    "make, arg",
    [
        (lambda: RowMajor(-1, 4), "rows"),
        (lambda: RowMajor(4, 2.5), "cols"),
        (lambda: RowMajor(4, 4, -3), "ldm"),
        (lambda: RowMajor(4, 8, 4), "ldm"),  # rows would overlap
        (lambda: ColumnMajor(8, 4, 4), "ldm"),
        (lambda: ColumnMajor(True, 4), "rows"),
        (lambda: zN(4, 4, (2, 2, 2), (1, 2, 3, 4)), "shape"),
        (lambda: zN(4, 4, (0, 2, 2, 2), (1, 2, 3, 4)), "shape"),
        (lambda: zN(40, 4, (16, 2, 2, 2), (1, 2, 3, 4)), "shape"),  # grid too small for the rows
        (lambda: zN(4, 4, (2, 2, 2, 2), (1, -2, 3, 4)), "stride[1]"),
        (lambda: zN.make_layout("int8", "4", 4), "rows"),
        (lambda: zN.make_layout("int7", 4, 4), "dtype"),
        (lambda: nZ.compact(4, 4, 0, 2), "fractal_rows"),
        (lambda: PaddingRowMajor(4, 4, 0, 2), "block_rows"),
        (lambda: PaddingColumnMajor(4, 4, 2, -1), "block_cols"),
        (lambda: VectorLayout(-2), "size"),
        (lambda: VectorLayout(4, 0), "stride"),
        (lambda: RowMajor(4, 4).get_tile_layout(-1, 2), "rows"),
        (lambda: zN.make_layout("int8", 4, 4).get_tile_layout(2, 1.0), "cols"),
    ],
)
def test_bad_sizes_name_the_argument(make, arg):
    with pytest.raises(ArgumentError) as e:
        make()
    assert str(e.value).startswith(arg)


def test_bad_coordinates():
    lay = zN.make_layout("int8", 32, 32)
    with pytest.raises(ArgumentError, match="row"):
        lay.offset(-1, 0)
    with pytest.raises(ArgumentError, match="col"):
        lay.offset(0, np.array([1, -2]))
    with pytest.raises(ArgumentError, match="integer"):
        lay.offset(np.array([0.5]), 0)
    with pytest.raises(ArgumentError, match="index"):
        VectorLayout(4).offset(-1)


@pytest.mark.parametrize("lay", LAYOUTS, ids=lambda x: type(x).__name__)
def test_short_buffer_raises_out_of_bounds(lay):
    x = np.ones((lay.rows, lay.cols), np.float32)
    need = int(np.max(lay.offset(np.arange(lay.rows)[:, None], np.arange(lay.cols)[None, :]))) + 1
    buf = np.zeros(need - 1, np.float32)
    with pytest.raises(OutOfBoundsError) as e:
        lay.read(buf)
    assert str(need - 1) in str(e.value) and str(need) in str(e.value)
    with pytest.raises(OutOfBoundsError):
        lay.write(buf, x)
    assert not buf.any()  # nothing written before the error
    # exactly long enough is fine
    lay.write(np.zeros(need, np.float32), x)
    lay.read(np.zeros(need, np.float32))


def test_vector_short_buffer():
    v = VectorLayout(5, 3)
    with pytest.raises(OutOfBoundsError):
        v.read(np.zeros(12, np.int8))
    with pytest.raises(OutOfBoundsError):
        v.write(np.zeros(12, np.int8), np.ones(5, np.int8))
    v.read(np.zeros(13, np.int8))


@pytest.mark.parametrize("lay", LAYOUTS, ids=lambda x: type(x).__name__)
def test_wrong_shapes(lay):
    buf = np.zeros(lay.capacity, np.float32)
    with pytest.raises(ArgumentError, match="nd"):
        lay.pack(np.zeros((lay.rows + 1, lay.cols), np.float32))
    with pytest.raises(ArgumentError, match="nd"):
        lay.pack(np.zeros(lay.rows * lay.cols, np.float32))
    with pytest.raises(ArgumentError, match="nd"):
        lay.write(buf, np.zeros((lay.rows, lay.cols + 1), np.float32))
    with pytest.raises(ArgumentError, match="nd"):
        lay.write(buf, np.zeros(3, np.float32))
    with pytest.raises(ArgumentError, match="rows"):
        lay.read(buf, lay.rows + 1, 1)
    with pytest.raises(ArgumentError, match="cols"):
        lay.read(buf, 1, lay.cols + 1)
    with pytest.raises(ArgumentError, match="dtype"):
        lay.write(buf, np.zeros((lay.rows, lay.cols), np.float64))
    with pytest.raises(ArgumentError, match="buf"):
        lay.read(buf.reshape(1, -1))
    with pytest.raises(ArgumentError, match="buf"):
        lay.read(list(buf))
    with pytest.raises(ArgumentError, match="buf"):
        lay.read(np.zeros(2 * lay.capacity, np.float32)[::2])
    ro = buf.copy()
    ro.flags.writeable = False
    lay.read(ro)
    with pytest.raises(ArgumentError, match="read-only"):
        lay.write(ro, np.zeros((lay.rows, lay.cols), np.float32))
    with pytest.raises(ArgumentError, match="out"):
        lay.read(buf, out=np.zeros((lay.rows, lay.cols + 1), np.float32))
    out = np.zeros((lay.rows, lay.cols), np.float32)
    assert lay.read(buf, out=out) is out


def test_vector_wrong_shapes():
    v = VectorLayout(4)
    with pytest.raises(ArgumentError, match="vec"):
        v.pack(np.zeros(5))
    with pytest.raises(ArgumentError, match="vec"):
        v.write(np.zeros(8), np.zeros((2, 2)))
    with pytest.raises(ArgumentError, match="vec"):
        v.write(np.zeros(8), np.zeros(5))
    with pytest.raises(ArgumentError, match="size"):
        v.read(np.zeros(8), 5)


def test_make_layout_names():
    with pytest.raises(ArgumentError, match="CANN NZ is CATLASS 'zN'"):
        make_layout("NZ", "int8", 16, 32)
    with pytest.raises(ArgumentError, match="kind"):
        make_layout("Blocked", "int8", 16, 32)
    with pytest.raises(ArgumentError, match="MakeLayout"):
        make_layout("PaddingRowMajor", "int8", 16, 32)
    with pytest.raises(ArgumentError, match="cols"):
        make_layout("zN", "int8", 16)


def test_show_limit():
    with pytest.raises(ArgumentError, match="rows"):
        show(RowMajor(100, 100), 65, 4)
    with pytest.raises(ArgumentError):
        show("zN")


def test_errors_are_catlass_errors():
    assert issubclass(OutOfBoundsError, CatlassError) and issubclass(ArgumentError, CatlassError)
