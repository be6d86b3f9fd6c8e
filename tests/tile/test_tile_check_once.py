"""local_check_once proves a geometry once for every core: a region that does not fit raises every time (nothing
is recorded), one that fits is recorded and then skips the check on any core."""

from __future__ import annotations

import pytest

from catlass_py.arch.context import standalone_core
from catlass_py.errors import CapacityError
from catlass_py.layout import RowMajor
from catlass_py.numerics import dtypes as dt
from catlass_py.tile import _region


def test_check_once_raises_until_it_fits_and_is_shared_by_cores():
    cores = [standalone_core(core_type="AIV") for _ in range(2)]
    small = cores[0].resource.ub_buf.get_buffer_by_byte(dt.FLOAT32, 0, 100)
    layout = RowMajor(16, 16)
    for _ in range(2):
        with pytest.raises(CapacityError, match="CheckOnce"):
            _region.local_check_once(small, layout, 16, 16, "CheckOnce")
    key = (256, "float32", RowMajor, layout._geom, 16, 16, 16, 16)
    _region._CHECKED.discard(key)
    fits = cores[0].resource.ub_buf.get_buffer_by_byte(dt.FLOAT32, 0, 256)
    _region.local_check_once(fits, layout, 16, 16, "CheckOnce")
    assert key in _region._CHECKED
    other = cores[1].resource.ub_buf.get_buffer_by_byte(dt.FLOAT32, 1024, 256)
    _region.local_check_once(other, layout, 16, 16, "CheckOnce")  # the same geometry on another core: proven
