"""Every kind of page (test, case, bench, mitigation) rendered in headless Chromium, as a reader opens it.

The pages are made by the CLI a user runs (the SCM simulator as the model): ``ipcausal report
scored.jsonl -o report.html`` (the test page); ``ipcausal case echo … --mitigation strip`` (its report.html holds the mitigation table) and
``ipcausal report`` of its folder (the same, rendered again); ``ipcausal report DIR/mitigation.json``; ``ipcausal
bench`` then ``ipcausal report DIR/bench.json -o bench.html``.  Each page is opened by Debian's
``chromium --headless``: the screenshot must not be blank (enough non-white pixels, enough
colours) and the browser console must hold no message (Chromium logs every console message and
uncaught error as ``CONSOLE``; a page with a deliberate error checks that the check sees it).

Chromium is installed here when it is absent and this runs as root with apt-get (CI runs
``make test`` on a fresh machine); where it cannot be installed, the tests skip and say why.
With ``IPCAUSAL_SCREENSHOTS_DIR=docs/img`` each page's screenshot is also saved there, small
(the top of the page, 800 px wide, 24 colours): the screenshots in docs/.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ipcausal.cli import main

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::UserWarning")]

WIDTH, HEIGHT = 1400, 2200


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        pytest.skip("headless Chromium is not installed and cannot be installed here (needs root and apt-get: "
                    "apt-get install -y chromium)")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    proc = subprocess.run(["apt-get", "install", "-y", "-q", "chromium"], capture_output=True, text=True, env=env,
                          timeout=900)
    if proc.returncode != 0:  # a fresh machine may need the package lists first
        subprocess.run(["apt-get", "update", "-q"], capture_output=True, text=True, env=env, timeout=600)
        proc = subprocess.run(["apt-get", "install", "-y", "-q", "chromium"], capture_output=True, text=True, env=env,
                              timeout=900)
    found = shutil.which("chromium")
    if not found:
        pytest.skip(f"headless Chromium could not be installed: apt-get said {proc.stderr.strip()[-300:]!r}")
    return found


@pytest.fixture(scope="module")
def browser() -> str:
    return _chromium()


def _shoot(browser: str, page: Path, png: Path, profile: Path) -> list[str]:
    """Screenshot ``page``; returns the console messages Chromium logged for it."""
    proc = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--enable-logging=stderr", "--v=0", f"--user-data-dir={profile}",
                           f"--window-size={WIDTH},{HEIGHT}", f"--screenshot={png}", page.resolve().as_uri()],
                          capture_output=True, text=True, timeout=180)
    assert png.is_file(), proc.stderr[-2000:]
    return [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]


def _not_blank(png: Path) -> tuple[float, int]:
    """(share of pixels that are not near-white, number of distinct colours)."""
    import numpy as np
    from PIL import Image

    px = np.asarray(Image.open(png).convert("RGB")).reshape(-1, 3)
    inked = float((px.min(axis=1) < 235).mean())
    return inked, int(np.unique(px, axis=0).shape[0])


def _save_for_docs(png: Path, name: str) -> None:
    where = os.environ.get("IPCAUSAL_SCREENSHOTS_DIR")
    if not where:
        return
    from PIL import Image

    im = Image.open(png).convert("RGB")
    top = im.crop((0, 0, WIDTH, min(im.height, 1400)))
    small = top.resize((800, round(top.height * 800 / WIDTH)), Image.LANCZOS)
    Path(where).mkdir(parents=True, exist_ok=True)
    small.quantize(colors=24).save(Path(where) / f"{name}.png", optimize=True)


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The four kinds of page, made with the CLI."""
    from ipcausal.testing import SimulatedModel

    root = tmp_path_factory.mktemp("pages")
    out: dict[str, Path] = {}
    pairs = SimulatedModel(effect=0.8, levels=5, seed=2, noise=1.0).study(n=40, rng=2).write(root / "scored.jsonl")
    assert main(["report", str(pairs), "-o", str(root / "test.html")]) == 0  # `ipcausal test`, rendered
    out["test"] = root / "test.html"
    case = root / "case"
    assert main(["case", "echo", "--backend", "simulated", "--effect", "2", "--limit", "12", "--mitigation", "strip",
                 "--margin", "0.5", "-o", str(case), "--no-progress"]) == 0
    assert "Mitigation 'strip'" in (case / "report.html").read_text(encoding="utf-8")  # the case wrote it so
    assert main(["report", str(case), "-o", str(root / "case-again.html")]) == 0  # and a re-render keeps it
    out["case"] = root / "case-again.html"
    assert main(["report", str(case / "mitigation.json"), "-o", str(root / "mitigation.html")]) == 0
    out["mitigation"] = root / "mitigation.html"
    spec = root / "bench.toml"
    spec.write_text('[settings]\nseed = 0\n\n[[models]]\nname = "personalizes"\nbackend = "simulated"\neffect = 1.5\n\n'
                    '[[models]]\nname = "neutral"\nbackend = "simulated"\nseed = 1\n\n'
                    '[[cases]]\nname = "echo"\nlimit = 8\n\n[[cases]]\nname = "education"\nlimit = 8\nmargin = 0.5\n')
    assert main(["bench", str(spec), "-o", str(root / "bench"), "--no-progress"]) in (0, 3)
    assert main(["report", str(root / "bench" / "bench.json"), "-o", str(root / "bench" / "bench.html")]) == 0
    out["bench"] = root / "bench" / "bench.html"
    return out


@pytest.mark.parametrize("kind", ["test", "case", "mitigation", "bench"])
def test_page_renders_in_chromium(kind: str, pages: dict[str, Path], browser: str, tmp_path: Path) -> None:
    page = pages[kind]
    png = tmp_path / f"{kind}.png"
    console = _shoot(browser, page, png, tmp_path / "profile")
    assert console == [], f"{kind} page: the browser console says {console}"
    inked, colours = _not_blank(png)
    assert inked > 0.005 and colours > 20, f"{kind} page looks blank: {inked:.3%} inked, {colours} colours"
    _save_for_docs(png, f"page-{kind}")
    text = page.read_text(encoding="utf-8")
    if kind in ("test", "case"):
        assert "Example pairs" in text and "largest |Δ|" in text
    if kind == "case":
        assert "Mitigation 'strip'" in text and "p of the change (adjusted over the background pairs)" in text
    if kind == "mitigation":
        assert "removed?" in text


def test_the_console_check_sees_an_error(browser: str, tmp_path: Path) -> None:
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><html><body><p>x</p><script>console.error('boom'); missingFunction();</script>"
                   "</body></html>")
    console = _shoot(browser, bad, tmp_path / "bad.png", tmp_path / "profile")
    assert any("boom" in line for line in console) and any("missingFunction" in line for line in console)
    blank = tmp_path / "blank.html"
    blank.write_text("<!DOCTYPE html><html><body></body></html>")
    _shoot(browser, blank, tmp_path / "blank.png", tmp_path / "profile")
    inked, _ = _not_blank(tmp_path / "blank.png")
    assert inked < 0.001
