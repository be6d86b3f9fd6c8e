"""The catlass-py command: list, run (summary and --json), bad arguments."""

import json

from catlass_py import cli


def test_list_shows_example_10(capsys):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    assert "10_grouped_matmul_slice_m_per_token_dequant" in out


def test_run_json_reports_the_catlass_verdict_and_the_split(capsys):
    rc = cli.main(["run", "10_grouped_matmul_slice_m_per_token_dequant", "4", "64", "256", "96", "--cores", "3", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert result["passed"] is True and result["error_count"] == 0 and result["verdict"] == "Compare success."
    assert len(result["blocks_per_core"]) == 3
    assert sum(result["blocks_per_core"]) == result["details"]["total_blocks"]
    assert result["seconds"] > 0 and result["max_abs_error"] >= 0
    assert result["details"]["bit_exact"] is True


def test_run_prints_compare_success_and_a_summary(capsys):
    # a trailing device_id is accepted like CATLASS's argv[5]
    assert cli.main(["run", "10", "2", "40", "64", "32", "0", "--cores", "2"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "Compare success."
    assert "blocks per core" in out


def test_bad_arguments_exit_2_with_usage(capsys):
    assert cli.main(["run", "10", "2", "40"]) == 2
    assert "usage: 10_grouped_matmul_slice_m_per_token_dequant problem_count m n k" in capsys.readouterr().err
    assert cli.main(["run", "10", "2", "40", "x", "32"]) == 2
    assert cli.main(["run", "no_such_example"]) == 2
    assert cli.main(["run", "10", "2", "40", "64", "32", "--cores", "99"]) == 2


# -- exit status, one-line errors, paths and integers checked up front ----------------------------------

import textwrap  # noqa: E402

import pytest  # noqa: E402

_SCRIPT = textwrap.dedent('''
    """A user script whose run() raises what the test asks for."""
    import numpy as np
    from catlass_py.arch import launch
    from catlass_py.errors import ConfigError

    NAME = "raiser"
    USAGE = "what"

    class Stuck:
        def aiv(self, ctx, params):
            ctx.cross_core_wait_flag(3)

    def run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None):
        what = argv[0]
        if what == "deadlock":
            launch(Stuck(), None, 1, observers=observers, options=options)
        if what == "memory":
            np.empty(1 << 62, np.uint8)
        if what == "os":
            open("/no/such/dir/input.bin")
        if what == "config":
            raise ConfigError("L1TileShape: M must be a positive int, got 0\\nsecond line")
        if what == "interrupt":
            raise KeyboardInterrupt
        raise AssertionError(what)
''')


@pytest.fixture
def raiser(tmp_path):
    path = tmp_path / "raiser.py"
    path.write_text(_SCRIPT)
    return str(path)


@pytest.mark.parametrize("what, status, first", [
    ("deadlock", 1, "DeadlockError: deadlock: every unfinished core waits"),
    ("memory", 2, "error: out of memory (Unable to allocate"),
    ("os", 2, "error: FileNotFoundError: [Errno 2] No such file or directory: '/no/such/dir/input.bin'"),
    ("config", 2, "error: ConfigError: L1TileShape: M must be a positive int, got 0; second line"),
    ("interrupt", 130, "interrupted"),
])
def test_errors_exit_with_a_status_and_no_traceback(raiser, capsys, what, status, first):
    assert cli.main(["run", raiser, what]) == status
    captured = capsys.readouterr()
    assert captured.err.startswith(first) and "Traceback" not in captured.err
    if status != 1:  # an error is one line; a finding keeps its whole message
        assert captured.err.count("\n") == 1
    else:
        assert captured.err.count("waits on flag 3 (counter 0)") == 2


def test_findings_exit_1_and_errors_exit_2():
    from catlass_py.errors import (
        AlignmentError, ArgumentError, CapacityError, ConfigError, DeadlockError, KernelError, OutOfBoundsError,
        RaceError, UnpairedFlagError,
    )

    inside_a_core = OutOfBoundsError("AIC 0: GM tensor 'a' ...")
    inside_a_core.core = "AIC0"
    memory_in_a_core = KernelError("AIV0.1 raised MemoryError")
    memory_in_a_core.__cause__ = MemoryError()
    findings = [RaceError("r"), UnpairedFlagError("u"), DeadlockError("d"), KernelError("k"), inside_a_core]
    errors = [ArgumentError("a"), ConfigError("c"), CapacityError("budget"), AlignmentError("x"), MemoryError(),
              OSError(13, "Permission denied"), memory_in_a_core]
    assert [cli.exit_status(e) for e in findings] == [1] * len(findings)
    assert [cli.exit_status(e) for e in errors] == [2] * len(errors)


@pytest.mark.parametrize("option", ["--trace", "--timeline"])
def test_an_unwritable_trace_or_timeline_path_fails_before_the_simulation(option, tmp_path, capsys, monkeypatch):
    def no_simulation(*args, **kwargs):
        raise AssertionError("the simulation ran")

    example = cli.load_script("00")
    monkeypatch.setattr(example, "run", no_simulation)
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    for path, message in (
            (tmp_path, f"expected a file path, got {str(tmp_path)!r} (a directory)"),
            (blocker / "out.json", f"cannot write {str(blocker / 'out.json')!r}: the directory {str(blocker)!r} "
                                   "is not a directory"),
            (tmp_path / "missing" / "out.json", f"cannot write {str(tmp_path / 'missing' / 'out.json')!r}: the "
                                                f"directory {str(tmp_path / 'missing')!r} does not exist")):
        assert cli.main(["run", "00", "16", "16", "16", option, str(path)]) == 2
        assert capsys.readouterr().err == f"error: {option}: {message}\n"
    assert not (tmp_path / "missing").exists()


def test_a_writable_trace_path_is_left_as_it_was_when_the_run_fails(tmp_path, capsys, raiser):
    trace = tmp_path / "t.json"
    assert cli.main(["run", raiser, "config", "--trace", str(trace)]) == 2
    assert not trace.exists()  # the up-front check created nothing


@pytest.mark.parametrize("argv", [
    ["run", "00", "1_28", "16", "16"], ["run", "00", "١٢٨", "16", "16"], ["run", "00", "16", " 16", "16"],
    ["run", "00", "16", "16", "16", "--cores", "1_0"], ["run", "00", "16", "16", "16", "--cores", "٢"],
    ["run", "00", "16", "16", "16", "--seed", "1_0"], ["run", "00", "16", "16", "16", "--seeds", "٣"],
])
def test_cli_integers_are_ascii_digits(argv, capsys):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "expected a decimal integer (ASCII digits)" in err and "Traceback" not in err
