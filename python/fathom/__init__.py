"""fathom: predict LLM training steps and serving under traffic on simulated clusters.

    import fathom
    r = fathom.run("scenarios/examples/quickstart.yaml", parallel__tp=2)
    r.step_time_s, r.to_pandas()                # per-stage breakdown
    s = fathom.run("serving.yaml", {"traffic.rate": 8})
    s.to_pandas()                               # one row per request
    fathom.search("search.yaml").to_pandas()    # every candidate, ranked
    fathom.compare("measured.yaml").to_pandas() # predicted against measured
    fathom.export("serving.yaml", "vllm")        # {file: text}: the plan as vLLM takes it
    fathom.run("scenarios/examples/rl-grpo-qwen3-8b-8xh100.yaml").to_pandas()  # RL iterations

A scenario is a file path, a YAML string or a dict (the YAML file's structure). Overrides are a
dict of dotted keys ({"parallel.tp": 2}) and/or keyword arguments with `__` for the dots
(parallel__tp=2), applied as the CLI's --set. Input errors raise fathom.InputError (a
ValueError) with the CLI's file, line and key message. All simulation runs in C++ with the GIL
released, so threads run simulations in parallel.
"""
import os as _os

_here = _os.path.dirname(_os.path.abspath(__file__))
if not _os.environ.get("FATHOM_DATA_DIR") and _os.path.isdir(_os.path.join(_here, "data", "hardware")):
    _os.environ["FATHOM_DATA_DIR"] = _os.path.join(_here, "data")  # an installed wheel carries the catalogs

from . import _fathom  # noqa: E402
from ._fathom import InputError  # noqa: E402,F401
from ._fathom import __version__, data_version  # noqa: E402,F401  (what `fathom --version` prints)
from ._scenario import Scenario, load  # noqa: E402,F401
from ._results import (  # noqa: E402,F401
    CapacityResult,
    CompareResult,
    RlResult,
    RunResult,
    SearchResult,
    ServingResult,
    TrainingResult,
)

__all__ = ["__version__", "data_version", "export", "Scenario", "load", "run", "validate", "capacity", "search", "compare", "InputError", "TrainingResult",
           "RlResult", "RunResult", "ServingResult", "CapacityResult", "SearchResult", "CompareResult"]


def run(scenario, overrides=None, *, requests=True, trace=False, **kwargs):
    """Predict a scenario: a TrainingResult (one step), a ServingResult (the traffic served) or an
    RlResult (an RL post-training loop's iterations).

    requests: keep the per-request rows of a serving run (ServingResult.to_pandas());
    trace: keep the timeline (result.timeline(), the events of `fathom run --trace`).
    """
    s = load(scenario, overrides, **kwargs)
    report = _fathom.run(s._core, requests=requests and s.kind == "serving", trace=trace)
    if s.kind == "rl":
        return RlResult(report)
    return TrainingResult(report) if s.kind == "training" else ServingResult(report)


def validate(scenario, overrides=None, **kwargs):
    """Check a scenario without running it; returns its warnings (keys that cannot change the
    result) and raises InputError on an error."""
    return list(load(scenario, overrides, **kwargs).warnings)


def export(scenario, framework, overrides=None, **kwargs):
    """The plan as `framework` takes it (`fathom export --for`): megatron, nemo, torchtitan (training),
    vllm, sglang, trtllm (serving). Returns {file name: text}, one file per pool of a disaggregated
    layout; a plan the framework cannot express raises InputError naming its key."""
    return dict(_fathom.export_launch(load(scenario, overrides, **kwargs)._core, framework))


def capacity(scenario, overrides=None, **kwargs):
    """The highest request rate whose SLO attainment meets slo.target (`fathom capacity`)."""
    return CapacityResult(_fathom.capacity(load(scenario, overrides, **kwargs)._core))


def _search_share(spec, rank, size, max_candidates):
    """One share of a partitioned search (picklable: runs in another process or on a cluster)."""
    core = Scenario._from_spec(spec)._core
    return _fathom.search(core, threads=1, max_candidates=max_candidates, rank=rank, size=size)["share"]


def search(scenario, overrides=None, *, threads=None, max_candidates=0, executor=None, partitions=None, **kwargs):
    """The plans of the scenario's `search` section, ranked (`fathom search`).

    threads: worker threads in this process (default: the machine's cores).
    executor: any concurrent.futures.Executor (a ProcessPoolExecutor, Dask's Client.get_executor(),
      Ray's); the candidates are split into `partitions` shares (default: the executor's workers)
      exactly as `mpirun -np N fathom search` splits them, each share evaluated by one task, and
      merged here: the same result as one process.
    """
    s = load(scenario, overrides, **kwargs)
    if executor is None:
        n = threads or _os.cpu_count() or 1
        return SearchResult(_fathom.search(s._core, threads=n, max_candidates=max_candidates))
    n = partitions or getattr(executor, "_max_workers", None) or _os.cpu_count() or 1
    futures = [executor.submit(_search_share, s._spec, rank, n, max_candidates) for rank in range(n)]
    shares = [f.result() for f in futures]
    return SearchResult(_fathom.search(s._core, threads=1, max_candidates=max_candidates, rank=-1, size=n, shares=shares))


def compare(measured, *, other_metrics=False, case=None):
    """Every case of a measured-format file against fathom's prediction (`fathom compare`);
    other_metrics adds each case's further measurements, as one `case` does (its id and ids
    `<case>#<n>`)."""
    return CompareResult(_fathom.compare(_os.fspath(measured), other_metrics=other_metrics, case=case or ""))
