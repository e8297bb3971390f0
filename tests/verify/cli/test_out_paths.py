"""Output paths (`--out FILE`, `--certificate FILE`, `--out DIR`) are probed by writing before
any work: a full device, a folder that takes no files, a missing folder or a pipe with no
reader give one line and exit 2 without the run (found by an audit: `--out /dev/full` and
`--out /proc/x.json` were found unwritable only after the whole run)."""

import json
import os
import subprocess
import sys
import time

import pytest

from headprompt.models.exceptions import InputError
from headprompt.models.hmm.files import load_instance
from headprompt.verify.cli import theorem as theorem_cli
from headprompt.verify.cli.main import main
from headprompt.verify.runtime.output_paths import check_out_path

GOOD = {"kind": "hmm", "A": [[0.9, 0.2], [0.1, 0.8]], "W": [[0.7, "1/3"], [0.3, "2/3"]],
        "pi0": [0.5, 0.5], "mu": [1, -1]}

needs_full = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
needs_proc = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="no /proc here")


@pytest.fixture
def no_run(monkeypatch):
    """Fail the test if the theorem is ever run: the refusal must come first."""
    def boom(request):
        raise AssertionError("the theorem was run before the output path was refused")

    monkeypatch.setattr(theorem_cli, "run_theorem", boom)


def _one_line_2(capsys, argv, *fragments):
    start = time.perf_counter()
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    for f in fragments:
        assert f in err, err
    assert time.perf_counter() - start < 10
    return err


@needs_full
@pytest.mark.parametrize("flag", ["--out", "--certificate"])
def test_a_full_device_is_refused_before_the_run(flag, no_run, capsys):
    _one_line_2(capsys, ["theorem", "3.6", "--hidden", "4", "--vocab", "3", flag, "/dev/full"],
                f"{flag} /dev/full: cannot write", "No space left on device")


@needs_proc
def test_a_folder_that_takes_no_files_is_refused_before_the_run(no_run, capsys):
    # root passes os.access on /proc; only a write shows it takes no new files
    _one_line_2(capsys, ["theorem", "3.6", "--hidden", "4", "--out", "/proc/x.json"], "--out /proc/x.json")
    assert not os.path.exists("/proc/x.json")


def test_a_missing_folder_is_refused_before_the_run(tmp_path, no_run, capsys):
    target = tmp_path / "missing" / "x.json"
    _one_line_2(capsys, ["theorem", "3.6", "--hidden", "4", "--out", str(target)], "does not exist")
    assert not target.parent.exists()


@needs_full
@pytest.mark.parametrize("argv", [
    ["counterexample", "3.3", "--hidden", "5", "--out", "/dev/full"],
    ["explore", "3.3", "--out", "/dev/full"],
])
def test_every_out_file_command_probes(argv, capsys):
    _one_line_2(capsys, argv, "--out /dev/full: cannot write")


@needs_proc
def test_an_out_folder_under_proc_is_refused(capsys):
    _one_line_2(capsys, ["experiment", "fig3-left", "--out", "/proc/no/run"], "--out /proc/no/run: cannot write")


def test_a_pipe_with_no_reader_is_refused_not_waited_on(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    proc = subprocess.run([sys.executable, "-m", "headprompt.verify", "theorem", "3.6", "--hidden", "4",
                           "--out", str(fifo)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "a pipe with no reader" in proc.stderr, proc.stderr


def test_a_normal_out_still_writes_a_replayable_file(tmp_path, capsys):
    inst = tmp_path / "m.json"
    inst.write_text(json.dumps(GOOD))
    out = tmp_path / "saved.json"
    out.write_text("old content")                       # an existing file is replaced by the run's output
    code = main(["theorem", "3.6", "--hmm", str(inst), "--samples", "20", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    saved = json.loads(out.read_text())
    assert saved["witness"]["theorem"] == "3.6"
    assert load_instance(str(out)).A.tolist() == load_instance(str(inst)).A.tolist()
    capsys.readouterr()
    assert main(["theorem", "3.6", "--hmm", str(out), "--witness", str(out), "--samples", "20"]) == 0


def test_the_probe_changes_nothing(tmp_path):
    existing = tmp_path / "keep.json"
    existing.write_text("keep me")
    check_out_path(str(existing))
    assert existing.read_text() == "keep me"
    new = tmp_path / "new.json"
    check_out_path(str(new))
    assert not new.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["keep.json"]
    check_out_path(os.devnull)                          # a device that takes writes
    with pytest.raises(InputError, match="is a directory"):
        check_out_path(str(tmp_path))


def test_a_witness_too_large_for_npz_keeps_the_verdict(tmp_path, capsys):
    """A small generated model's exact witness needs numerators beyond int64, which a .npz file
    cannot hold: the run used to end in exit 2 after its proof. The instance is saved without the
    witness, the verdict keeps its exit code, a note on stderr says so, and replaying the file
    checks the same instance (the same verdict; the file holds no witness.* entry)."""
    import zipfile

    from headprompt.verify.cli.main import main as verify_main

    out = tmp_path / "small.npz"
    code = verify_main(["theorem", "3.6", "--hidden", "10", "--vocab", "10", "--out", str(out), "--json"])
    captured = capsys.readouterr()
    first = json.loads(captured.out)
    assert code == 0 and first["verdict"] == "verified"
    assert "without its witness" in captured.err and "int64" in captured.err
    assert not any(n.startswith("witness") for n in zipfile.ZipFile(out).namelist())
    code = verify_main(["theorem", "3.6", "--hmm", str(out), "--json"])
    again = json.loads(capsys.readouterr().out)
    assert code == 0 and again["verdict"] == "verified" and again["witness"] == first["witness"]


def test_an_instance_that_does_not_fit_npz_is_still_refused_with_its_witness(tmp_path):
    """The fallback drops only the witness: an instance whose own exact values need more than
    int64 is refused (LimitError, exit 2 on the command line), witness or not, and no file is
    left claiming to hold it."""
    from fractions import Fraction

    from headprompt.models.exceptions import LimitError
    from headprompt.models.hmm.values import HMM
    from headprompt.verify.reports.instances import save_checked_instance

    tiny = Fraction(1, 3 ** 45)                        # 3^45 > 2^63: no int64 denominator holds it
    hmm = HMM.create([[tiny, "1/2"], [1 - tiny, "1/2"]], [["1", "0"], ["0", "1"]], ["1/2", "1/2"], ["1", "-1"])
    path = tmp_path / "big.npz"
    with pytest.raises(LimitError, match="int64"):
        save_checked_instance(hmm, path, witness={"theorem": "3.3", "b": ["1", "-1"]})
    assert not path.exists()
