"""Host-side helpers the example scripts share that ``catlass_py.data`` does not cover (not an example).

:func:`fill_random_fp16_t` reproduces ``golden::FillRandomData<fp16_t>(host, fp16_t low, fp16_t high)`` of
examples 05 and 08, where the random value itself is computed in CANN's ``op::fp16_t`` arithmetic
(``hicann/opbase``, ``src/nnopbase/common/utils/fp16_t.cpp``):

* ``fp16_t(rand())`` rounds the int to nearest even and becomes +inf from 65520 up (almost always);
* ``fp16_t(RAND_MAX)`` is therefore +inf, and ``fp16Div`` only aligns the two mantissas, so
  ``inf / inf == 1`` and ``x / inf == x / 65536`` (the float ratio converted back to fp16_t);
* then ``low + q * (high - low)`` in fp16_t (taken here as IEEE half with round-to-nearest-even).

So nearly every value equals ``high`` (5.0 for the examples): the data is real CATLASS behaviour, not a
simulation artefact. Values from ``rand() < 4`` (fp16 subnormal quotients) are not modelled bit-exactly.
"""

from __future__ import annotations

import numpy as np

from catlass_py import data


def fill_random_fp16_t(rng: data.GlibcRand, n: int, low: float, high: float) -> np.ndarray:
    """``n`` float16 values drawn like ``FillRandomData<fp16_t>(v, fp16_t(low), fp16_t(high))``."""
    r = rng.rand_array(n)
    with np.errstate(over="ignore"):
        x = r.astype(np.float64).astype(np.float16)  # fp16_t(int): RNE, inf from 65520 up
    q = np.where(np.isinf(x), np.float16(1.0), (x.astype(np.float32) / np.float32(65536.0)).astype(np.float16))
    lo, hi = np.float16(low), np.float16(high)
    span = np.float16(hi - lo)
    return (lo + (q * span).astype(np.float16)).astype(np.float16)


__all__ = ["fill_random_fp16_t"]
