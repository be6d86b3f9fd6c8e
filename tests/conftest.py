"""Test-session settings: the on-disk input cache (catlass_py.data.cached_inputs) is off and points at a
private directory, so the suite (and the processes it starts) neither reads nor fills the user's cache;
cache tests turn it on with their own directories. Hypothesis draws the same examples on every run (its
``derandomize`` setting), so that a run on a clean checkout passes or fails the same way each time;
``HYPOTHESIS_PROFILE=explore`` draws new random examples instead."""

from __future__ import annotations

import os
import shutil
import tempfile

from hypothesis import settings

settings.register_profile("deterministic", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "deterministic"))

_CACHE_DIR = tempfile.mkdtemp(prefix="catlass_py-test-cache-")
os.environ["CATLASS_PY_CACHE"] = "0"
os.environ["CATLASS_PY_CACHE_DIR"] = _CACHE_DIR


def pytest_unconfigure(config):
    shutil.rmtree(_CACHE_DIR, ignore_errors=True)
