"""Host-side helpers of the example scripts (not an example). :func:`fill_random_fp16_t` now lives in
:mod:`catlass_py.data` with CATLASS's other host-data generators; it is re-exported here for old imports."""

from __future__ import annotations

from catlass_py.data import fill_random_fp16_t

__all__ = ["fill_random_fp16_t"]
