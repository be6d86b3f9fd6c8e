"""Every operator computes what it will allocate (copies of inputs in another layout, outputs, the workspace,
the cores' buffers) and checks it against the memory budget before allocating anything; argument checks that
sizes depend on (group lists) never wrap."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from test_ops_keywords import CALLS

from catlass_py import golden, ops
from catlass_py.arch import ATLAS_A2, LaunchParams
from catlass_py.arch.budget import core_buffer_bytes
from catlass_py.errors import ArgumentError, CapacityError
from catlass_py.ops.operator import OpOptions

TINY = LaunchParams(memory_limit=1)


def _peak(fn):
    """(result or exception, tracemalloc peak bytes) of ``fn()``."""
    tracemalloc.start()
    try:
        try:
            out = fn()
        except Exception as exc:  # noqa: BLE001 - returned to the test
            out = exc
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_broadcast_views_of_a_terabyte_are_refused_before_any_copy():
    a = np.broadcast_to(np.float16(1), (10**6, 10**6))  # 1.82 TiB once stored
    err, peak = _peak(lambda: ops.basic_matmul(a, a))
    assert isinstance(err, CapacityError), err
    msg = str(err)
    assert msg.startswith("basic_matmul would allocate 5.5 TiB")
    assert "copy of a 1.8 TiB" in msg and "memory budget of" in msg and "CATLASS_PY_MEMORY_LIMIT" in msg
    assert peak < 1 << 20
    assert not a.flags.writeable  # still the caller's view


@pytest.mark.parametrize("name", sorted(CALLS))
def test_every_op_checks_its_budget_before_launching(name):
    with pytest.raises(CapacityError, match=r"would allocate .* more than the memory budget of 1 B "
                                            r"\(LaunchParams.memory_limit"):
        CALLS[name](core_num=2, options=TINY)


def test_the_op_budget_counts_copies_outputs_workspace_and_core_buffers():
    r = np.random.default_rng(0)
    a = r.uniform(-1, 1, (130, 64)).astype(np.float16)
    b = r.uniform(-1, 1, (64, 260)).astype(np.float16)
    with pytest.raises(CapacityError) as info:  # b is row-major: the example's column-major B is a copy
        ops.splitk_matmul(a, b, core_num=2, options=TINY)
    msg = str(info.value)
    assert "copy of b 32.5 KiB" in msg and "c 66.0 KiB" in msg
    cores = core_buffer_bytes(ATLAS_A2, 2)
    # just enough for everything but the workspace: refused once the workspace is counted
    limit = 64 * 260 * 2 + 130 * 260 * 2 + cores
    with pytest.raises(CapacityError, match="workspace"):
        ops.splitk_matmul(a, b, core_num=2, options=LaunchParams(memory_limit=limit))
    c = ops.splitk_matmul(a, b, core_num=2, options=LaunchParams(memory_limit=limit + (8 << 20)))
    assert golden.compare_data(c, golden.matmul(a, b), 64).passed


def test_an_op_allocates_what_it_estimated_and_no_more(monkeypatch):
    r = np.random.default_rng(1)
    a = r.uniform(-1, 1, (512, 256)).astype(np.float16)
    b = np.asfortranarray(r.uniform(-1, 1, (256, 512)).astype(np.float16))  # column-major already: no copy
    seen = {}
    original = OpOptions.reserve

    def spy(self, footprint, what, kernel=None):
        seen["footprint"] = original(self, footprint, what, kernel)
        return seen["footprint"]

    monkeypatch.setattr(OpOptions, "reserve", spy)
    c, peak = _peak(lambda: ops.splitk_matmul(a, b, core_num=2))
    assert golden.compare_data(c, golden.matmul(a, b), 256).passed
    assert "copy of b" not in str(seen["footprint"]) and "workspace" in str(seen["footprint"])
    # the figure is the buffers; the launch's own bookkeeping (events, contexts, temporaries) is well under 1 MiB
    assert peak <= seen["footprint"].total + (1 << 20)


def test_a_segmented_group_list_whose_int64_sum_wraps_is_refused():
    r = np.random.default_rng(2)
    a = r.uniform(-1, 1, (64, 32)).astype(np.float16)
    b = r.uniform(-1, 1, (4, 32, 16)).astype(np.float16)
    wraps = np.full(4, 2**62, np.int64)  # the int64 sum is 0
    assert int(wraps.sum()) == 0
    with pytest.raises(ArgumentError, match=r"group_list: group sizes must sum to at most m = 64, got "
                                            r"18446744073709551616"):
        ops.grouped_matmul_slice_m(a, b, wraps, segmented=True, core_num=1)
    ok = np.array([10, 0, 30, 24], np.int64)
    c = ops.grouped_matmul_slice_m(a, b, ok, segmented=True, core_num=2)
    assert golden.compare_data(c, golden.grouped_matmul_slice_m(a, b, ok, segmented=True), 32).passed
