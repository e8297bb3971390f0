"""``report.plot()`` labels what it draws (issue 35 item 6): the band on the head-margin panel
spans +- the smallest nonzero head margin of the checked sequences (recomputed here from the
report's own rows by Fraction arithmetic), its legend says so and names the robustness radius
as the different number it is, and no legend sits over the data."""

from fractions import Fraction

import matplotlib

matplotlib.use("Agg")

from headprompt.verify.api import run_theorem  # noqa: E402
from headprompt.verify.reports.requests import TheoremRequest  # noqa: E402


def test_the_margin_band_is_labelled_as_what_it_draws():
    report = run_theorem(TheoremRequest(id="3.6", hidden=5, vocab=4, seed=2, samples=300, length=5, python=True))
    assert report.verdict == "verified" and report.vacuous is False
    fig = report.plot()
    head = fig.axes[1]
    bands = [p for p in head.patches if p.get_label().startswith("band: smallest |head margin|")]
    assert len(bands) == 1
    band = bands[0]                     # a Rectangle in data coordinates along y
    y0, y1 = band.get_y(), band.get_y() + band.get_height()
    smallest = min(abs(Fraction(r["head_margin"])) for r in report.rows()
                   if r["possible"] and r["head_margin"] is not None and Fraction(r["head_margin"]) != 0)
    assert abs(y1 - float(smallest)) <= 1e-12 * float(smallest) and y0 == -y1
    assert "robustness radius" in bands[0].get_label()
    fig.canvas.draw()
    for axis in fig.axes:
        legend = axis.get_legend()
        if legend is not None:                  # entirely below the axes: never over a point
            assert legend.get_window_extent().y1 <= axis.get_window_extent().y0 + 1
