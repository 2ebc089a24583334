# The Python package against the CLI: the same numbers (bit-identical through the same C++ core),
# DataFrames of the documented shapes, overrides, errors, parallel runs and partitioned searches.
import concurrent.futures as cf
import csv
import json
import os
import subprocess
import tempfile
import threading
import time

import pytest
import yaml

import fathom

SRC = os.environ["FATHOM_SOURCE_DIR"]
CLI = os.environ["FATHOM_CLI"]
EX = os.path.join(SRC, "scenarios", "examples")
QUICKSTART = os.path.join(EX, "quickstart.yaml")
SERVING = os.path.join(EX, "serving-llama70b-8xh100.yaml")
MEASURED = os.path.join(SRC, "tests", "data", "measured_frozen.yaml")
# The CLI in a subprocess runs without LD_PRELOAD: under tools/sanitize_and_fuzz.sh the sanitizer
# runtime is preloaded into Python for the extension, and the CLI carries its own (static) one.
CLI_ENV = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}


def cli_json(*args):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out.json")
        subprocess.run([CLI, *args, "--json", out], check=True, capture_output=True, env=CLI_ENV)
        with open(out) as f:
            return json.load(f)


def test_training_run_and_stages_match_the_cli():
    r = fathom.run(QUICKSTART)
    cli = cli_json("run", QUICKSTART)
    assert isinstance(r, fathom.TrainingResult)
    assert r.step_time_s == cli["step_time_s"]  # same engine, bit-identical
    df = r.to_pandas()
    assert len(df) == len(cli["stages"])
    assert list(df["compute_s"]) == [s["compute_s"] for s in cli["stages"]]
    assert df["memory_bytes.total"][0] == r.peak_memory_bytes  # dotted names are single columns


def test_run_search_matches_the_cli():
    # A search over whole runs (plans that fit x run settings, ranked by time to target):
    # the runs' records and ranking, bit-identical to `fathom search --json`'s whole_runs.
    scenario = os.path.join(EX, "run-search-llama3-70b-1kxh100.yaml")
    r = fathom.search(scenario, threads=2, run__seeds=10)
    cli = cli_json("search", scenario, "--set", "run.seeds=10")["whole_runs"]
    assert r.run_ranking == cli["ranking"]
    assert len(r.runs) == len(cli["runs"]) == 4 * 36
    best = r.runs[r.run_ranking[0]]
    assert best["time_to_target_s.p50"] == cli["runs"][cli["ranking"][0]]["time_to_target_s"]["p50"]
    df = r.runs_to_pandas()
    assert df.loc[df["rank"] == 1, "index"].iloc[0] == r.run_ranking[0]
    assert set(df["recovery"]) == {"restart", "elastic"}


def test_whole_run_matches_the_cli():
    # A whole run (the example's 16k-GPU Llama 3.1 405B pre-training, 20 seeds): the run.* fields
    # and the interruptions by cause, bit-identical to `fathom run --json`.
    scenario = os.path.join(EX, "run-llama3-405b-16kxh100.yaml")
    r = fathom.run(scenario, run__seeds=20)
    cli = cli_json("run", scenario, "--set", "run.seeds=20")
    assert r.run is not None and r.run["seeds"] == 20
    assert r.run["time_to_target_s.p50"] == cli["run"]["time_to_target_s"]["p50"]
    assert r.run["ettr.mean"] == cli["run"]["ettr"]["mean"]
    df = r.run.to_pandas()
    assert list(df["cause"]) == [c["cause"] for c in cli["run_interruptions"]]
    assert df["interruptions"].sum() == pytest.approx(r.run["interruptions"])
    assert "ettr" in repr(r.run)
    # Its timeline: the first seed's run, as `fathom run --run-trace` writes it.
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "run.json")
        subprocess.run([CLI, "run", scenario, "--set", "run.seeds=20", "--run-trace", path], check=True,
                       capture_output=True, env=CLI_ENV)
        with open(path) as f:
            cli_events = json.load(f)["traceEvents"]
    t = fathom.run(scenario, run__seeds=20, trace=True).run.timeline()
    assert len(t) == len(cli_events)
    assert (t["name"] == "checkpoint load").sum() == sum(e.get("name") == "checkpoint load" for e in cli_events)
    with pytest.raises(ValueError):
        r.run.timeline()
    assert fathom.run(QUICKSTART).run is None


def test_intervals_match_the_cli():
    # The 90% interval of the step time (scenarios/intervals.yaml), as `fathom run --json` gives it.
    r = fathom.run(QUICKSTART)
    cli = cli_json("run", QUICKSTART)
    low, high = r.interval("step_time_s")
    assert (low, high) == (cli["interval_90"]["step_time_s"]["low"], cli["interval_90"]["step_time_s"]["high"])
    assert low < r.step_time_s < high
    assert "training/dense" in r.interval_notes[0]
    assert r.interval("no_such_metric") is None
    assert r.device_model == "measured" and "90%" in repr(r)


def test_serving_requests_match_the_cli_csv():
    s = fathom.run(SERVING, traffic__num_requests=300)
    with tempfile.TemporaryDirectory() as d:
        req = os.path.join(d, "r.csv")
        subprocess.run([CLI, "run", SERVING, "--set", "traffic.num_requests=300", "--requests", req], check=True,
                       capture_output=True, env=CLI_ENV)
        with open(req) as f:
            rows = list(csv.DictReader(f))
    df = s.to_pandas()
    assert df.shape[0] == 300 == len(rows)
    assert list(df.columns) == list(rows[0].keys())  # the --requests columns, in order
    assert [float(r["ttft_s"]) for r in rows] == pytest.approx(list(df["ttft_s"]), rel=1e-6)
    assert s.requests_per_s > 0 and 0 <= s.slo_attainment <= 1


def test_scenario_from_yaml_text_and_dict_equals_the_file():
    text = open(QUICKSTART).read()
    a = fathom.run(QUICKSTART).step_time_s
    assert fathom.run(text).step_time_s == a
    assert fathom.run(yaml.safe_load(text)).step_time_s == a


def test_overrides_by_dict_and_keyword_agree():
    a = fathom.run(QUICKSTART, {"parallel.tp": 2, "parallel.cp": 1})
    b = fathom.run(QUICKSTART, parallel__tp=2, parallel__cp=1)
    assert a.step_time_s == b.step_time_s != fathom.run(QUICKSTART).step_time_s
    sc = fathom.load(QUICKSTART).with_(parallel__tp=4, parallel__cp=1)
    assert sc.kind == "training" and sc.gpus == 8


def test_input_errors_carry_file_line_and_key():
    with pytest.raises(fathom.InputError) as e:
        fathom.run(QUICKSTART, parallel__tp=3)
    assert isinstance(e.value, ValueError)
    assert "quickstart.yaml" in str(e.value) and "key 'parallel.tp'" in str(e.value)
    bad = yaml.safe_load(open(QUICKSTART).read())
    bad["training"]["micro_batch_size"] = "two"
    with pytest.raises(fathom.InputError, match=r"<dict>:\d+: key 'training.micro_batch_size'"):
        fathom.load(bad)
    with pytest.raises(fathom.InputError, match="unknown key 'tpp'"):
        fathom.load(QUICKSTART, parallel__tpp=2)


def test_yaml_alias_cycles_and_bombs_are_input_errors():
    # A dict that contains itself (PyYAML writes it as an alias of its own anchor) and a YAML string
    # with one: refused at load naming the line, not a RecursionError or a crash (issue 37).
    d = yaml.safe_load(open(QUICKSTART).read())
    d["notes"] = [d]
    with pytest.raises(fathom.InputError, match=r"key 'notes\[0\]': a dict inside itself"):
        fathom.load(d)
    with pytest.raises(fathom.InputError, match=r"<string>:3: YAML nested deeper than 64 levels"):
        fathom.load("name: x\nkind: training\nnotes: &a [*a]\n")
    bomb = "".join(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9 if i else ["x"] * 9) + "]\n" for i in range(10))
    with pytest.raises(fathom.InputError, match="expands to more than 1000000 values"):
        fathom.load("name: x\nkind: training\n" + bomb)


def test_dicts_python_cannot_write_as_yaml_are_input_errors():
    # PyYAML raised RepresenterError for a value it cannot write and RecursionError for a dict
    # nested a thousand deep; each is an InputError naming the key (issue 37).
    d = yaml.safe_load(open(QUICKSTART).read())
    d["training"]["seq_len"] = object()
    with pytest.raises(fathom.InputError, match=r"key 'training.seq_len': an? object is not a scenario value"):
        fathom.load(d)
    deep = cur = {}
    for _ in range(2000):
        cur["x"] = {}
        cur = cur["x"]
    with pytest.raises(fathom.InputError, match="nested deeper than 64 levels"):
        fathom.load(deep)
    with pytest.raises(fathom.InputError, match=r"key 'parallel.tp': a set is not a scenario value"):
        fathom.load(QUICKSTART, parallel__tp={2})
    with pytest.raises(fathom.InputError, match=r"keys are names \(text\), got 3"):
        fathom.load({3: "x"})
    # Text that cannot be UTF-8 (a lone surrogate): pybind11 raised TypeError (tools/fuzz/fuzz_python.py).
    with pytest.raises(fathom.InputError, match=r"key 'name': not UTF-8 text at character 1"):
        fathom.load(QUICKSTART, name="x\udcffy")
    with pytest.raises(fathom.InputError, match=r"<string>: not UTF-8 text"):
        fathom.load("name: x\udcff\nkind: training\n")
    # numpy's numbers (a notebook's usual values) are numbers.
    np = pytest.importorskip("numpy")
    d = yaml.safe_load(open(QUICKSTART).read())
    d["parallel"] = {"tp": np.int64(4), "pp": 1, "cp": 1}
    d["training"]["global_batch_size"] = np.int32(64)
    assert fathom.load(d).gpus == 8


def test_validate_returns_warnings():
    assert any("seed" in w for w in fathom.validate(QUICKSTART, seed=7))
    assert fathom.validate(QUICKSTART) == []


def test_capacity_matches_the_cli():
    c = fathom.capacity(SERVING, traffic__num_requests=200, capacity__seeds=1)
    cli = cli_json("capacity", SERVING, "--set", "traffic.num_requests=200", "--set", "capacity.seeds=1")
    assert c.capacity_requests_per_s == cli["capacity_requests_per_s"]
    assert len(c.to_pandas()) == len(c.probes) == len(cli["probes"])


def test_search_dataframe_and_ranking_match_the_cli():
    s = fathom.search(SERVING, traffic__num_requests=200, threads=2)
    cli = cli_json("search", SERVING, "--set", "traffic.num_requests=200", "--threads", "2")
    assert s.ranking == cli["ranking"]
    df = s.to_pandas()
    assert len(df) == len(cli["candidates"])
    best = df.sort_values("rank").iloc[0]
    assert best["index"] == cli["ranking"][0] and best["rank"] == 1
    assert df["status"].isin(["evaluated", "pruned", "out_of_memory"]).all()
    # Each evaluated candidate's throughput interval, as the CLI's --json gives it.
    best_cli = next(c for c in cli["candidates"] if c["index"] == cli["ranking"][0])
    assert best["output_tokens_per_s_low"] == best_cli["output_tokens_per_s_low"]
    assert best["output_tokens_per_s_low"] < best["output_tokens_per_s"] < best["output_tokens_per_s_high"]


def test_search_on_a_process_pool_equals_one_process():
    # The executor path: shares of the candidates (the MPI partitioning) evaluated by other
    # processes and merged here.
    one = fathom.search(os.path.join(EX, "search-llama3-70b-64xh100.yaml"), max_candidates=120, threads=1)
    with cf.ProcessPoolExecutor(max_workers=2) as pool:
        split = fathom.search(os.path.join(EX, "search-llama3-70b-64xh100.yaml"), max_candidates=120, executor=pool)
    assert split.ranking == one.ranking
    assert split.candidates == one.candidates


def test_search_on_dask_when_installed():
    distributed = pytest.importorskip("dask.distributed")
    with distributed.Client(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as client:
        split = fathom.search(SERVING, traffic__num_requests=100, executor=client.get_executor(), partitions=2)
    assert split.ranking == fathom.search(SERVING, traffic__num_requests=100, threads=1).ranking


def test_compare_matches_the_cli():
    rows = fathom.compare(MEASURED, case="trn-nemo2407-llama2-70b-64").to_pandas()
    cli = cli_json("compare", MEASURED, "--case", "trn-nemo2407-llama2-70b-64")
    assert list(rows["id"]) == [c["id"] for c in cli]
    assert list(rows["predicted"]) == [c["predicted"] for c in cli]


def test_timeline_events():
    tl = fathom.run(QUICKSTART, trace=True).timeline()
    assert {"name", "ph", "ts", "dur", "pid", "tid"} <= set(tl.columns)
    assert (tl[tl["ph"] == "X"]["dur"] >= 0).all()


def test_threads_run_simulations_beside_python_with_identical_results():
    # The GIL is released while simulating: while one thread is inside a long run, the main
    # thread keeps executing Python. Were the GIL held for the whole call, no bytecode of the main
    # thread could run between the call's entry and exit, so no tick of its loop could fall in the
    # middle half of that window, however fast or busy the machine (a check of behaviour, not of
    # wall-clock speed). Runs on 2 threads also give the numbers of runs one after another.
    window = {}

    def work(rate, num_requests=6000):
        return fathom.run(SERVING, traffic__rate=rate, traffic__num_requests=num_requests, requests=False).summary

    def timed():
        window["enter"] = time.perf_counter()
        work(5, num_requests=20000)
        window["exit"] = time.perf_counter()

    worker = threading.Thread(target=timed)
    ticks = []
    worker.start()
    while worker.is_alive():
        ticks.append(time.perf_counter())
    worker.join()
    quarter = (window["exit"] - window["enter"]) / 4
    inside = [t for t in ticks if window["enter"] + quarter < t < window["exit"] - quarter]
    assert inside, "the main thread never ran during the simulation: the GIL was held"

    rates = [4, 5, 6, 7]
    serial = [work(r) for r in rates]
    with cf.ThreadPoolExecutor(max_workers=2) as pool:
        parallel = list(pool.map(work, rates))
    assert parallel == serial


def test_rl_run_and_search_match_the_cli():
    # An RL scenario (kind: rl): the iteration and its rows as `fathom run --json` gives them,
    # and a small RL search's ranking as `fathom search --json` gives it.
    rl = os.path.join(EX, "rl-grpo-qwen3-8b-8xh100.yaml")
    r = fathom.run(rl, trace=True)
    cli = cli_json("run", rl)
    assert isinstance(r, fathom.RlResult)
    assert r.iteration_time_s == cli["iteration_time_s"]
    assert r["breakdown.rollout_s"] == cli["breakdown"]["rollout_s"]
    df = r.to_pandas()
    assert list(df["rollout_s"]) == [i["rollout_s"] for i in cli["iterations"]]
    assert set(r.timeline()["name"]) >= {"rollout", "update"}
    overrides = {"rl.prompts": 16, "rl.samples": 4, "search.rl_layout": ["colocated", "disaggregated"],
                 "search.rl_rollout_gpus": [4], "search.rl_staleness": [0, 1]}
    s = fathom.search(rl, overrides, threads=2)
    sets = [a for k, v in overrides.items() for a in ("--set", f"{k}={json.dumps(v) if isinstance(v, list) else v}")]
    rows = cli_json("search", rl, *sets)
    best = s.best
    ranked = sorted((x for x in rows if x["rank"] > 0), key=lambda x: x["rank"])
    assert best["layout"] == ranked[0]["layout"]
    assert best["samples_per_s_per_gpu"] == ranked[0]["samples_per_s_per_gpu"]
    assert s.kind == "rl"
    assert len(s.to_pandas()) == len(rows)
