# The browser-test harness (browser.py) on hand-written pages of the HTML report's contract: plotly.js
# inline, charts as div.fathom-chart drawn by Plotly.newPlot, body.dataset.fathomDrawn set once all are
# drawn. It must count what Plotly really drew, see a screenshot that is not blank, and catch a page
# whose plot call throws.
import collections
import struct
import zlib

import pytest

import browser

CONFIG = "{staticPlot: false, displayModeBar: false}"
BLUE = (31, 119, 180)  # plotly's first trace colour, #1f77b4


@pytest.fixture(scope="module")
def plotly():
    if browser.chromium() is None:
        pytest.skip("no headless Chromium (chromium-headless-shell, chromium, ...: tools/install_deps.sh)")
    path = browser.plotly_js()
    if path is None:
        pytest.skip("no plotly.js (Debian's python3-plotly: tools/install_deps.sh)")
    return open(path, encoding="utf-8").read()


def write_page(path, plotly_js, charts, body=""):
    """A report page: `charts` maps a name to the JS of its data and layout ("[...], {...}")."""
    divs = "".join(f'<div class="fathom-chart" id="chart-{n}" data-title="{n} chart"></div>\n' for n in charts)
    calls = ",\n".join(f"  Plotly.newPlot(document.getElementById('chart-{n}'), {js}, {CONFIG})"
                       for n, js in charts.items())
    path.write_text(f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>fathom report</title><script>{plotly_js}</script></head>
<body>
{divs}{body}
<script>
Promise.all([
{calls}
]).then(function (drawn) {{ document.body.dataset.fathomDrawn = String(drawn.length); }});
</script>
</body></html>
""", encoding="utf-8")
    return path


GOOD = {
    "scatter": "[{type: 'scatter', mode: 'markers', x: [1, 2, 3, 4, 5, 6, 7], y: [3, 1, 4, 1, 5, 9, 2]}], "
               "{title: 'seven markers'}",
    "bar": "[{type: 'bar', x: ['a', 'b', 'c', 'd'], y: [4, 3, 2, 1]}], {}",
    "line": "[{type: 'scatter', mode: 'lines', x: [0, 1, 2, 3, 4], y: [0, 1, 4, 9, 16]}], {}",
}
TABLE = ('<table class="fathom-table" id="table-runs"><thead><tr><th>run</th><th>time</th></tr></thead>'
         "<tbody><tr><td>a</td><td>1 s</td></tr><tr><td>b</td><td>2 s</td></tr></tbody></table>")


@pytest.fixture(scope="module")
def good(plotly, tmp_path_factory):
    d = tmp_path_factory.mktemp("good")
    page = write_page(d / "good.html", plotly, GOOD, TABLE)
    png = d / "good.png"
    return browser.render_page(page, png, width=1000, height=1500), png


def test_charts_count_what_plotly_drew(good):
    rendered, _ = good
    charts = {c["id"]: c for c in browser.charts(rendered.dom)}
    assert list(charts) == ["chart-scatter", "chart-bar", "chart-line"]
    assert all(c["plotted"] and c["axes"] for c in charts.values())
    scatter, bar, line = charts["chart-scatter"], charts["chart-bar"], charts["chart-line"]
    assert scatter["title"] == "scatter chart" and scatter["plot_title"] == "seven markers"
    assert (scatter["markers"], scatter["bars"], scatter["lines"]) == (7, 0, 0)
    assert [t["type"] for t in scatter["traces"]] == ["scatter"]
    assert (bar["markers"], bar["bars"], bar["lines"]) == (0, 4, 0)
    assert bar["traces"] == [{"type": "bars", "markers": 0, "bars": 4, "empty_bars": 0, "lines": 0, "fills": 0}]
    assert (line["markers"], line["bars"], line["lines"]) == (0, 0, 1)
    assert bar["xticks"] == 4  # one label per category: a, b, c, d
    assert browser.fathom_drawn(rendered.dom) == 3
    assert rendered.errors == []
    assert browser.tables(rendered.dom) == [{"id": "table-runs", "header": ["run", "time"], "rows": 2}]


def test_the_screenshot_is_not_blank(good):
    _, png = good
    c = browser.png_colors(png)
    assert (c["width"], c["height"]) == (1000, 1500)
    assert c["background"][:3] == (255, 255, 255)
    assert c["colors"] > 50  # antialiased markers, bars, lines and text
    assert c["ink"] > 0.01
    assert not browser.png_is_blank(png)
    # Four bars in plotly's first colour alone cover far more than 1% of the page.
    assert c["counts"][BLUE] > 0.01 * c["width"] * c["height"]


BROKEN = "[{type: 'scatter', mode: 'markers', x: [1, 2, 3], y: MISSING.y}], {}"


def test_a_plot_call_that_throws_is_caught(plotly, tmp_path):
    page = write_page(tmp_path / "bad.html", plotly, dict(GOOD, broken=BROKEN))
    rendered = browser.render_page(page)
    charts = {c["id"]: c for c in browser.charts(rendered.dom)}
    broken = charts.pop("chart-broken")
    assert not broken["plotted"] and broken["traces"] == []
    assert broken["markers"] + broken["bars"] + broken["lines"] == 0 and not broken["axes"]
    # The charts before it were plotted (their newPlot calls ran first) ...
    assert [(c["markers"], c["bars"], c["lines"]) for c in charts.values()] == [(7, 0, 0), (0, 4, 0), (0, 0, 1)]
    # ... but the page never says it drew them all, and the console names the error.
    assert browser.fathom_drawn(rendered.dom) is None
    assert any("MISSING is not defined" in e for e in rendered.errors), rendered.console


def test_a_page_that_drew_nothing_is_blank(plotly, tmp_path):
    page = write_page(tmp_path / "blank.html", plotly, {"broken": BROKEN})
    png = tmp_path / "blank.png"
    rendered = browser.render_page(page, png, width=800, height=600)
    assert [c["plotted"] for c in browser.charts(rendered.dom)] == [False]
    assert browser.png_is_blank(png)
    assert browser.png_colors(png)["colors"] == 1


def test_empty_bars_are_told_apart(plotly, tmp_path):
    page = write_page(tmp_path / "empty.html", plotly,
                      {"bar": "[{type: 'bar', x: ['a', 'b', 'c', 'd'], y: [4, null, NaN, 0]}], {}"})
    rendered = browser.render_page(page)
    (bar,) = browser.charts(rendered.dom)
    assert bar["traces"][0]["bars"] == 4 and bar["traces"][0]["empty_bars"] == 3
    assert browser.fathom_drawn(rendered.dom) == 1


def encode_png(path, width, height, channels, pixels, filters):
    """A PNG of 8-bit `pixels` (rows of bytes), row r filtered with filters[r % len(filters)]."""
    bpp, out, prior = channels, bytearray(), bytes(width * channels)
    for r, row in enumerate(pixels):
        kind = filters[r % len(filters)]
        enc = bytearray()
        for i, x in enumerate(row):
            left, up = (row[i - bpp] if i >= bpp else 0), prior[i]
            corner = prior[i - bpp] if i >= bpp else 0
            p = left + up - corner
            paeth = min((abs(p - left), 0, left), (abs(p - up), 1, up), (abs(p - corner), 2, corner))[2]
            enc.append((x - [0, left, up, (left + up) >> 1, paeth][kind]) & 0xFF)
        out += bytes([kind]) + enc
        prior = row

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    colour = {1: 0, 2: 4, 3: 2, 4: 6}[channels]
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, colour, 0, 0, 0))
                     + chunk(b"IDAT", zlib.compress(bytes(out))) + chunk(b"IEND", b""))


@pytest.mark.parametrize("channels", [1, 2, 3, 4])
def test_png_decoder_reads_every_filter(tmp_path, channels):
    width, height = 23, 10
    pixels = [bytes((x * 37 + y * 91 + c * 53 + (x * y) % 7) & 0xFF for x in range(width) for c in range(channels))
              for y in range(height)]
    path = tmp_path / "filters.png"
    encode_png(path, width, height, channels, pixels, [0, 1, 2, 3, 4])
    assert browser.png_pixels(path) == (width, height, channels, pixels)
    c = browser.png_colors(path)
    expected = collections.Counter(bytes(row[i:i + channels]) for row in pixels for i in range(0, len(row), channels))
    assert c["colors"] == len(expected)
    encode_png(path, width, height, channels, [bytes([200] * width * channels)] * height, [4, 3])
    assert browser.png_is_blank(path)


def test_failures_raise_with_chromiums_stderr(plotly, tmp_path, monkeypatch):
    page = write_page(tmp_path / "page.html", plotly, GOOD)
    with pytest.raises(browser.ChromiumError, match="ran over 0.3 s"):
        browser.render(page, timeout=0.3)
    fails = tmp_path / "fails.sh"
    fails.write_text("#!/bin/sh\necho 'cannot open display' >&2\nexit 3\n")
    fails.chmod(0o755)
    monkeypatch.setenv("FATHOM_CHROMIUM", str(fails))
    with pytest.raises(browser.ChromiumError, match="(?s)exited 3.*cannot open display"):
        browser.render(page)
