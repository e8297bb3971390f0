"""A file that is not a certificate is told so before anything else is judged (issue 35 item
7: an instance file given to certcheck was refused for its decimal numbers, not for what it
is); a certificate is still read as before."""

import json
import subprocess
import sys


def _certcheck(path):
    proc = subprocess.run([sys.executable, "-m", "headprompt.certcheck", str(path)], capture_output=True, text=True)
    return proc.returncode, (proc.stdout + proc.stderr).strip()


def test_an_instance_file_is_not_a_certificate(tmp_path):
    inst = tmp_path / "inst.json"
    inst.write_text(json.dumps({"kind": "hmm", "A": [[0.5, 0.5], [0.5, 0.5]], "W": [[0.7, 0.2], [0.3, 0.8]],
                                "pi0": [0.5, 0.5], "mu": [1, -2]}))
    code, out = _certcheck(inst)
    assert code == 2 and out.splitlines() == [out]
    assert "not a certificate" in out and "instance file" in out and "JSON number" not in out


def test_other_json_is_not_a_certificate_and_a_nested_format_field_does_not_pass(tmp_path):
    other = tmp_path / "o.json"
    other.write_text(json.dumps({"results": [0.5]}))
    code, out = _certcheck(other)
    assert code == 2 and "not a certificate" in out and "instance" not in out
    nested = tmp_path / "n.json"                 # the field inside another object: still refused
    nested.write_text(json.dumps({"x": {"format": "headprompt-certificate"}}))
    code, out = _certcheck(nested)
    assert code == 2 and "not a headprompt-certificate file" in out


def test_a_certificate_verify_wrote_is_still_accepted(tmp_path):
    from headprompt.verify.cli.main import main

    cert = tmp_path / "c.json"
    assert main(["theorem", "3.6", "--hidden", "4", "--seed", "1", "--certificate", str(cert), "--json"]) == 0
    code, out = _certcheck(cert)
    assert code == 0 and out.startswith("accepted")
