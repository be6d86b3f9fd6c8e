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


def test_a_user_scripts_own_error_is_one_line_naming_its_line(raiser, tmp_path, capsys):
    line = _SCRIPT.splitlines().index("    raise AssertionError(what)") + 1
    cases = [([raiser, "other"], f"error: example: {raiser}: run() raised AssertionError: other (line {line})")]
    for name, text, expect in [
        ("returns.py", "def run(argv, **kw):\n    return 42\n", "run() returned int, not the ExampleResult"),
        ("imports.py", "import no_such_module_here\ndef run(argv, **kw):\n    pass\n",
         "failed to load: ModuleNotFoundError: No module named 'no_such_module_here' (line 1)"),
        ("syntax.py", "def run(argv, **kw)\n    pass\n", "failed to load: SyntaxError: expected ':' (line 1)"),
        ("top.py", "x = 1\ny = 1 / 0\n", "failed to load: ZeroDivisionError: division by zero (line 2)"),
        ("imports_bad.py", '"""doc"""\nimport bad_helper\n', "failed to load: SyntaxError: invalid syntax ("
         f"{tmp_path / 'bad_helper.py'}, line 1) (imported at line 2)"),
    ]:
        path = tmp_path / name
        path.write_text(text)
        cases.append(([str(path)], expect))
    (tmp_path / "bad_helper.py").write_text("def f(:\n    pass\n")
    for argv, expect in cases:
        assert cli.main(["run", *argv]) == 2
        err = capsys.readouterr().err
        assert expect in err and err.startswith("error: example: ") and err.count("\n") == 1, err


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


# -- a new user's review: checks before the run, one-line errors, the real reason first --------------------

import os  # noqa: E402
import pathlib  # noqa: E402
import re  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

from catlass_py import runner  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _no_simulation(monkeypatch):
    """Make loading an example, a tuner sweep or a calibration prediction fail the test: checks come first."""
    import catlass_py.calibration.command as calibration_command
    import catlass_py.tune.command as tune_command

    def boom(*args, **kwargs):
        raise AssertionError("something ran although an argument was bad")

    for module, name in ((cli, "load_script"), (runner, "load_script"), (tune_command, "sweep"),
                         (calibration_command, "predict")):
        monkeypatch.setattr(module, name, boom)


def _example_must_not_run(monkeypatch, name="00"):
    def boom(argv, *, cores=None, seed=None, observers=(), progress=None, options=None, config=None):
        raise AssertionError("the simulation ran")

    monkeypatch.setattr(cli.load_script(name), "run", boom)


@pytest.mark.parametrize("argv, option", [
    (["run", "00", "16", "16", "16", "--timeline"], "--timeline"),
    (["tune", "00", "16", "16", "16", "--plot"], "--plot"),
    (["calibrate", "--points", "T01", "--plot"], "--plot"),
])
def test_a_picture_format_matplotlib_cannot_write_fails_before_anything_runs(argv, option, tmp_path, monkeypatch,
                                                                             capsys):
    pytest.importorskip("matplotlib")
    _no_simulation(monkeypatch)
    path = str(tmp_path / "out.txt")
    assert cli.main([*argv, path]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {option}: cannot draw {path!r}: matplotlib does not write '.txt' files "
                          "(supported: ") and ".png" in err and ".svg" in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "out.txt").exists()


def test_an_incompatible_arch_is_the_first_complaint_of_run_and_tune(monkeypatch, capsys):
    _example_must_not_run(monkeypatch)
    import catlass_py.tune.command as tune_command

    monkeypatch.setattr(tune_command, "sweep", lambda *a, **k: (_ for _ in ()).throw(AssertionError("swept")))
    message = "error: --arch: Ascend950 (arch_code 3510) cannot time a kernel built for AtlasA2 (arch_code 2201)\n"
    for argv in (["run", "00", "64", "64", "64", "--arch", "Ascend950"],
                 ["run", "00", "64", "64", "64", "--arch", "Ascend950", "--cores", "4"],
                 ["tune", "00", "64", "64", "64", "--arch", "Ascend950"]):
        assert cli.main(argv) == 2, argv
        assert capsys.readouterr().err == message, argv


def test_tune_refuses_too_many_cores_up_front_as_run_does(monkeypatch, capsys):
    _example_must_not_run(monkeypatch)
    import catlass_py.tune.command as tune_command

    monkeypatch.setattr(tune_command, "sweep", lambda *a, **k: (_ for _ in ()).throw(AssertionError("swept")))
    message = ("error: --cores: expected a count in 1..24 (AtlasA2 AI cores, which 00_basic_matmul's kernel is built "
               "for), got 1000\n")
    assert cli.main(["tune", "00", "64", "64", "64", "--cores", "1000"]) == 2
    assert capsys.readouterr().err == message
    assert cli.main(["run", "00", "64", "64", "64", "--cores", "1000"]) == 2
    assert capsys.readouterr().err == message


@pytest.mark.parametrize("argv, option", [
    (["run", "00", "64", "64", "64", "--cores", "0"], "--cores"),
    (["run", "00", "64", "64", "64", "--seed", "x"], "--seed"),
    (["run", "00", "64", "64", "64", "--seeds", "-2"], "--seeds"),
    (["tune", "00", "64", "64", "64", "--jobs", "0"], "--jobs"),
    (["tune", "00", "64", "64", "64", "--top", "0"], "--top"),
    (["tune", "00", "64", "64", "64", "--limit", "0"], "--limit"),
])
def test_option_errors_are_one_line_without_the_usage_block(argv, option, monkeypatch, capsys):
    _no_simulation(monkeypatch)
    assert cli.main(argv) == 2  # argparse's usage-error status, README's "bad arguments"
    err = capsys.readouterr().err
    assert err.startswith(f"error: argument {option}: expected ") and err.count("\n") == 1, err
    assert err.rstrip().endswith(f"(see catlass-py {argv[0]} --help)") and "usage:" not in err


@pytest.mark.parametrize("extra, token", [(["--foo"], "--foo"), (["-c", "4"], "-c"), (["--dtype", "bf16"], "--dtype")])
def test_an_unknown_option_is_named(extra, token, monkeypatch, capsys):
    _example_must_not_run(monkeypatch)
    assert cli.main(["run", "00", "64", "64", "64", *extra]) == 2
    assert capsys.readouterr().err == f"error: unknown option {token} (see catlass-py run 00_basic_matmul --help)\n"


def test_example_45_names_a_bad_layout_word(capsys):
    assert cli.main(["run", "45", "2", "64", "64", "64", "0", "64", "64", "64", "4096", "4096", "4096", "row",
                     "foo"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: layoutB: expected row or col (any case), got 'foo' (usage: 45_strided_batched") \
        and err.count("\n") == 1


def test_a_policy_lists_only_the_fields_its_constructor_takes(monkeypatch, capsys):
    _example_must_not_run(monkeypatch)
    assert cli.main(["run", "00", "64", "64", "64", "--set", "dispatch_policy=MmadAtlasA2Pingpong(l1_stages=3)"]) == 2
    assert capsys.readouterr().err.endswith(
        "MmadAtlasA2Pingpong has no field l1_stages (fields: enable_unit_flag)\n")
    assert cli.main(["run", "00", "64", "64", "64", "--set", "dispatch_policy=MmadAtlasA2Pingpong(STAGES=3)"]) == 2
    assert capsys.readouterr().err.endswith("MmadAtlasA2Pingpong has no field STAGES (fields: enable_unit_flag)\n")
    from catlass_py.arch import ATLAS_A2
    from catlass_py.assemblies.settings import POLICY
    from catlass_py.gemm import MmadAtlasA2Pingpong

    policy = MmadAtlasA2Pingpong(enable_unit_flag=True)
    assert POLICY.show(policy) == "MmadAtlasA2Pingpong(enable_unit_flag=true)"
    assert POLICY.parse(POLICY.show(policy), ATLAS_A2) == policy


def test_timeline_cores_are_checked_against_the_default_cores_before_the_run(tmp_path, monkeypatch, capsys):
    pytest.importorskip("matplotlib")
    _example_must_not_run(monkeypatch)
    png = str(tmp_path / "t.png")
    assert cli.main(["run", "00", "64", "64", "64", "--timeline", png, "--timeline-cores", "30"]) == 2
    assert capsys.readouterr().err == ("error: --timeline-cores: the run has AI cores 0..23 (every AI core of "
                                       "AtlasA2), got core 30\n")
    assert cli.main(["run", "00", "64", "64", "64", "--timeline", png, "--timeline-cores", "20", "--arch",
                     "Ascend910B3"]) == 2
    assert "0..19 (every AI core of Ascend910B3), got core 20" in capsys.readouterr().err


def test_a_bad_line_of_a_shapes_file_is_named(tmp_path, monkeypatch, capsys):
    import catlass_py.tune.command as tune_command

    monkeypatch.setattr(tune_command, "sweep", lambda *a, **k: (_ for _ in ()).throw(AssertionError("swept")))
    shapes = tmp_path / "shapes.txt"
    shapes.write_text("# m n k\n64 64 64\n\n64 64\n")
    assert cli.main(["tune", "00", "--shapes", str(shapes)]) == 2
    assert capsys.readouterr().err == f"error: --shapes: {shapes} line 4: usage: 00_basic_matmul m n k [device_id]\n"


def test_an_l1_tile_alone_is_told_to_set_the_l0_tile_too(capsys):
    assert cli.main(["run", "00", "64", "64", "64", "--set", "l1_tile=64x128x128"]) == 2
    err = capsys.readouterr().err
    assert "L1 and L0 tiles must agree on M and N" in err
    assert err.endswith("L0 (128, 256, 64) (l0_tile is not set and stays 128x256x64: set l0_tile too)\n")
    # both tiles given: no hint; a library user of the assembly gets the assembly's message as it is
    assert cli.main(["run", "00", "64", "64", "64", "--set", "l1_tile=64x128x128", "--set", "l0_tile=128x256x64"]) == 2
    assert "set l0_tile too" not in capsys.readouterr().err
    from catlass_py.assemblies.basic_matmul import assemble
    from catlass_py.errors import ConfigError
    from catlass_py.gemm import GemmShape

    with pytest.raises(ConfigError) as info:
        assemble(l1_tile=GemmShape(64, 128, 128))
    assert "l0_tile" not in str(info.value) and "--set" not in str(info.value)


@pytest.mark.parametrize("argv", [["list", "--json"], ["list"], ["run", "00", "16", "16", "16"]])
def test_a_closed_stdout_ends_the_command_quietly_with_141(argv):
    proc = subprocess.Popen([sys.executable, "-m", "catlass_py", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={**os.environ, "CATLASS_PY_CACHE": "0"})
    proc.stdout.close()  # the reader is gone before anything is written (| head that already exited)
    err = proc.stderr.read()
    assert proc.wait() == 141 and err == b""


def test_the_detect_races_help_says_what_it_checks(capsys):
    assert cli.main(["run", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "global memory and every on-chip buffer; from two cores or two pipes of one core" in text
    assert "GM accesses of different cores" not in text


def test_readme_cli_synopsis_and_example_table_match_the_cli():
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Command line"):readme.index("## Supported kernels")]
    synopsis = section[:section.index("```\n", section.index("```text") + 7)]
    run_line = synopsis[synopsis.index("catlass-py run 10_"):synopsis.index("catlass-py run path/")]
    assert "[--arch NAME]" in run_line and "[--arch NAME]" in synopsis[synopsis.index("catlass-py tune"):]
    usage = cli.script_info("45")["usage"]
    assert f"`catlass-py run 45_strided_batched_matmul_tla {usage}`" in readme
    assert "MYPYPATH=" in readme and "--follow-imports=silent" in readme
    assert "exits 141" in readme or "with 141" in readme


def test_a_copied_example_with_a_new_name_runs_as_a_script(tmp_path):
    source = (ROOT / "examples" / "00_basic_matmul.py").read_text()
    script = tmp_path / "my_kernel.py"
    script.write_text(re.sub(r'^NAME = "00_basic_matmul"$', 'NAME = "my_kernel"', source, count=1, flags=re.MULTILINE))
    out = subprocess.run([sys.executable, str(script), "16", "16", "16", "--json"], capture_output=True, text=True,
                         cwd=tmp_path, env={**os.environ, "CATLASS_PY_CACHE": "0"}, check=False)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["example"] == "my_kernel" and result["passed"] is True
