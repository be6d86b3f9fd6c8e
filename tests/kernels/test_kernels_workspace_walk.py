"""The workspace-epilogue kernels' block walk from the launch's shared table (taken when nobody observes
instructions) deals every core the same blocks, in the same order, with the same markers, as the per-core walk
that reads the group list itself (taken under an instruction observer)."""

from __future__ import annotations

import numpy as np
import pytest

from catlass_py.arch.events import INSTRUCTION, MARKER, MarkerEvent, Observer
from catlass_py.errors import OutOfBoundsError
from catlass_py.ops import grouped_matmul_slice_m_per_token_dequant as gmm


class _Markers(Observer):
    def __init__(self, *, instructions: bool):
        self.interests = frozenset({MARKER, INSTRUCTION} if instructions else {MARKER})
        self.marks: list = []

    def on_event(self, event) -> None:
        if isinstance(event, MarkerEvent):
            self.marks.append((event.core.short, event.kind, repr(sorted(event.data.items()))))


def _inputs(sizes, n, k, seed=0):
    rng = np.random.default_rng(seed)
    m, g = int(sum(sizes)) + 3, len(sizes)
    a = rng.integers(-128, 128, (m, k), dtype=np.int8)
    b = rng.integers(-128, 128, (g, k, n), dtype=np.int8)
    scale = rng.random((g, n)).astype("bfloat16")
    return a, b, np.cumsum(sizes).astype(np.int64), scale, rng.random(m).astype("bfloat16")


@pytest.mark.parametrize("sizes, cores", [((0, 130, 1, 0, 257, 64), 3), ((5, 0, 0, 300), 2), ((40,) * 9, 4)])
def test_table_walk_matches_per_core_walk(sizes, cores):
    args = _inputs(sizes, 300, 96)
    fast, slow = _Markers(instructions=False), _Markers(instructions=True)
    d_fast = gmm(*args, core_num=cores, observers=(fast,))
    d_slow = gmm(*args, core_num=cores, observers=(slow,))
    assert np.array_equal(d_fast.view(np.uint16), d_slow.view(np.uint16))
    assert fast.marks == slow.marks
    assert any(kind == "block" for _, kind, _ in fast.marks)


def test_a_plain_launch_reads_the_group_list_once_through_the_table(monkeypatch):
    # nobody observes: the table is made once per launch (one read per group), and no core walks the groups
    from catlass_py.kernel import workspace_epilogue

    reads: list = []
    read = workspace_epilogue.get_value

    def counted(ctx, gm, index):
        reads.append(index)
        return read(ctx, gm, index)

    monkeypatch.setattr(workspace_epilogue, "get_value", counted)
    sizes = (0, 130, 1, 0, 257, 64)
    args = _inputs(sizes, 300, 96)
    gmm(*args, core_num=3)
    assert reads == list(range(len(sizes)))


def test_walk_table_that_raises_leaves_the_walk_to_each_core():
    """A group walk that raises a kernel error (a bad group list) while the table is made gives no table (None,
    remembered for the launch), so that every core walks the groups itself and raises at its own place; any other
    exception is a defect of the walk, raised at once."""
    from catlass_py.gemm.coord import MatrixCoord
    from catlass_py.kernel.workspace_epilogue import SliceMGroups
    from catlass_py.ops.grouped_matmul_slice_m_per_token_dequant import build_kernel

    from catlass_py.arch.context import CoreContext

    class _Ctx:
        block_num = 3
        launch_shared = CoreContext.launch_shared

        def __init__(self):
            self.memo = {}

        def launch_memo(self):
            return self.memo

    class _Raising(SliceMGroups):
        error: Exception = OutOfBoundsError("GM tensor 'group_list': index 3 past its end")

        def groups(self, ctx, params):
            yield from ()
            raise self.error

    kernel = build_kernel()
    ctx, params = _Ctx(), object()
    kernel_copy = type(kernel).__new__(type(kernel))
    kernel_copy.__dict__.update(kernel.__dict__)
    kernel_copy.group_walk = _Raising()
    assert kernel_copy._walk_table(ctx, params, MatrixCoord(128, 256)) is None
    assert kernel_copy._walk_table(ctx, params, MatrixCoord(128, 256)) is None  # remembered, not made again
    kernel_copy.group_walk.error = AttributeError("'_QuietCore' object has no attribute 'launch_shared'")
    with pytest.raises(AttributeError, match="launch_shared"):
        kernel_copy._walk_table(_Ctx(), params, MatrixCoord(128, 256))
