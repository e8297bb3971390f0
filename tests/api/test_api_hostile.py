"""The Python API under a hostile notebook user (found by an audit): bad input is a project
error (``HeadpromptError``, one line), never a ``TypeError``/``ZeroDivisionError``/leaked
warning; nothing is printed to stdout; plots work on the ``Agg`` backend."""

import warnings
from fractions import Fraction

import numpy as np
import pytest

import headprompt
from headprompt import HMM, InputError

pytestmark = pytest.mark.filterwarnings("error")

SMALL = dict(hidden=4, vocab=3, samples=30, length=3)


def _tiny_product_model():
    """Exact entries 1e-300 in A and 1e-320 in W: their float product underflows to 0."""
    A = [[Fraction(1) - Fraction(1, 10**300), "1/2", "1/3"], ["1e-300", "1/2", "1/3"], [0, 0, "1/3"]]
    W = [[Fraction(1) - Fraction(2, 10**320), "1/2", "1/4"], ["1e-320", "1/2", "1/4"], ["1e-320", 0, "1/2"]]
    return HMM.create(A, W, ["1/3"] * 3, [1, -1, "1/2"])


@pytest.mark.parametrize("mode", [None, "certified", "float"])
@pytest.mark.parametrize("theorem", ["3.3", "3.6"])
def test_entries_whose_product_underflows_are_checked_not_crashed(theorem, mode, capsys):
    # was ZeroDivisionError in the bound chain's guard (8 * 2^-1022 / (amin * wmin) ** every)
    # and a RuntimeWarning (log2 of 0) in the rescaling interval, on exact and float models
    report = headprompt.check(_tiny_product_model(), theorem, mode=mode, samples=40, length=4)
    assert report.to_dict()["verdict"] in ("verified", "refuted", "assumptions-fail")
    assert report.rows()
    assert capsys.readouterr().out == ""


def test_hmmlearn_fit_with_near_zero_probabilities_in_float_mode(capsys):
    hmm_mod = pytest.importorskip("hmmlearn.hmm")
    model = hmm_mod.CategoricalHMM(n_components=3, random_state=0, n_iter=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(np.random.default_rng(0).integers(0, 4, size=(200, 1)))
    t = model.transmat_.copy()
    t[0] = [1 - 2e-300, 1e-300, 1e-300]
    e = model.emissionprob_.copy()
    e[1] = [1 - 3e-320, 1e-320, 1e-320, 1e-320]
    model.transmat_, model.emissionprob_ = t, e
    hmm = HMM.from_hmmlearn(model, start="h0", mu=[1, -1, 0.5])
    report = headprompt.check(hmm, "3.6", mode="float", samples=50, length=3)
    assert report.verdict.endswith("(uncertified)") and not report.proven
    assert capsys.readouterr().out == ""


def test_rescale_interval_and_guard_on_an_underflowing_product():
    from headprompt.models.inference.bounds import _guard
    from headprompt.models.inference.floats import rescale_interval

    A = np.array([[1 - 1e-300, 0.5], [1e-300, 0.5]])
    W = np.array([[1 - 1e-320, 1.0], [1e-320, 0.0]])
    assert rescale_interval(A, W) == 1
    assert _guard(1e-300, 1e-320, 1) == np.inf
    assert _guard(0.5, 0.25, 2) == 8 * 2.0 ** -1022 / (0.5 * 0.25) ** 2


def _report(**options):
    return headprompt.check(None, "3.6", **{**SMALL, **options})


@pytest.mark.parametrize("options, match", [
    (dict(model=5), r"^model: expected an HMM, a MemoryHMM or a LargeHMM, found int$"),
    (dict(model={"A": [[1]]}), r"^model: expected .* found dict$"),
    (dict(model=np.eye(2)), r"^model: expected .* found ndarray$"),
    (dict(rationalize=np.array([0.1, 0.2])), r"^rationalize=array\(\[0\.1, 0\.2\]\): expected a number"),
    (dict(rationalize=np.array([0.1])), r"^rationalize=array\(\[0\.1\]\): expected a number"),
    (dict(progress="yes"), r"^progress='yes': expected True or False$"),
    (dict(progress=1), r"^progress=1: expected True or False$"),
])
def test_wrong_types_of_options_are_input_errors(options, match):
    # were TypeError/ValueError (model=5: os.fspath in the instance reader; an array threshold:
    # float()), and progress='yes' was taken as True
    with pytest.raises(InputError, match=match):
        headprompt.check(None, "3.6", samples=10, length=2, **options)


def test_torch_threshold_tensor_is_an_input_error():
    torch = pytest.importorskip("torch")
    with pytest.raises(InputError, match=r"^rationalize=tensor\(.*\): expected a number"):
        headprompt.check(None, "3.6", rationalize=torch.tensor([0.1, 0.2]))


def test_numpy_bool_progress_is_a_bool(capsys):
    assert _report(progress=np.False_).exit_code == 0
    assert capsys.readouterr().out == ""


def test_a_multiline_value_is_named_on_one_line():
    pd = pytest.importorskip("pandas")
    with pytest.raises(InputError) as info:
        headprompt.check(None, "3.6", hidden=pd.Series([4, 5]))
    assert str(info.value) == "hidden=<Series>: expected an integer, found Series"
    with pytest.raises(InputError) as info:
        headprompt.check(None, "3.6", hidden=list(range(1000)))
    assert "\n" not in str(info.value) and len(str(info.value)) < 160


def test_an_instance_given_twice_is_refused(tmp_path):
    hmm = HMM.create([[0, 1], [1, 0]], [[1, 0], [0, 1]], ["1/2", "1/2"], [1, -1])
    path = tmp_path / "h.json"
    hmm.save(path)
    # was silently overwritten by the positional instance
    with pytest.raises(InputError, match=r"^model= and the instance argument both give an instance; give one$"):
        headprompt.check(hmm, "3.6", model=hmm.with_task([1, 1]))
    with pytest.raises(InputError, match=r"^hmm= and the instance argument both give an instance; give one$"):
        headprompt.check(str(path), "3.6", hmm=str(path))


def test_generator_messages_name_python_keywords():
    with pytest.raises(InputError, match=r"^cells=2: Theorem 4.6 is about one memory cell"):
        headprompt.check(None, "4.6", cells=2)
    with pytest.raises(InputError) as info:
        headprompt.check(None, "4.6", vocab=2, memory=5)
    assert str(info.value).startswith("vocab=2: ") and "--" not in str(info.value)


@pytest.mark.parametrize("call, match", [
    (lambda r: r.plot(near="x"), r"^near='x': expected a finite number >= 0"),
    (lambda r: r.plot(near=float("nan")), r"^near=nan: expected a finite number >= 0"),
    (lambda r: r.plot(near=-1), r"^near=-1: expected a finite number >= 0"),
    (lambda r: r.plot(ax=5), r"^ax: expected a matplotlib Axes or a sequence of them, found int$"),
    (lambda r: r.plot(ax=[]), r"^ax: expected a matplotlib Axes .* found list$"),
    (lambda r: r.to_frame(digits=0), r"^digits=0: expected an integer in 1\.\.1000$"),
    (lambda r: r.to_frame(digits="x"), r"^digits='x': expected an integer in 1\.\.1000$"),
    (lambda r: r.to_frame(digits=10**9), r"^digits=1000000000: expected an integer in 1\.\.1000$"),
    (lambda r: r.to_frame(exact="yes"), r"^exact='yes': expected True or False$"),
    (lambda r: r.rows(exact="yes"), r"^exact='yes': expected True or False$"),
])
def test_bad_arguments_of_report_methods_are_input_errors(call, match):
    # were TypeError (near='x'), RuntimeWarning (near=nan), AttributeError/IndexError (ax),
    # ValueError (digits=0), a hang (digits=10**9: a billion-digit division per row), and
    # exact='yes' read as True
    report = _report()
    with pytest.raises(InputError, match=match):
        call(report)


def test_plot_on_given_axes_and_every_verdict_kind_writes_a_png(tmp_path, capsys):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    hmm = HMM.create([[0, 1], [1, 0]], [[1, 0], [0, 1]], ["1/2", "1/2"], [1, -1])
    reports = [_report(), _report(mode="float"), headprompt.check(hmm, "3.6", samples=10, length=2),
               headprompt.check(None, "3.3", hidden=25, samples=20, length=3)]
    assert [r.verdict for r in reports] == ["verified", "verified (uncertified)", "assumptions-fail",
                                           "assumptions-fail"]
    for i, report in enumerate(reports):
        fig = report.plot(near=np.float64(1e-3))
        fig.savefig(tmp_path / f"{i}.png")
        plt.close(fig)
        assert (tmp_path / f"{i}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert "<table>" in report._repr_html_() and str(report) and repr(report).startswith("TheoremReport(")
    fig, axes = plt.subplots(1, 2)
    assert reports[0].plot(ax=axes) is fig            # a numpy array of two Axes
    assert reports[0].plot(ax=axes[0]) is fig
    plt.close(fig)
    assert capsys.readouterr().out == ""


def test_array_likes_of_other_libraries_are_read_once_without_warnings():
    torch = pytest.importorskip("torch")
    t = torch.tensor([[0, 1], [1, 0]])
    assert HMM.create(t, t, ["1/2", "1/2"]) == HMM.create([[0, 1], [1, 0]], [[0, 1], [1, 0]], ["1/2", "1/2"])
    f = HMM.create(t.double(), t.double(), torch.tensor([0.5, 0.5], dtype=torch.float64), exact=False)
    assert not f.exact
    with pytest.raises(headprompt.models.exceptions.ValidationError,
                       match=r"^A: cannot be read as a numpy array \(Tensor: Can't call numpy\(\) on Tensor that requires grad"):
        HMM.create(torch.tensor([[0.0, 1.0], [1.0, 0.0]], requires_grad=True), t, [0.5, 0.5], exact=False)


def test_bad_arguments_of_the_hmmlearn_bridge_are_input_errors():
    hmm_mod = pytest.importorskip("hmmlearn.hmm")
    hmm = HMM.create([[0, 1], [1, 0]], [[1, 0], [0, 1]], ["1/2", "1/2"])
    model = hmm.to_hmmlearn()
    with pytest.raises(InputError, match=r"^pi0: expected 2 probabilities, found str$"):
        HMM.from_hmmlearn(model, pi0="x")
    with pytest.raises(InputError, match=r"^pi0: expected 2 probabilities, found dict$"):
        HMM.from_hmmlearn(model, pi0={})
    with pytest.raises(InputError, match=r"^start: expected one of 'auto', 'h1', 'h0', 'stationary', found array"):
        HMM.from_hmmlearn(model, start=np.array(["h1", "h0"]))
    with pytest.raises(InputError, match=r"^to_hmmlearn: n_components= is fixed by the model \(2 states, 2 tokens\)"):
        hmm.to_hmmlearn(n_components=5)
    with pytest.raises(InputError, match=r"^to_hmmlearn: .*unexpected keyword argument 'bogus'"):
        hmm.to_hmmlearn(bogus=1)
    with pytest.raises(InputError, match=r"^from_hmmlearn: expected a fitted hmmlearn CategoricalHMM"):
        HMM.from_hmmlearn(hmm_mod.CategoricalHMM(n_components=2))


@pytest.mark.parametrize("options, start", [
    (dict(mode="exact"), "mode='exact' is refused above 1000 states"),
    (dict(out="big.json"), "out='big.json': a model above 1000 states is saved as .npz"),
    (dict(certificate="c.json"), "certificate= is not supported above 1,000 states"),
])
def test_large_path_refusals_name_python_keywords(options, start):
    with pytest.raises(InputError) as info:
        headprompt.check(None, "3.6", hidden=2000, **options)
    assert str(info.value).startswith(start) and "--" not in str(info.value)


def test_a_witness_dict_with_numbers_past_float64(tmp_path, capsys):
    import matplotlib

    matplotlib.use("Agg")
    hmm = HMM.create([[0, 1], [1, 0]], [[1, 0], [0, 1]], ["1/2", "1/2"], [1, -1])
    # was ValueError (int -> str past 4300 digits) while formatting the refusal
    with pytest.raises(headprompt.models.exceptions.WitnessError,
                       match=r"^witness: witness u: entry 0 is an integer of 5001 digits, expected a value in \[0, 1\]"):
        headprompt.check(hmm, "3.6", witness={"theorem": "3.6", "u": [10**5000, 1], "b": [1, 1]}, samples=10, length=2)
    # a head weight past float64: rows()/plot() raised OverflowError (float(Fraction)) after a
    # RuntimeWarning (inf * 0 in the float pass); the margin is now inf with bound inf
    report = headprompt.check(hmm, "3.6", witness={"theorem": "3.6", "u": [1, 1], "b": [10**5000, 1]},
                              samples=10, length=2)
    heads = [r["head_margin"] for r in report.rows() if r["possible"]]
    assert float("inf") in heads and all(h == float("inf") or h == 1.0 for h in heads)
    exact_heads = [r["head_margin"] for r in report.rows(exact=True) if r["possible"]]
    assert max(exact_heads) == Fraction(10**5000, 2) or max(exact_heads) > 10**4000
    report.plot().savefig(tmp_path / "p.png")
    assert (tmp_path / "p.png").read_bytes()[:4] == b"\x89PNG"
    assert report.to_frame().shape[0] == len(report.rows())
    assert capsys.readouterr().out == ""


def test_float_models_refuse_booleans_and_masked_entries_as_exact_ones_do():
    """Left by the API audit: HMM.create in float mode read True as 1.0 (exact mode refuses it)
    and dropped a numpy mask silently, so a masked entry's hidden value entered the model. Both
    are refused with one line naming the entry; a masked array with nothing masked is read."""
    import numpy as np

    from headprompt.models.exceptions import ValidationError
    from headprompt.models.hmm.values import HMM

    A = [[0.5, 0.5], [0.5, 0.5]]
    for W in ([[True, False], [False, True]], np.eye(2, dtype=bool)):
        for exact in (True, False):
            with pytest.raises(InputError, match=r"W\[0, 0\]: expected a number, found a boolean True"):
                HMM.create(A if not exact else [["1/2", "1/2"], ["1/2", "1/2"]], W, [0.5, 0.5] if not exact else
                           ["1/2", "1/2"], exact=exact)
    masked = np.ma.array([0.5, 0.5, 7.0], mask=[0, 0, 1])
    with pytest.raises(ValidationError, match=r"pi0: a masked array with masked entries \(the first at \[2\]\)"):
        HMM.create(np.full((3, 3), 1 / 3), np.eye(3), masked, exact=False)
    hmm = HMM.create(np.full((2, 2), 0.5), np.eye(2), np.ma.array([0.25, 0.75], mask=[0, 0]), exact=False)
    assert hmm.pi0.tolist() == [0.25, 0.75] and type(hmm.pi0) is np.ndarray
