"""The sweep as Ray tasks gives exactly the local sweep's table. The real tests start a local Ray instance
(``ray.init(num_cpus=2)``; the ``distributed`` extra) and are ``slow`` (starting Ray takes longer than the rest of
a test); they skip when Ray is not installed. The fast tests check the executor's plumbing with a stand-in
``ray`` module and the message when Ray is missing."""

from __future__ import annotations

import json
import sys
import types

import pytest

from catlass_py import cli
from catlass_py.errors import ArgumentError
from catlass_py.runner import load_script
from catlass_py.tune import Ranking, RayExecutor, SearchSpace, SerialExecutor, TileRange, sweep
from catlass_py.tune.space import Problem

EX00 = "00_basic_matmul"
SPACE = SearchSpace("ray", "test", TileRange((64, 128), (128, 256), (128, 128), (64, 64), step=64),
                    (("swizzle", ("3,0", "3,1")),), problem=lambda a: Problem(*a[:3]))
SHAPES = [["200", "520", "384"], ["96", "300", "128"]]


def _table(rows, top=5):
    ranking = Ranking(top)
    for r in rows:
        ranking.add(r)
    return {shape: [(r.key, r.time_us, r.record["cycles"], r.record["bound_by"]) for r in ranking.table(shape)]
            for shape in ranking.shapes()}


def _fake_ray():
    """A stand-in for the parts of ``ray`` the executor uses: tasks run in this process when their results are
    fetched."""
    ray = types.ModuleType("ray")
    state = {"up": False, "calls": 0}

    class Ref:
        def __init__(self, fn, args):
            self.fn, self.args = fn, args

    def remote(fn):
        return types.SimpleNamespace(remote=lambda *a: Ref(fn, a))

    def get(refs):
        state["calls"] += len(refs)
        return [r.fn(*r.args) for r in refs]

    ray.is_initialized = lambda: state["up"]
    ray.init = lambda **kw: state.update(up=True, init=kw)
    ray.shutdown = lambda: state.update(up=False)
    ray.cluster_resources = lambda: {"CPU": 2.0}
    ray.remote, ray.get, ray.state = remote, get, state
    return ray


def test_ray_executor_plumbing_with_a_stand_in(monkeypatch):
    fake = _fake_ray()
    monkeypatch.setitem(sys.modules, "ray", fake)
    example = load_script(EX00)
    local = list(sweep(example, SHAPES[:1], SPACE, arch="AtlasA2", cores=6, executor=SerialExecutor(), limit=3))
    executor = RayExecutor(None, num_cpus=2)
    assert fake.state["up"] and fake.state["init"]["num_cpus"] == 2 and executor.workers == 2
    rows = list(sweep(example, SHAPES[:1], SPACE, arch="AtlasA2", cores=6, executor=executor, limit=3, batch=2))
    executor.close()
    assert not fake.state["up"] and fake.state["calls"] == 2  # 3 tasks in batches of 2
    assert _table(rows) == _table(local)


def test_missing_ray_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ArgumentError, match=r"pip install 'catlass-py\[distributed\]'"):
        RayExecutor(None)


def test_an_address_nothing_answers_at_is_a_clear_error_not_a_wait(monkeypatch):
    import socket

    fake = _fake_ray()
    monkeypatch.setitem(sys.modules, "ray", fake)
    with socket.socket() as listening:  # a port that answers, then one that does not (closed right after binding)
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        RayExecutor(f"127.0.0.1:{listening.getsockname()[1]}").close()
        assert fake.state["init"]["address"].startswith("127.0.0.1:")
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    fake.state.clear()
    fake.state["up"] = False
    for address in (f"127.0.0.1:{port}", f"ray://127.0.0.1:{port}"):
        with pytest.raises(ArgumentError, match=f"--ray {address}: nothing answers at 127.0.0.1:{port}"):
            RayExecutor(address)
    assert "init" not in fake.state  # refused before ray.init, which would retry for minutes
    fake.init = lambda **kw: (_ for _ in ()).throw(ConnectionError("no cluster found\nmore"))
    with pytest.raises(ArgumentError, match="--ray: cannot start on the cluster at auto: no cluster found$"):
        RayExecutor("auto")
    fake.init = lambda **kw: (_ for _ in ()).throw(TimeoutError())
    with pytest.raises(ArgumentError, match="--ray: cannot start on a local Ray instance: TimeoutError$"):
        RayExecutor(None)


@pytest.fixture(scope="module")
def local_ray():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        yield ray
    finally:
        ray.shutdown()


@pytest.mark.slow
def test_ray_sweep_returns_exactly_the_local_sweeps_table(local_ray):
    example = load_script(EX00)
    local = list(sweep(example, SHAPES, SPACE, arch="AtlasA2", cores=6, executor=SerialExecutor(), top=3))
    executor = RayExecutor(None)  # the instance the fixture started
    try:
        remote = list(sweep(example, SHAPES, SPACE, arch="AtlasA2", cores=6, executor=executor, top=3, batch=3))
    finally:
        executor.close()
    assert local_ray.is_initialized()  # not ours to shut down
    assert _table(remote, 3) == _table(local, 3) and len(_table(local, 3)) == 2
    # the same waves, so the same rows, pruned ones included, in the same order
    assert [(r.shape, r.key, r.source != "pruned", r.record.get("cycles")) for r in remote] == \
        [(r.shape, r.key, r.source != "pruned", r.record.get("cycles")) for r in local]


@pytest.mark.slow
def test_tune_command_on_ray(local_ray, capsys):
    args = ["tune", EX00, "200", "520", "384", "--space", "quick", "--limit", "6", "--cores", "6", "--json",
            "--no-verify"]
    assert cli.main([*args, "--jobs", "1"]) == 0
    local = json.loads(capsys.readouterr().out)
    assert cli.main([*args, "--ray"]) == 0
    remote = json.loads(capsys.readouterr().out)

    def strip(result):
        return [[(r["config"], r["time_us"], r["cycles"]) for r in s["top"]] for s in result["shapes"]]
    assert strip(remote) == strip(local) and len(strip(local)[0]) == 6
