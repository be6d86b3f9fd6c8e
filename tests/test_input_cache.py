"""Tests of the on-disk input cache (catlass_py.data.cached_inputs) and its use by the examples."""

from __future__ import annotations

import dataclasses
import os
import time

import ml_dtypes
import numpy as np
import pytest

from catlass_py import data
from catlass_py.data import Example10Inputs, cache_dir, cache_max_bytes, cached_inputs, example10_inputs
from catlass_py.errors import ArgumentError

CALLS = []


def make_pair(m: int, n: int, *, scale: float = 1.0):
    """Deterministic inputs of several layouts and dtypes (counts its calls)."""
    CALLS.append((m, n))
    a = (np.arange(m * n, dtype=np.float32).reshape(m, n) * scale).astype(ml_dtypes.bfloat16)
    b = np.arange(2 * m * n, dtype=np.int8).reshape(2, n, m).swapaxes(1, 2)  # an axis-swapped view
    c = np.arange(n * m, dtype=np.int64).reshape(n, m).T  # column-major
    return a, b, c


def make_dataclass(g, m, n, k):
    CALLS.append((g, m, n, k))
    return example10_inputs(g, m, n, k)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("CATLASS_PY_CACHE", "1")
    monkeypatch.setenv("CATLASS_PY_CACHE_DIR", str(d))
    monkeypatch.delenv("CATLASS_PY_CACHE_MAX_BYTES", raising=False)
    CALLS.clear()
    return d


def entries(d):
    return sorted(p for p in d.iterdir() if data._CACHE_ENTRY_NAME.fullmatch(p.name)) if d.exists() else []


def same(x, y):
    assert type(x) is type(y)
    for u, v in zip(x, y) if isinstance(x, tuple) else zip(dataclasses.astuple(x), dataclasses.astuple(y)):
        assert u.dtype == v.dtype and u.shape == v.shape and u.strides == v.strides
        assert np.array_equal(u.view(np.uint8) if u.flags.c_contiguous else u.copy().view(np.uint8),
                              v.view(np.uint8) if v.flags.c_contiguous else v.copy().view(np.uint8))


def test_miss_then_hit_same_bits_dtypes_and_strides(cache):
    first, hit = cached_inputs("ex", make_pair, 3, 5, scale=0.5)
    assert not hit and CALLS == [(3, 5)] and len(entries(cache)) == 1
    again, hit = cached_inputs("ex", make_pair, 3, 5, scale=0.5)
    assert hit and CALLS == [(3, 5)]
    same(first, again)
    assert again[0].dtype == ml_dtypes.bfloat16
    assert again[2].flags.f_contiguous and not again[2].flags.c_contiguous
    # other arguments, example or keyword: other entries
    assert not cached_inputs("ex", make_pair, 3, 6, scale=0.5)[1]
    assert not cached_inputs("other", make_pair, 3, 5, scale=0.5)[1]
    assert not cached_inputs("ex", make_pair, 3, 5, scale=0.25)[1]
    assert not cached_inputs("ex", make_pair, 3, 5, scale=0.5, data_seed=7)[1]
    assert len(entries(cache)) == 5 and len(CALLS) == 5


def test_dataclass_value_and_fresh_copies(cache):
    v, hit = cached_inputs("10", make_dataclass, 4, 16, 8, 32)
    assert not hit
    w, hit = cached_inputs("10", make_dataclass, 4, 16, 8, 32)
    assert hit and isinstance(w, Example10Inputs) and len(CALLS) == 1
    same(v, w)
    w.a[:] = 0  # a cached value is the caller's to modify
    x, hit = cached_inputs("10", make_dataclass, 4, 16, 8, 32)
    assert hit and np.array_equal(x.a, v.a) and x.a.any()


def test_generator_version_is_part_of_the_key(cache, monkeypatch):
    cached_inputs("ex", make_pair, 2, 2)
    monkeypatch.setattr(data, "GENERATOR_VERSION", data.GENERATOR_VERSION + 1)
    assert not cached_inputs("ex", make_pair, 2, 2)[1]
    assert len(entries(cache)) == 2


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty", "other_key"])
def test_damaged_entry_is_regenerated(cache, damage):
    first, _ = cached_inputs("ex", make_pair, 40, 30)
    (path,) = entries(cache)
    raw = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(raw[: len(raw) // 2])
    elif damage == "flip":  # a bit inside array data: the zip CRC catches it
        i = raw.index(b"a2.npy") + 400
        path.write_bytes(raw[:i] + bytes([raw[i] ^ 0x10]) + raw[i + 1:])
    elif damage == "garbage":
        path.write_bytes(os.urandom(len(raw)))
    elif damage == "empty":
        path.write_bytes(b"")
    else:  # a valid entry of another key under this name
        other = cache / "x"
        os.environ["CATLASS_PY_CACHE_DIR"] = str(other)
        cached_inputs("ex", make_pair, 4, 4)
        os.environ["CATLASS_PY_CACHE_DIR"] = str(cache)
        (entries(other)[0]).replace(path)
    value, hit = cached_inputs("ex", make_pair, 40, 30)
    assert not hit
    same(first, value)
    value, hit = cached_inputs("ex", make_pair, 40, 30)  # rewritten, valid again
    assert hit
    same(first, value)


def test_disabled_and_bad_switch(cache, monkeypatch):
    for word in ("0", "false", "OFF", "no"):
        monkeypatch.setenv("CATLASS_PY_CACHE", word)
        assert cache_dir() is None
        assert cached_inputs("ex", make_pair, 2, 3) [1] is False
    assert not cache.exists() and len(CALLS) == 4
    monkeypatch.setenv("CATLASS_PY_CACHE", "maybe")
    with pytest.raises(ArgumentError, match="CATLASS_PY_CACHE"):
        cached_inputs("ex", make_pair, 2, 3)


def test_directory_resolution(monkeypatch, tmp_path):
    monkeypatch.delenv("CATLASS_PY_CACHE", raising=False)
    monkeypatch.setenv("CATLASS_PY_CACHE_DIR", str(tmp_path / "explicit"))
    assert cache_dir() == tmp_path / "explicit"
    monkeypatch.delenv("CATLASS_PY_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "catlass_py"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "catlass_py"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_dir() == tmp_path / "home" / ".cache" / "catlass_py"


def test_size_bound_evicts_least_recently_used(cache, monkeypatch):
    cache.mkdir()
    foreign = cache / "someone_elses.npz"  # not named like an entry: never evicted
    foreign.write_bytes(b"x" * 100_000)
    os.utime(foreign, (1, 1))
    cached_inputs("ex", make_pair, 100, 100)
    size = entries(cache)[0].stat().st_size  # entries of make_pair(100, n) differ by a few bytes
    monkeypatch.setenv("CATLASS_PY_CACHE_MAX_BYTES", str(int(2.5 * size)))
    time.sleep(0.02)
    cached_inputs("ex", make_pair, 100, 101)
    time.sleep(0.02)
    assert cached_inputs("ex", make_pair, 100, 100)[1]  # used again: now the most recent
    time.sleep(0.02)
    cached_inputs("ex", make_pair, 100, 102)  # over the bound: (100, 101) goes
    assert len(entries(cache)) == 2
    assert cached_inputs("ex", make_pair, 100, 100)[1]
    assert cached_inputs("ex", make_pair, 100, 102)[1]
    assert not cached_inputs("ex", make_pair, 100, 101)[1]
    monkeypatch.setenv("CATLASS_PY_CACHE_MAX_BYTES", "1K")  # an entry larger than the bound is not stored
    before = entries(cache)
    assert not cached_inputs("ex", make_pair, 100, 103)[1]
    assert entries(cache) == before
    assert foreign.exists()


def test_example_name_is_sanitised_in_the_file_name(cache):
    cached_inputs("../odd name/ü", make_pair, 2, 2)
    (path,) = entries(cache)
    assert path.parent == cache and path.name.startswith(".._odd_name__-")
    assert cached_inputs("../odd name/ü", make_pair, 2, 2)[1]


def test_size_bound_parsing(monkeypatch):
    monkeypatch.delenv("CATLASS_PY_CACHE_MAX_BYTES", raising=False)
    assert cache_max_bytes() == 2 << 30
    for text, value in (("12345", 12345), ("3K", 3072), ("5m", 5 << 20), ("2G", 2 << 30)):
        monkeypatch.setenv("CATLASS_PY_CACHE_MAX_BYTES", text)
        assert cache_max_bytes() == value
    for bad in ("lots", "1.5G", "-3", "G"):
        monkeypatch.setenv("CATLASS_PY_CACHE_MAX_BYTES", bad)
        with pytest.raises(ArgumentError, match="CATLASS_PY_CACHE_MAX_BYTES"):
            cache_max_bytes()


def test_a_bad_size_bound_is_refused_on_a_hit_too(cache, monkeypatch):
    cached_inputs("ex", make_pair, 3, 5)
    monkeypatch.setenv("CATLASS_PY_CACHE_MAX_BYTES", "lots")
    with pytest.raises(ArgumentError, match="CATLASS_PY_CACHE_MAX_BYTES"):
        cached_inputs("ex", make_pair, 3, 5)


def test_no_temporary_files_left_and_stale_ones_removed(cache):
    cache.mkdir()
    stale = cache / ".tmp-dead.npz"
    stale.write_bytes(b"partial")
    old = time.time() - 7200
    os.utime(stale, (old, old))
    fresh = cache / ".tmp-writing.npz"  # another process may be writing it
    fresh.write_bytes(b"partial")
    cached_inputs("ex", make_pair, 5, 5)
    names = sorted(p.name for p in cache.iterdir())
    assert ".tmp-dead.npz" not in names and ".tmp-writing.npz" in names
    assert sum(n.endswith(".npz") and not n.startswith(".tmp-") for n in names) == 1


def test_unusable_directory_or_value_just_calls_make(cache, monkeypatch, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("CATLASS_PY_CACHE_DIR", str(blocker / "cache"))
    for _ in range(2):
        value, hit = cached_inputs("ex", make_pair, 2, 2)
        assert not hit and len(value) == 3
    monkeypatch.setenv("CATLASS_PY_CACHE_DIR", str(cache))
    for _ in range(2):  # not a value of arrays / an argument that cannot be keyed
        assert cached_inputs("ex", lambda: {"a": np.zeros(2)})[1] is False
        assert cached_inputs("ex", lambda x: x, np.zeros(3))[1] is False
        assert cached_inputs("ex", lambda: np.zeros((4, 4))[:, ::2])[1] is False  # strided: layout not kept
    assert entries(cache) == []


def test_example_result_says_when_inputs_came_from_the_cache(cache):
    from catlass_py.cli import load_script

    ex = load_script("00_basic_matmul")
    first = ex.run(["64", "48", "40"], cores=2)
    second = ex.run(["64", "48", "40"], cores=2)
    assert first.passed and second.passed
    assert first.inputs_cached is False and second.inputs_cached is True
    assert first.output_digest == second.output_digest
    assert second.to_json()["inputs_cached"] is True


def test_cli_json_and_summary_say_when_inputs_came_from_the_cache(cache, capsys):
    import json

    from catlass_py import cli

    argv = ["run", "10", "3", "40", "64", "32", "--cores", "2"]
    assert cli.main(argv + ["--json"]) == 0
    assert json.loads(capsys.readouterr().out)["inputs_cached"] is False
    assert cli.main(argv + ["--json"]) == 0
    assert json.loads(capsys.readouterr().out)["inputs_cached"] is True
    assert cli.main(argv) == 0
    assert "from the input cache" in capsys.readouterr().out


def test_bad_switch_is_a_clear_cli_error(cache, monkeypatch, capsys):
    from catlass_py import cli

    monkeypatch.setenv("CATLASS_PY_CACHE", "perhaps")
    assert cli.main(["run", "10", "3", "40", "64", "32", "--cores", "2"]) == 2
    assert "CATLASS_PY_CACHE" in capsys.readouterr().err
