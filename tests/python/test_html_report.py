# `fathom run|capacity|search|compare --html`: each command's page rendered in headless Chromium
# (browser.py), offline. The page must say it drew every chart, and each chart must hold the marks
# its results call for, counted independently from the command's --json (and the step's --trace):
# a bar per run of tasks of one kind less than a pixel apart in the timeline, a bar per stage and
# part, a marker per capacity probe, per evaluated plan and per compared case, a bar per RL phase;
# the screenshot must not be blank.
import json
import os
import subprocess
import tempfile
from collections import defaultdict

import pytest

import browser

SRC = os.environ["FATHOM_SOURCE_DIR"]
CLI = os.environ["FATHOM_CLI"]
CLI_ENV = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
EXAMPLES = os.path.join(SRC, "scenarios", "examples")


@pytest.fixture(scope="module")
def tmp():
    if browser.chromium() is None:
        pytest.skip("no headless Chromium (chromium-headless-shell: tools/install_deps.sh)")
    with tempfile.TemporaryDirectory() as d:
        yield d


def run(tmp, name, *args):
    """Runs the CLI with --html and --json into `tmp`; (json, DOM, charts by id, screenshot colours)."""
    html, js = os.path.join(tmp, name + ".html"), os.path.join(tmp, name + ".json")
    r = subprocess.run([CLI, *args, "--html", html, "--json", js], capture_output=True, text=True, env=CLI_ENV)
    assert r.returncode == 0, r.stderr
    png = os.path.join(tmp, name + ".png")
    page = browser.render_page(html, png, height=2400, budget_ms=10000)
    assert page.errors == [], page.errors
    drawn = browser.charts(page.dom)
    assert browser.fathom_drawn(page.dom) == len(drawn) > 0
    assert all(c["plotted"] and c["axes"] for c in drawn), [c["id"] for c in drawn if not c["plotted"]]
    shot = browser.png_colors(png)
    assert shot["colors"] > 50 and shot["ink"] > 0.01, (shot["colors"], shot["ink"])
    with open(js) as f:
        return json.load(f), page.dom, {c["id"]: c for c in drawn}


def timeline_bars(trace, step_s):
    """The bars the timeline should draw: per task kind and stream, tasks merged while the next
    starts within a 1,500th of the step after the last ended."""
    runs = defaultdict(list)
    for e in trace["traceEvents"]:
        if e["ph"] == "X":
            runs[(e["name"].split()[0], e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"]))
    gap, bars = step_s * 1e6 / 1500, 0
    for spans in runs.values():
        end = None
        for a, b in sorted(spans):
            if end is None or a - end > gap:
                bars += 1
                end = b
            else:
                end = max(end, b)
    return bars


def test_training_step_page(tmp):
    trace_path = os.path.join(tmp, "step-trace.json")
    result, dom, charts = run(tmp, "step", "run", os.path.join(EXAMPLES, "gpt3-175b-128xh100.yaml"),
                              "--trace", trace_path)
    with open(trace_path) as f:
        trace = json.load(f)
    rows = sum(1 for e in trace["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name")
    stages = len(result["stages"])
    assert stages == 8
    assert charts["chart-timeline"]["yticks"] == rows == 4 * stages  # compute, tp, dp, pp per stage
    assert charts["chart-timeline"]["bars"] == timeline_bars(trace, result["step_time_s"])
    assert charts["chart-breakdown"]["bars"] == 3 * stages
    parts = [k for k in result["stages"][0]["memory_bytes"] if k != "total"]
    assert charts["chart-memory"]["bars"] == len(parts) * stages
    headline = {t["id"]: t for t in browser.tables(dom)}["table-headline"]
    assert headline["rows"] == 6


def test_serving_page(tmp):
    result, dom, charts = run(tmp, "serving", "run", os.path.join(EXAMPLES, "serving-llama70b-8xh100.yaml"),
                              "--set", "traffic.num_requests=300")
    assert result["requests"] == 300
    # CDFs: the curve and the SLO line (the scenario sets both SLOs); end to end: the curve alone.
    assert charts["chart-ttft"]["lines"] == 2 and charts["chart-tpot"]["lines"] == 2
    assert charts["chart-e2e"]["lines"] == 1
    assert charts["chart-throughput"]["lines"] == 1
    assert charts["chart-kv"]["lines"] == 2  # a line per replica
    assert charts["chart-batches"]["bars"] == 2 * 100  # decode and prefill tokens in 100 intervals
    assert {t["id"] for t in browser.tables(dom)} == {"table-headline", "table-latency"}


def test_capacity_page(tmp):
    result, _, charts = run(tmp, "capacity", "capacity", os.path.join(EXAMPLES, "serving-llama70b-8xh100.yaml"),
                            "--set", "traffic.num_requests=200", "--set", "capacity.seeds=2")
    c = charts["chart-attainment"]
    assert c["markers"] == len(result["probes"]) > 2
    seeds = len({p["seed"] for p in result["probes"]})
    assert c["lines"] == seeds + 2  # each seed's probes, the target, the capacity


def test_search_page(tmp):
    result, dom, charts = run(tmp, "search", "search", os.path.join(EXAMPLES, "search-llama3-70b-64xh100.yaml"),
                              "--max-candidates", "120")
    evaluated = [c for c in result["candidates"] if c["status"] == "evaluated"]
    assert len(evaluated) > 10
    for chart, flag in (("chart-pareto-0", "pareto_throughput_memory"), ("chart-pareto-1", "pareto_goodput_cost")):
        front = sum(1 for c in evaluated if c[flag])
        assert charts[chart]["markers"] == len(evaluated) + front, chart
    ranking = {t["id"]: t for t in browser.tables(dom)}["table-ranking"]
    assert ranking["rows"] == min(30, len(result["ranking"]))


def test_compare_page(tmp):
    result, dom, charts = run(tmp, "compare", "compare", os.path.join(SRC, "scenarios", "measured-kv-offload.yaml"))
    ran = [c for c in result if c["status"] == "ok" and c["measured"] > 0 and c["predicted"] > 0]
    assert charts["chart-parity"]["markers"] == len(ran) == 8
    assert {t["id"]: t for t in browser.tables(dom)}["table-cases"]["rows"] == len(result)


def test_rl_page(tmp):
    trace_path = os.path.join(tmp, "rl-trace.json")
    result, dom, charts = run(tmp, "rl", "run", os.path.join(EXAMPLES, "rl-grpo-qwen3-8b-8xh100.yaml"),
                              "--trace", trace_path)
    with open(trace_path) as f:
        trace = json.load(f)
    phases = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    span = max(e["ts"] + e["dur"] for e in phases) / 1e6
    # A bar per phase (their kinds differ, none merges), a row per pool and thread.
    assert charts["chart-timeline"]["bars"] == timeline_bars(trace, span) == len(phases)
    parts = [k for k in ("rollout_s", "forward_s", "update_s", "sync_s", "offload_s") if k in result["breakdown"]]
    assert charts["chart-phases"]["bars"] == len(parts) == 5


def test_html_refused_where_there_is_no_page_yet(tmp):
    out = os.path.join(tmp, "rl-search.html")
    r = subprocess.run([CLI, "search", os.path.join(EXAMPLES, "rl-search-qwen3-8b-64xh100.yaml"), "--html", out],
                       capture_output=True, text=True, env=CLI_ENV)
    assert r.returncode == 2 and "--html: not yet for RL searches" in r.stderr
    assert not os.path.exists(out)
