"""``verify theorem --device`` and ``check(device=)``: the certified kernels on a torch device give
the numpy path's verdicts (every count, and which sequences the bound decided), on generated
instances of both paths and on the committed example instances; the report names the device;
``cuda`` without CUDA is one line and exit 2. Here the device is torch on the CPU; the same
comparison on a GPU is marked ``cuda``."""

from pathlib import Path

import pytest
import torch

import headprompt
from headprompt.models.exceptions import InputError
from headprompt.models.inference.device_messages import use_device
from headprompt.verify.cli.main import main

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples" / "counterexamples").glob("3.*.json"))
CASES = [pytest.param(dict(hidden=6, vocab=3, samples=300, length=5), id="dense-6"),
         pytest.param(dict(hidden=25, vocab=10, samples=300, length=8, seed=3), id="dense-25"),
         pytest.param(dict(hidden=1100, vocab=60, samples=200, length=6), id="large-1100")]
CUDA = [pytest.mark.cuda, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]


def _same_verdicts(a: dict, b: dict) -> None:
    for key in ("verdict", "mode", "labels", "witness", "identity", "counterexample", "vacuous"):
        assert a.get(key) == b.get(key), key
    assert a["sequences"] == b["sequences"]


@pytest.mark.parametrize("theorem", ["3.3", "3.6"])
@pytest.mark.parametrize("options", CASES)
def test_torch_kernels_give_the_numpy_verdicts(theorem, options):
    host = headprompt.check(None, theorem, mode="certified", **options).to_dict()
    with use_device(torch.device("cpu")):
        dev = headprompt.check(None, theorem, mode="certified", **options).to_dict()
    _same_verdicts(host, dev)
    assert host["device"] == "cpu"
    if host["sequences"] and host["sequences"]["checked"]:
        assert dev["device"] == "cpu (torch)"             # the kernel ran there


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_committed_examples_give_the_same_verdicts(path):
    host = headprompt.check(str(path), path.name[:3], mode="certified", samples=200, length=4).to_dict()
    with use_device(torch.device("cpu")):
        dev = headprompt.check(str(path), path.name[:3], mode="certified", samples=200, length=4).to_dict()
    _same_verdicts(host, dev)


@pytest.mark.skipif(torch.cuda.is_available(), reason="a machine without CUDA")
def test_cuda_without_cuda_is_one_line_and_exit_2(capsys):
    code = main(["theorem", "3.6", "--hidden", "5", "--samples", "20", "--device", "cuda"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip().count("\n") == 0 and "CUDA is not available" in err
    with pytest.raises(InputError, match="CUDA is not available"):
        headprompt.check(None, "3.6", hidden=5, samples=20, device="cuda")


def test_auto_and_cpu_name_the_device_in_text_and_json(capsys):
    assert main(["theorem", "3.6", "--hidden", "5", "--samples", "50", "--mode", "certified", "--device", "auto"]) == 0
    out = capsys.readouterr().out
    want = "cuda:" if torch.cuda.is_available() else "device: cpu"
    assert any(line.startswith("device: ") and want in line for line in out.splitlines())
    report = headprompt.check(None, "3.6", hidden=5, samples=50, mode="certified", device="cpu")
    assert report.to_dict()["device"] == "cpu"


@pytest.mark.parametrize("bad", ["gpu", "CUDA", None, 0])
def test_unknown_devices_are_refused(bad):
    with pytest.raises(InputError, match="device="):
        headprompt.check(None, "3.6", hidden=5, samples=20, device=bad)


@pytest.mark.parametrize("theorem", ["3.3", "3.6"])
@pytest.mark.parametrize("options", CASES)
@pytest.mark.parametrize("_", [pytest.param(None, marks=CUDA, id="cuda")])
def test_cuda_gives_the_cpu_verdicts(theorem, options, _):
    host = headprompt.check(None, theorem, mode="certified", **options).to_dict()
    dev = headprompt.check(None, theorem, mode="certified", device="cuda", **options).to_dict()
    _same_verdicts(host, dev)
    if host["sequences"] and host["sequences"]["checked"]:
        assert dev["device"].startswith("cuda:")


@pytest.mark.parametrize("_", [pytest.param(None, marks=CUDA, id="cuda")])
def test_cuda_passes_the_rounding_probe(_):
    from headprompt.models.inference.device_probe import probe_failures

    assert probe_failures(torch.device("cuda")) == []
