"""show(): the offset grid of a TLA layout with hierarchical modes marked."""

import io

import pytest
from rich.console import Console

from catlass_py.errors import ArgumentError
from catlass_py.tla import Layout, make_layout_tag, show


def _render(layout, *args, **kw):
    buf = io.StringIO()
    table = show(layout, *args, console=Console(file=buf, width=400, color_system=None), **kw)
    return table, buf.getvalue()


def test_plain_matrix_grid():
    table, text = _render(Layout((3, 4), (4, 1)))
    assert "(3,4):(4,1)" in text
    assert len(table.rows) == 3 and len(table.columns) == 5
    assert table.columns[4]._cells == ["3", "7", "11"]


def test_fractal_modes_show_their_coordinates_and_blocks():
    lay = make_layout_tag("float32", "zN", 20, 12)  # ((16,2),(8,2)):((8,128),(1,256)), origin (20, 12)
    table, text = _render(lay, 20, 12)
    assert "((16,2),(8,2)):((8,128),(1,256))" in text and "origin_shape (20,12)" in text
    assert table.columns[0]._cells[17] == "17 (1,1)"  # row 17 is row 1 of fractal row 1
    assert table.columns[9].header == "8 (0,1)"
    cell = table.columns[1 + 9]._cells[17]
    assert str(lay((17, 9))) in cell and "on " in cell  # a checkerboard background marks the fractal
    table, _ = _render(lay, 4, 4, colour=False)
    assert table.columns[1]._cells[1] == str(lay((1, 0)))  # no markup when colour is off


def test_padding_is_dimmed():
    lay = Layout(((16, 2), (16, 1)), ((16, 256), (1, 512)), (20, 12))
    table, _ = _render(lay, 24, 16)
    assert table.columns[1 + 13]._cells[0].startswith("[dim]")  # column 13 >= origin 12
    assert table.columns[1 + 3]._cells[22].startswith("[dim]")  # row 22 >= origin 20
    assert not table.columns[1 + 3]._cells[2].startswith("[dim]")


def test_rank_one_and_default_clipping():
    table, text = _render(Layout(((4, 2),), ((1, 8),)))
    assert len(table.rows) == 1 and table.columns[5].header == "5 (1,1)"
    assert table.columns[5]._cells[0].endswith("9[/]")
    table, text = _render(Layout((64, 64)))
    assert "showing 0:32, 0:32" in table.title and len(table.rows) == 32


@pytest.mark.parametrize(
    "args, match",
    [
        ((Layout((2, 2, 2)),), "rank-1 and rank-2"),
        ((Layout((4, 4)), 65), "at most 64"),
        ((Layout((4, 4)), -1), "non-negative"),
        (("(4,4):(1,4)",), "expected a tla.Layout"),
    ],
)
def test_errors(args, match):
    with pytest.raises(ArgumentError, match=match):
        _render(*args)
