"""Example 4.1 runs, verifies, and attends where the paper says it should."""

import runpy
import subprocess
import sys
from pathlib import Path

from headprompt.constructions.memory import theorem_43_witness
from headprompt.verify.checks.memory.check import check_sequences

from tests import oracle

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "example_41.py"


def load():
    return runpy.run_path(str(EXAMPLE), run_name="example_41")


def test_example_runs_and_verifies():
    lines = []
    mod = load()
    assert mod["main"]([], out=lines.append) == 0
    text = "\n".join(lines)
    assert "verdict: verified" in text
    assert "the cow in the pasture rolled on the grass [happily] ." in text
    assert "Assumption 4.2: holds" in text and "Assumption 3.2: holds" in text


def test_attention_sits_on_the_sentiment_words_and_matches_brute_force():
    mod = load()
    model = mod["build_model"]()
    w = theorem_43_witness(model)
    assert [mod["STATES"][h] for h in w.H_star] == ["sent:adverb", "sent:adjective"]
    tokens = mod["tokens_of"]("ran happily .")                  # short: brute force is 9^4 x 8 paths
    d = check_sequences(model, w, list(w.H_star), [tokens], keep=True).decisions[0]
    assert d.Z == (1,) and d.attended == (1,)
    post = oracle.memory_posterior(model, tokens, 2)          # brute force over memories and paths
    assert d.expected == int(post[0] >= post[1]) == d.got == 1


def test_example_script_exit_code():
    proc = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "attends to positions [9] (happily)" in proc.stdout
