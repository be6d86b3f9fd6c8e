"""Split-core checks for the mix kernels (cube + vector cores), read from the workload report: which vector core wrote
which output tile (``ctx.mark('epilogue_tile', ...)``), which cube core computed which block."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from catlass_py.arch.pipes import CoreType
from catlass_py.kernel import DeviceGemm


def tile_counts(report, shape, *, group_rows=None) -> np.ndarray:
    """How many vector-core tiles wrote each element of an output of ``shape``.

    ``group_rows``: for grouped kernels whose tile markers are relative to the current group (announced by
    the preceding ``epilogue_block`` marker of the same core), a function group -> first output row.
    """
    counts = np.zeros(shape, np.int32)
    group = defaultdict(lambda: None)
    for e in report.markers:
        if e.core.type is not CoreType.AIV:
            continue
        if e.kind == "epilogue_block":
            group[e.core] = e.data.get("group")
        elif e.kind == "epilogue_tile":
            d = e.data
            if "offset" in d:  # flat range (split-K reduction)
                counts.reshape(-1)[d["offset"]:d["offset"] + d["count"]] += 1
                continue
            r0 = d["row"] + (group_rows(group[e.core]) if group_rows else 0)
            counts[r0:r0 + d["rows"], d["col"]:d["col"] + d["cols"]] += 1
    return counts


def block_counts(report, shape, *, kind="block", where=None) -> np.ndarray:
    """How many cube-core block markers (optionally filtered by ``where(data)``) cover each element."""
    counts = np.zeros(shape, np.int32)
    for e in report.markers:
        if e.core.type is CoreType.AIC and e.kind == kind and (where is None or where(e.data)):
            d = e.data
            counts[d["row"]:d["row"] + d["rows"], d["col"]:d["col"] + d["cols"]] += 1
    return counts


def assert_once(counts: np.ndarray, valid=None) -> None:
    """Every element written exactly once (``valid``: a boolean mask or row count of the region that must
    be written; elsewhere nothing)."""
    if valid is None:
        mask = np.ones(counts.shape, bool)
    elif isinstance(valid, (int, np.integer)):
        mask = np.zeros(counts.shape, bool)
        mask[:valid] = True
    else:
        mask = valid
    bad = np.argwhere((counts != 1) & mask)
    assert bad.size == 0, (bad[:5], counts[tuple(bad[0])] if bad.size else None)
    assert (counts[~mask] == 0).all()


def run_device(kernel, args, core_num, **launch_options):
    """Launch through DeviceGemm and check that every cross-core and intra-core flag set was consumed."""
    op = DeviceGemm(kernel)
    op.initialize(args)
    result = op.run(core_num, **launch_options)
    assert result.unconsumed_flags == []
    assert getattr(result, "unconsumed_intra_core_flags", []) == []
    return result
