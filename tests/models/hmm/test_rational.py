"""Numbers are ASCII only (issue 19): strings in instance files, Python values and flags that
Python's ``int()``/``Decimal()`` would read (other scripts' digits, underscores, spaces) are
refused in one line; the accepted grammar is checked against ``fractions.Fraction`` as oracle."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

import headprompt
from headprompt.models.exceptions import InputError
from headprompt.models.hmm.rational import to_fraction

REFUSED = [
    "\u0663",            # Arabic-Indic three: int() reads 3
    "\uff13/4",          # fullwidth three
    "1/\u0664",          # Arabic-Indic four as denominator
    "3_0",               # int() and Decimal() read 30
    "1 / 3",             # int() strips the spaces around the slash
    " 1/3",
    "1/3 ",
    "0.\u0665",
    "1e\uff13",
    "1_000.5",
    "inf",
    "NaN",
    "",
    "1/2/3",
    "0x10",
]


@pytest.mark.parametrize("text", REFUSED)
def test_non_ascii_or_loose_number_text_is_refused(text):
    with pytest.raises(InputError, match=r"^mu\[0\]: cannot read .* as a number: only ASCII digits") as info:
        to_fraction(text, name="mu[0]")
    assert "\n" not in str(info.value) and str(info.value).isascii()


@pytest.mark.parametrize("text", ["1/3", "-2/4", "+3", "0.25", ".5", "3.", "1e-3", "-1.5E+2", "007"])
def test_ascii_numbers_read_as_fraction_reads_them(text):
    assert to_fraction(text) == Fraction(text)


def _instance(**change):
    data = {"kind": "hmm", "A": [["1/2", "1/3"], ["1/2", "2/3"]], "W": [["3/4", "1/4"], ["1/4", "3/4"]],
            "pi0": ["1/2", "1/2"], "mu": ["1", "-1"]}
    data.update(change)
    return data


@pytest.mark.parametrize("change, where", [
    (dict(pi0=["\uff11/2", "1/2"]), "pi0"),
    (dict(mu=["1", "\u0661"]), "mu"),
    (dict(A=[["1 / 2", "1/3"], ["1/2", "2/3"]]), "A"),
    (dict(W=[["3/4", "1/4"], ["1/4", "7_5/100"]]), "W"),
])
def test_instance_files_refuse_non_ascii_numbers(tmp_path, change, where):
    path = tmp_path / "instance.json"
    path.write_text(json.dumps(_instance(**change), ensure_ascii=False), encoding="utf-8")
    with pytest.raises(InputError, match=rf"{where}.*cannot read .* as a number: only ASCII digits"):
        headprompt.load(path)


def test_the_same_file_with_ascii_numbers_loads(tmp_path):
    path = tmp_path / "instance.json"
    path.write_text(json.dumps(_instance()))
    hmm = headprompt.load(path)
    assert hmm.A[0, 1] == Fraction(1, 3) and list(hmm.mu) == [1, -1]


@pytest.mark.parametrize("argv, flag", [
    (["theorem", "3.3", "--hidden", "\uff13"], "--hidden"),
    (["theorem", "3.3", "--hidden", "2", "--samples", "1_000"], "--samples"),
    (["theorem", "3.3", "--seed", "\u0661"], "--seed"),
    (["theorem", "3.3", "--hidden", "2", "--rationalize", "nan"], "--rationalize"),
    (["symbolic", "--hidden", "2.0"], "--hidden"),
    (["explore", "--examples", " 3"], "--examples"),
])
def test_numeric_flags_are_ascii_only(argv, flag, capsys):
    """A flag that Python's int()/float() would read is refused by the parser: exit 2, one line."""
    from headprompt.verify.cli.main import main

    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"argument {flag}: expected" in err[0] and "ASCII digits 0-9" in err[0]
