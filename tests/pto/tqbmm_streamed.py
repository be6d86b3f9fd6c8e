"""pypto-gym's large transpose_quant_batch_matmul configurations run M-chunk by M-chunk (streamed).

Each output row m depends only on x1[m], x1_scale[m] and the whole of x2 / x2_scale, so the operator runs on
``chunk`` rows at a time against the same x2: inputs for the chunk are drawn (make_inputs' distributions, a seed per
chunk; x2 and its scales once), the simulated kernel and the golden run on the chunk, the results are compared with
the seed test's rtol = atol = 1e-3, and everything is dropped before the next chunk. Peak memory is then a few chunks'
worth instead of the 4 GiB fp16 output of M = 32768 (and its float32 golden).

``python tqbmm_streamed.py M`` prints the number of rows checked and the process's own peak RSS in bytes.
"""

from __future__ import annotations

import gc
import resource
import sys
from pathlib import Path

import numpy as np

from catlass_py import golden
from catlass_py.ops import transpose_quant_batch_matmul
from catlass_py.ops.transpose_quant_batch_matmul import make_inputs

RTOL = ATOL = 1e-3


def _compare(out, want, m0):
    rows, batch = out.shape[:2]
    for b in range(batch):  # batch by batch: assert_allclose on the whole chunk would need GiBs of temporaries
        got_b, want_b = out[:, b].astype(np.float32), want[:, b].astype(np.float32)
        bad = ~(np.abs(got_b - want_b) <= ATOL + RTOL * np.abs(want_b))
        if bad.any():
            r, c = np.argwhere(bad)[0]
            raise AssertionError(f"rows {m0}..{m0 + rows}, batch {b}: {int(bad.sum())} elements beyond rtol = "
                                 f"atol = {RTOL}; first at row {m0 + r}, col {c}: {got_b[r, c]} vs {want_b[r, c]}")


def run(m: int, k: int = 128, n: int = 512, batch: int = 128, *, in_dtype="float8_e4m3fn", out_dtype="float16",
        perm_x2=(0, 1, 2), chunk: int = 2048, seed: int = 4) -> int:
    """Check the operator against the golden for an M x B x K by B x K x N problem, ``chunk`` rows at a time;
    returns the number of rows checked."""
    _, x2, _, s2 = make_inputs(1, k, n, batch, in_dtype=in_dtype, out_dtype=out_dtype, perm_x2=perm_x2, seed=seed)
    done = 0
    for i, m0 in enumerate(range(0, m, chunk)):
        rows = min(chunk, m - m0)
        x1, _, s1, _ = make_inputs(rows, k, n, batch, in_dtype=in_dtype, out_dtype=out_dtype, perm_x2=perm_x2,
                                   seed=seed * 100003 + i + 1)
        out = transpose_quant_batch_matmul(x1, x2, s1, s2, perm_x2=perm_x2, out_dtype=out_dtype)
        want = golden.transpose_quant_batch_matmul(x1, x2, s1, s2, perm_x2=perm_x2, out_dtype=out_dtype)
        _compare(out, want, m0)
        done += rows
        del x1, s1, out, want
        gc.collect()  # the simulated launch leaves reference cycles holding the chunk's GM buffers
    return done


def peak_rss() -> int:
    """This process's own peak resident set size in bytes: Linux's ``VmHWM``. ``ru_maxrss`` is the fallback only: at
    ``exec`` Linux folds the resident peak of the process image being replaced - the parent's, for a child started
    by fork or vfork - into it, so a child of a 4 GiB pytest reports at least 4 GiB."""
    status = Path("/proc/self/status")
    if status.exists():
        return next(int(line.split()[1]) * 1024 for line in status.read_text().splitlines() if line.startswith("VmHWM:"))
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * (1 if sys.platform == "darwin" else 1024)


if __name__ == "__main__":
    rows = run(int(sys.argv[1]))
    print(rows, peak_rss())
