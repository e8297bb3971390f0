"""Instance files are written one matrix row per line and read back exactly."""

import json

import numpy as np

from headprompt.models.generate.generators import random_exact_hmm
from headprompt.models.hmm.files import dumps_rows, load_instance, save_instance


def test_one_row_per_line_and_an_exact_round_trip(tmp_path):
    hmm = random_exact_hmm(6, 4, rng=np.random.default_rng(3), max_denominator=100, density=0.6).with_task(
        [1, -1, 0, 2, "1/3", -3])
    path = tmp_path / "h.json"
    save_instance(hmm, path, witness={"theorem": "3.3", "b": ["1/2", "-1", "0", "3"]}, meta={"seed": 3})
    text = path.read_text()
    lines = text.splitlines()
    # every row of A (6) and W (4) is one line holding all of its entries
    for matrix in (hmm.A, hmm.W):
        for row in matrix:
            assert any(json.loads(line.strip().rstrip(",")) == [str(v) if v.denominator != 1 else str(v)
                                                                for v in row]
                       for line in lines if line.strip().startswith("["))
    assert len(lines) < 6 + 4 + 20                          # not one number per line (that was 80+)
    back = load_instance(path)
    assert all((back.A == hmm.A).ravel()) and all((back.W == hmm.W).ravel()) and all((back.mu == hmm.mu).ravel())
    assert json.loads(text)["witness"]["b"] == ["1/2", "-1", "0", "3"]


def test_dumps_rows_is_plain_json_for_any_nesting():
    value = {"a": [[[1, 2], [3, 4]], [[5, 6], [7, 8]]], "b": [], "c": {}, "d": "x", "e": [1, "2/3"]}
    assert json.loads(dumps_rows(value)) == value
