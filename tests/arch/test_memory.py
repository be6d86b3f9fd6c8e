import numpy as np
import pytest

from catlass_py.arch import GlobalBuffer, standalone_core
from catlass_py.errors import AlignmentError, CapacityError, ConfigError, OutOfBoundsError


def test_global_tensor_shift_and_bounds():
    host = np.arange(100, dtype=np.int32)
    gm = GlobalBuffer.from_array(host, "x", read_only=True).tensor("int32")
    assert gm[10].view(5).tolist() == [10, 11, 12, 13, 14]
    assert gm[95].size == 5
    with pytest.raises(OutOfBoundsError, match="'x'.*\\[95, 101\\)"):
        gm[95].view(6)
    with pytest.raises(OutOfBoundsError):
        gm[101]


def test_read_only_global_buffer_refuses_writes_and_never_touches_host():
    host = np.arange(8, dtype=np.int8)
    gm = GlobalBuffer.from_array(host, "a", read_only=True).tensor("int8")
    with pytest.raises(OutOfBoundsError, match="read-only"):
        gm.view(4, write=True)
    assert host.tolist() == list(range(8))


def test_reinterpret_views_same_bytes():
    buf = GlobalBuffer.empty(16, "ws", fill=0)
    buf.tensor("int32").view(4, write=True)[:] = [1, 2, 3, 4]
    assert buf.tensor("int8").view(16)[::4].tolist() == [1, 2, 3, 4]


def test_gm_access_describes_strided_rows():
    gm = GlobalBuffer.empty(4 * 64, "c").tensor("int32")
    acc = gm[8].access(0, 4, stride=16, count=3)
    assert (acc.start, acc.length, acc.stride, acc.count, acc.end) == (32, 16, 64, 3, 32 + 2 * 64 + 16)
    other = gm[12].access(0, 4, stride=16, count=3)  # columns 12..15 of the same rows: disjoint
    assert not acc.overlaps(other)
    assert acc.overlaps(gm[11].access(0, 2, stride=16, count=3))


def test_local_arena_views_check_alignment_and_capacity_and_start_poisoned():
    ctx = standalone_core("AtlasA2", "AIC")
    l1 = ctx.resource.l1_buf
    t = l1.get_buffer_by_byte("float32", 64, 8)
    assert np.isnan(t.view()).all()  # poison 0xFF is NaN for floats
    assert (l1.get_buffer_by_byte("int8", 0, 4).view() == -1).all()
    with pytest.raises(AlignmentError, match="33"):
        l1.get_buffer_by_byte("int8", 33)
    with pytest.raises(CapacityError, match="exceed"):
        l1.get_buffer_by_byte("int32", 512 * 1024 - 32, 9)
    with pytest.raises(CapacityError):
        l1.get_buffer_by_byte("int8", 512 * 1024 + 32)
    with pytest.raises(CapacityError):
        t[9]


def test_core_type_owns_its_buffers():
    aic = standalone_core("AtlasA2", "AIC")
    aiv = standalone_core("AtlasA2", "AIV")
    assert set(aic.resource.arenas()) == {"L1", "L0A", "L0B", "BT", "L0C", "FB"}
    assert set(aiv.resource.arenas()) == {"UB"}
    with pytest.raises(ConfigError, match="UB"):
        aic.resource.ub_buf.get_buffer_by_byte("int8", 0)
    with pytest.raises(ConfigError, match="L1"):
        aiv.resource.l1_buf.get_buffer_by_byte("int8", 0)


def test_local_tensor_shift_writes_through_to_arena():
    ctx = standalone_core()
    t = ctx.resource.l0c_buf.get_buffer_by_byte("int32", 0, 64)
    t[16].view(4)[:] = 7
    assert t.view()[16:20].tolist() == [7] * 4
    assert t.view()[15] == -1
