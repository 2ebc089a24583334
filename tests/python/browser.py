# Headless Chromium for the HTML report's browser tests: render a page, count what its Plotly charts
# drew, look at a screenshot. Standard library only (html.parser, zlib, struct).
#
# The page contract: each chart is <div class="fathom-chart" id="chart-NAME" data-title="...">, drawn
# by Plotly.newPlot with SVG traces (scatter, bar); tables are <table class="fathom-table">; once every
# chart is drawn the page sets document.body.dataset.fathomDrawn (the <body>'s data-fathom-drawn).
#
# What plotly.js 2.x (2.6.3, Debian 12's python3-plotly) emits, read off rendered pages: every trace is
# a <g class="trace TYPE ..."> inside <g class="cartesianlayer"> (TYPE: "scatter", "bars", ...; the
# legend's entries are <g class="traces">, plural, and are not counted); a scatter marker is
# <path class="point"> in the trace's <g class="points">; a bar is <g class="point"> (holding one
# <path>) in the trace's <g class="points"> (a null, NaN or 0 bar still gets one, of zero area); a line
# is <path class="js-line"> in <g class="lines"> (one per unbroken run of points); a fill is
# <path class="js-fill">. Tick labels are <g class="xtick"> / <g class="ytick"> (x2tick... on other
# axes) holding a <text>; the chart's title is <text class="gtitle">.
import collections
import html.parser
import os
import re
import shutil
import signal
import struct
import subprocess
import tempfile
import time
import zlib

CANDIDATES = ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
PLOTLY_JS = ("/usr/share/python3-plotly/plotly.js",)  # Debian 12's python3-plotly: plotly.js 2.6.3
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
         "--hide-scrollbars", "--mute-audio"]

Rendered = collections.namedtuple("Rendered", "dom console errors seconds")


class ChromiumError(RuntimeError):
    pass


def chromium():
    """Path of a headless Chromium ($FATHOM_CHROMIUM first), or None."""
    own = os.environ.get("FATHOM_CHROMIUM")
    if own:
        return own if os.access(own, os.X_OK) else None
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


def plotly_js():
    """Path of plotly.js to inline in a page ($FATHOM_PLOTLY_JS first, then Debian's), or None."""
    for path in (os.environ.get("FATHOM_PLOTLY_JS"),) + PLOTLY_JS:
        if path and os.path.isfile(path):
            return path
    return None


def _run(args, timeout):
    """Runs Chromium with `args` and a fresh profile; (stdout, stderr). LD_PRELOAD is dropped: the
    sanitizer stage preloads ASan's runtime for the tests, not for the browser."""
    binary = chromium()
    if binary is None:
        raise ChromiumError("no headless Chromium found (tried $FATHOM_CHROMIUM, " + ", ".join(CANDIDATES) + ")")
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    with tempfile.TemporaryDirectory(prefix="fathom-chromium-", ignore_cleanup_errors=True) as profile:
        cmd = [binary, *FLAGS, f"--user-data-dir={profile}", *args]
        # Its own process group: on a timeout the renderer and GPU processes go with the browser.
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True)
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            _, stderr = proc.communicate()
            err = stderr.decode(errors="replace")
            raise ChromiumError(f"Chromium ran over {timeout} s: {' '.join(cmd)}\n{err[-4000:]}") from None
    out, err = stdout.decode(errors="replace"), stderr.decode(errors="replace")
    if proc.returncode != 0:
        raise ChromiumError(f"Chromium exited {proc.returncode}: {' '.join(cmd)}\n{err[-4000:]}")
    return out, err


# A console line on Chromium's stderr: [pid/time:INFO:CONSOLE:123] "message", source: URL (123)
# (older builds: INFO:CONSOLE(123)).
CONSOLE = re.compile(r":(\w+):CONSOLE[^\]]*\] \"(.*)\", source: ")


def render_page(html_path, png_path=None, width=1200, height=1600, budget_ms=5000, timeout=120):
    """Loads `html_path` in headless Chromium; the DOM after its scripts ran (virtual time: timers and
    promises up to `budget_ms` of page time, however fast), the page's console messages, the ones that
    are errors, and the seconds it took. With `png_path`, a second run writes a width x height
    screenshot there (the DOM run lays out at the same window size)."""
    url = "file://" + os.path.abspath(html_path)
    window = f"--window-size={width},{height}"
    start = time.monotonic()
    dom, err = _run([f"--virtual-time-budget={budget_ms}", window, "--dump-dom", url], timeout)
    if "<html" not in dom:
        raise ChromiumError(f"Chromium dumped no DOM for {url}\n{err[-4000:]}")
    if png_path is not None:
        if os.path.exists(png_path):
            os.remove(png_path)
        _, shot_err = _run([f"--virtual-time-budget={budget_ms}", window,
                            f"--screenshot={os.path.abspath(png_path)}", url], timeout)
        if not os.path.isfile(png_path) or os.path.getsize(png_path) == 0:
            raise ChromiumError(f"Chromium wrote no screenshot {png_path}\n{shot_err[-4000:]}")
    console = [(m.group(1), m.group(2)) for m in map(CONSOLE.search, err.splitlines()) if m]
    errors = [text for level, text in console if level in ("ERROR", "FATAL") or text.startswith("Uncaught")]
    return Rendered(dom, [text for _, text in console], errors, time.monotonic() - start)


def render(html_path, png_path=None, width=1200, height=1600, budget_ms=5000, timeout=120):
    """The DOM of `html_path` after its scripts ran (render_page's, without the console)."""
    return render_page(html_path, png_path, width, height, budget_ms, timeout).dom


# --- the DOM -------------------------------------------------------------------------------------

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
        "track", "wbr"}


class Node:
    __slots__ = ("tag", "attrs", "children", "text")

    def __init__(self, tag, attrs):
        self.tag, self.attrs, self.children, self.text = tag, attrs, [], []

    def classes(self):
        return (self.attrs.get("class") or "").split()

    def has(self, cls):
        return cls in self.classes()

    def walk(self):
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))

    def find(self, tag=None, cls=None):
        """Every descendant (self included) with that tag and class, in document order."""
        return [n for n in self.walk() if (tag is None or n.tag == tag) and (cls is None or n.has(cls))]

    def content(self):
        return "".join(n_text for n in self.walk() for n_text in n.text).strip()


class _TreeBuilder(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag, attrs):
        node = Node(tag, {k: (v if v is not None else "") for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag, attrs):
        self.stack[-1].children.append(Node(tag, {k: (v if v is not None else "") for k, v in attrs}))

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, 0, -1):  # Chromium's serialization closes every element
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data):
        self.stack[-1].text.append(data)


SCRIPT = re.compile(r"(<script\b[^>]*>).*?</script>", re.S | re.I)


def parse(dom):
    """A tree of Nodes from serialized HTML (script bodies dropped: an inline plotly.js is 8 MB)."""
    builder = _TreeBuilder()
    builder.feed(SCRIPT.sub(r"\1</script>", dom))
    builder.close()
    return builder.root


def _tree(dom):
    return dom if isinstance(dom, Node) else parse(dom)


def fathom_drawn(dom):
    """The <body>'s data-fathom-drawn as an int (the charts the page says it drew), or None."""
    body = _tree(dom).find("body")
    value = body[0].attrs.get("data-fathom-drawn") if body else None
    return int(value) if value is not None and value.strip().isdigit() else None


NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e-?\d+)?")


def _bar_area(d):
    """Area of a bar's path "Mx0,y0Vy1Hx1Vy0Z" (0 for a degenerate or unreadable one)."""
    nums = [float(x) for x in NUMBER.findall(d or "")]
    return abs(nums[2] - nums[1]) * abs(nums[3] - nums[0]) if len(nums) >= 4 else 0.0


def _trace(g):
    kind = next((c for c in g.classes() if c != "trace" and not re.fullmatch(r"trace[0-9a-f]+", c)), "")
    points = [p for grp in g.find("g", "points") for p in grp.children]
    bars = [p for p in points if p.tag == "g" and p.has("point")]
    return {"type": kind,
            "markers": sum(1 for p in points if p.tag == "path" and p.has("point")),
            "bars": len(bars),
            "empty_bars": sum(1 for b in bars if sum(_bar_area(p.attrs.get("d")) for p in b.find("path")) == 0),
            "lines": len(g.find("path", "js-line")),
            "fills": len(g.find("path", "js-fill"))}


TICK = re.compile(r"([xy])\d*tick")


def _chart(div):
    svgs = [s for s in div.find("svg") if s.has("main-svg")]
    traces = [_trace(g) for s in svgs for layer in s.find("g", "cartesianlayer") for g in layer.find("g", "trace")]
    ticks = {"x": 0, "y": 0}
    for n in div.find("g"):
        axis = next((m.group(1) for m in map(TICK.fullmatch, n.classes()) if m), None)
        if axis and n.content():
            ticks[axis] += 1
    titles = [t.content() for t in div.find("text", "gtitle")]
    return {"id": div.attrs.get("id"), "title": div.attrs.get("data-title"), "plotted": bool(svgs),
            "plot_title": titles[0] if titles else None, "traces": traces,
            "markers": sum(t["markers"] for t in traces), "bars": sum(t["bars"] for t in traces),
            "lines": sum(t["lines"] for t in traces), "xticks": ticks["x"], "yticks": ticks["y"],
            "axes": ticks["x"] > 0 and ticks["y"] > 0}


def charts(dom):
    """One dict per <div class="fathom-chart">, in page order: id, title (data-title), plotted (Plotly
    put its SVG there), plot_title, traces (per trace: type, markers, bars, empty_bars, lines, fills),
    their totals markers / bars / lines, xticks / yticks (tick labels with text) and axes (both)."""
    return [_chart(div) for div in _tree(dom).find("div", "fathom-chart")]


def tables(dom):
    """One dict per <table class="fathom-table">: id, header (the first row's cell texts) and rows
    (the body's rows: those without <th> cells)."""
    out = []
    for t in _tree(dom).find("table", "fathom-table"):
        rows = t.find("tr")
        header = [c.content() for c in rows[0].children if c.tag in ("th", "td")] if rows else []
        body = [r for r in rows if not any(c.tag == "th" for c in r.children)]
        out.append({"id": t.attrs.get("id"), "header": header, "rows": len(body)})
    return out


# --- the screenshot ------------------------------------------------------------------------------

CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}  # PNG colour type -> channels (grey, RGB, grey+alpha, RGBA)


def _add_bytes(a, b):
    """a + b byte by byte, mod 256 (PNG's Up filter), on whole rows at once: 7-bit sums of the low
    bits, the top bit as the xor of the tops and the carry into it."""
    n = len(a)
    low, high = int.from_bytes(b"\x7f" * n, "big"), int.from_bytes(b"\x80" * n, "big")
    x, y = int.from_bytes(a, "big"), int.from_bytes(b, "big")
    return (((x & low) + (y & low)) ^ ((x ^ y) & high)).to_bytes(n, "big")


def _unfilter(kind, row, prior, bpp):
    if kind == 0:
        return row
    if kind == 2:
        return _add_bytes(row, prior)
    out = bytearray(row)
    for i in range(len(out)):
        left = out[i - bpp] if i >= bpp else 0
        if kind == 1:
            out[i] = (out[i] + left) & 0xFF
        elif kind == 3:
            out[i] = (out[i] + ((left + prior[i]) >> 1)) & 0xFF
        elif kind == 4:
            up, corner = prior[i], (prior[i - bpp] if i >= bpp else 0)
            p = left + up - corner
            pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
            out[i] = (out[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 0xFF
        else:
            raise ValueError(f"PNG filter type {kind} (0-4 exist)")
    return bytes(out)


def png_pixels(png_path):
    """(width, height, channels, rows): the unfiltered 8-bit rows of a non-interlaced PNG (grey, RGB,
    grey + alpha or RGBA)."""
    data = open(png_path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{png_path}: not a PNG")
    pos, idat, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in CHANNELS or interlace:
        raise ValueError(f"{png_path}: bit depth {depth}, colour type {colour}, interlace {interlace} "
                         "(8-bit grey, RGB, grey + alpha or RGBA, not interlaced, read)")
    bpp = CHANNELS[colour]
    raw, stride = zlib.decompress(b"".join(idat)), width * bpp + 1
    rows, prior = [], bytes(width * bpp)
    for r in range(height):
        prior = _unfilter(raw[r * stride], raw[r * stride + 1:(r + 1) * stride], prior, bpp)
        rows.append(prior)
    return width, height, bpp, rows


def png_colors(png_path):
    """What a screenshot holds: width, height, colors (distinct pixel values), background (the
    commonest, as a tuple), ink (the fraction of pixels that are not the background) and counts
    (pixels of each value, a Counter keyed by tuples)."""
    width, height, bpp, rows = png_pixels(png_path)
    counts = collections.Counter()
    for row, times in collections.Counter(rows).items():  # blank rows repeat: count each once
        for px, n in collections.Counter(row[i:i + bpp] for i in range(0, len(row), bpp)).items():
            counts[px] += n * times
    background, most = counts.most_common(1)[0]
    return {"width": width, "height": height, "colors": len(counts), "background": tuple(background),
            "ink": 1 - most / (width * height), "counts": collections.Counter({tuple(k): n for k, n in counts.items()})}


def png_is_blank(png_path, min_colors=3, min_ink=0.001):
    """True when a screenshot is (nearly) one colour: under `min_colors` distinct values or under
    `min_ink` of its pixels off the background."""
    c = png_colors(png_path)
    return c["colors"] < min_colors or c["ink"] < min_ink
