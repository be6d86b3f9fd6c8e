"""Split-core checks for the matmul kernels, read from the workload report (``ctx.mark('block', ...)``)."""

from __future__ import annotations

from collections import Counter

import numpy as np

from catlass_py.arch import GlobalBuffer
from catlass_py.kernel import DeviceGemm


def _blocks(report):
    for core, blocks in report.blocks.items():
        for b in blocks:
            yield core, b


def written_counts(report, shapes: dict, key_field: str | None = None) -> dict:
    """How many blocks wrote each element of each output. ``shapes`` maps an output key (the block mark's
    ``key_field`` value, e.g. the group or batch, or None for one output) to its (rows, cols)."""
    counts = {key: np.zeros(shape, np.int32) for key, shape in shapes.items()}
    for _, b in _blocks(report):
        key = b[key_field] if key_field else None
        counts[key][b["row"]:b["row"] + b["rows"], b["col"]:b["col"] + b["cols"]] += 1
    return counts


def assert_each_written_once(report, shapes: dict, key_field: str | None = None) -> None:
    """Every element of every output is written by exactly one block."""
    for key, c in written_counts(report, shapes, key_field).items():
        assert (c == 1).all(), (key, np.argwhere(c != 1)[:5])


def assert_round_robin(report, core_num: int, key_field: str | None = None) -> None:
    """CATLASS's split: all blocks (of all groups, in group order) form one sequence; block j runs on core
    ``j % core_num`` and each core runs its blocks in sequence order. ``key_field`` names the group field of
    the marks when ``loop`` restarts per group."""
    offsets = {}
    if key_field:
        per = Counter(b[key_field] for _, b in _blocks(report))
        total = 0
        for key in sorted(per):
            offsets[key] = total
            total += per[key]
    for core, blocks in report.blocks.items():
        seq = [(offsets[b[key_field]] if key_field else 0) + b["loop"] for b in blocks]
        assert all(j % core_num == core for j in seq), (core, seq)
        assert seq == sorted(seq), (core, seq)


def run_clean(kernel, args, core_num: int, **launch_options):
    """Launch through DeviceGemm; check that every cross-core and intra-core flag set was consumed."""
    op = DeviceGemm(kernel)
    op.initialize(args)
    result = op.run(core_num, **launch_options)
    assert result.unconsumed_flags == []
    assert result.unconsumed_intra_core_flags == []
    return result


def gm(name: str, x: np.ndarray, *, read_only: bool = True):
    """A GM tensor over ``x`` (read-only by default)."""
    return GlobalBuffer.from_array(x, name, read_only=read_only).tensor(x.dtype)
