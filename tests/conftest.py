"""Test-session settings: the on-disk input cache (catlass_py.data.cached_inputs) is off and points at a
private directory, so the suite (and the processes it starts) neither reads nor fills the user's cache;
cache tests turn it on with their own directories."""

from __future__ import annotations

import os
import shutil
import tempfile

_CACHE_DIR = tempfile.mkdtemp(prefix="catlass_py-test-cache-")
os.environ["CATLASS_PY_CACHE"] = "0"
os.environ["CATLASS_PY_CACHE_DIR"] = _CACHE_DIR


def pytest_unconfigure(config):
    shutil.rmtree(_CACHE_DIR, ignore_errors=True)
