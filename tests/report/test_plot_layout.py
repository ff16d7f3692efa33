"""The plots as a reader sees them (issue 32, item 5): sized for the page, legends clear of the data, bars
centred on the values they count.  Each figure is caught before it is encoded (``to_data_uri``), so the
test reads matplotlib's own geometry, not pixels.
"""

from __future__ import annotations

import base64
import io

import numpy as np
import pytest

import ipcausal
from ipcausal.report import plots

pytest.importorskip("matplotlib")


@pytest.fixture
def caught(monkeypatch: pytest.MonkeyPatch) -> list:
    """The figures the plot functions make, drawn (so their geometry is final), and their PNG sizes."""
    out: list = []
    encode = plots.to_data_uri

    def keep(fig):  # type: ignore[no-untyped-def]
        fig.canvas.draw()
        uri = encode(fig)  # wraps the titles, lays out and renders as the page does
        from PIL import Image

        png = Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1])))
        out.append((fig, png.size))
        return uri

    monkeypatch.setattr(plots, "to_data_uri", keep)
    return out


def _rating_pairs(n: int = 40, groups: int = 1) -> ipcausal.PairSet:
    rng = np.random.default_rng(3)
    names = [("us", "uk"), ("us", "au"), ("uk", "au")][:groups]
    recs = [{"pair_id": f"{a}{b}{k}", "background_i": a, "background_j": b, "x_i": "q", "x_j": "q'",
             "score_i": 3, "score_j": 3 + int(rng.choice([-1, 0, 0, 1, 1]))} for a, b in names for k in range(n)]
    return ipcausal.PairSet.from_records(recs)


def test_one_panel_spans_the_page_and_several_go_two_to_a_row(caught: list) -> None:
    plots.fig_distribution(ipcausal.test(_rating_pairs(groups=1), rng=0))
    plots.fig_distribution(ipcausal.test(_rating_pairs(groups=3), rng=0))
    (one, (w1, _)), (three, (w3, _)) = caught
    assert w1 >= 900 and w3 >= 900  # at 100 dpi: about the width of the page's column, not ~350 px
    assert len([ax for ax in three.axes if ax.axison]) == 3
    rows = {round(ax.get_position().y0, 3) for ax in three.axes if ax.axison}
    assert len(rows) == 2  # two panels on the first row, one on the second


def test_bars_are_centred_on_the_values_they_count(caught: list) -> None:
    rep = ipcausal.test(_rating_pairs(), rng=0)
    plots.fig_distribution(rep)
    (fig, _), = caught
    bars = [p for p in fig.axes[0].patches]
    centres = sorted(round(b.get_x() + b.get_width() / 2, 9) for b in bars)
    d = np.asarray(rep.groups[0].data.x, dtype=float)
    assert centres == sorted(float(v) for v in np.unique(d))  # Δ = 0 is the bar around 0, not from −0.2 to 0
    heights = {round(b.get_x() + b.get_width() / 2, 9): b.get_height() for b in bars}
    assert all(heights[float(v)] == int(np.sum(d == v)) for v in np.unique(d))


@pytest.mark.parametrize("draw", [plots.fig_distribution, plots.fig_null])
def test_the_legend_sits_below_the_axes_clear_of_the_data(caught: list, draw) -> None:  # type: ignore[no-untyped-def]
    draw(ipcausal.test(_rating_pairs(), rng=0))
    (fig, _), = caught
    ax = fig.axes[0]
    legend = ax.get_legend()
    assert legend is not None
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)  # the figure was closed once encoded: draw it again, laid out as it was
    canvas.draw()
    renderer = canvas.get_renderer()
    box, frame = legend.get_window_extent(renderer), ax.get_window_extent(renderer)
    assert box.y1 <= frame.y0 + 1e-6  # wholly under the plotting area: nothing of the data is covered
