"""Argument values whose spelling matters: B's fractal layout names differ in case alone, the lengths of MLA's
sequences, and what importing the torch ops says without torch."""

import importlib
import sys

import pytest

from catlass_py.errors import ArgumentError
from catlass_py.layout import ColumnMajor, RowMajor, nZ, zN
from catlass_py.ops.basic_matmul_preload_zn import parse_layout_b
from catlass_py.ops.mla import _lengths


def test_fractal_layout_names_are_taken_as_written():
    assert [parse_layout_b(v) for v in ("zN", "nZ", "row", "Column_Major", "RowMajor", zN)] == [
        zN, nZ, RowMajor, ColumnMajor, RowMajor, zN]
    with pytest.raises(ArgumentError, match="layout_b: expected 'zN', 'nZ', 'row' or 'column'"):
        parse_layout_b("diagonal")
    for value in ("NZ", "ZN", "zn", "Nz"):  # CANN's "NZ" is zN: a case-folded name could pick either
        with pytest.raises(ArgumentError, match=f"layout_b: '{value}' is ambiguous: write 'zN'"):
            parse_layout_b(value)


def test_a_sequence_length_out_of_range_says_the_range():
    with pytest.raises(ArgumentError, match=r"every length must be >= 1, got 0 at batch 1$"):
        _lengths("actual_seq_lengths_kv", [3, 0], 2, 1, None)
    with pytest.raises(ArgumentError, match=r"every length must be in \[1, 4\], got 5 at batch 0$"):
        _lengths("actual_seq_lengths", [5], 1, 1, 4)


def test_the_torch_ops_without_torch_say_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.delitem(sys.modules, "catlass_py.torch", raising=False)
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'catlass-py\[torch\]'"):
        importlib.import_module("catlass_py.torch")
