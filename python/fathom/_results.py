"""Typed results over the C++ core's flat records; .to_pandas() gives DataFrames (pandas is
imported only when asked for)."""
import json


def _frame(rows, columns=None):
    import pandas as pd

    return pd.DataFrame(rows, columns=columns)


class _Summary:
    """Attribute access to a report's summary fields (r.step_time_s); r.summary is the dict."""

    _tables = ()

    def __init__(self, report):
        self.summary = {k: v for k, v in report.items() if k not in self._tables and k != "trace_json"}
        self._trace = report.get("trace_json")

    def __getattr__(self, name):
        summary = self.__dict__.get("summary", {})
        if name in summary:
            return summary[name]
        raise AttributeError(f"{type(self).__name__} has no field {name!r} (see .summary)")

    def __getitem__(self, name):
        return self.summary[name]

    def interval(self, metric):
        """The 90% interval (low, high) of a headline metric (step_time_s, tokens_per_s_per_gpu,
        output_tokens_per_s, ttft_ms.p50, ...) from fathom's errors on published measurements, or
        None where the metric has none; interval_notes says which cases it came from."""
        low = self.summary.get(f"interval_90.{metric}.low")
        high = self.summary.get(f"interval_90.{metric}.high")
        return None if low is None or high is None else (low, high)

    @property
    def interval_notes(self):
        return self.summary.get("interval_90.notes", [])

    def timeline(self):
        """The events of the Chrome trace (`fathom run --trace`) as a DataFrame: name, cat, ph, ts
        and dur in microseconds, pid, tid and args (a counter's values; run with trace=True)."""
        return _trace_frame(self._trace)


def _trace_frame(trace):
    if trace is None:
        raise ValueError("run with trace=True to keep the timeline")
    doc = json.loads(trace)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    return _frame([{k: e.get(k) for k in ("name", "cat", "ph", "ts", "dur", "pid", "tid", "args")} for e in events])


class RlResult(_Summary):
    """An RL post-training loop (kind: rl): summary fields (iteration_time_s, samples_per_s_per_gpu,
    breakdown.rollout_s, breakdown.update_s, staleness.mean, rollout.*, update.*, ...) and one row
    per simulated iteration (to_pandas(): when its phases ran, its version and staleness); run with
    trace=True, the iterations as a timeline (timeline())."""

    _tables = ("iterations",)

    def __init__(self, report):
        super().__init__(report)
        self.iterations = report.get("iterations", [])

    def to_pandas(self):
        """One row per simulated iteration."""
        return _frame(self.iterations)

    def __repr__(self):
        s = self.summary
        return (f"RlResult(iteration_time_s={s.get('iteration_time_s')}, samples_per_s_per_gpu="
                f"{s.get('samples_per_s_per_gpu')}, out_of_memory={s.get('out_of_memory')})")


class RunResult:
    """A whole training run (the scenario's `run` section) over its seeds: fields as the `run.*`
    keys of `fathom run --json` without the prefix (r["time_to_target_s.p50"], r["ettr.mean"],
    r["lost_s.restart"], ...; r.fields is the dict), the interruptions by cause (to_pandas()) and,
    run with trace=True, the first seed's run as a timeline (timeline(): `fathom run --run-trace`)."""

    def __init__(self, fields, causes, trace=None):
        self.fields = fields
        self.causes = causes
        self._trace = trace

    def timeline(self):
        """The first seed's whole run as a DataFrame of trace events (name: training, checkpoint
        stall, detection, restart, a failure's cause, ...; ts and dur in microseconds; tid: the
        training, recovery or failures track)."""
        return _trace_frame(self._trace)

    def __getitem__(self, name):
        return self.fields[name]

    def to_pandas(self):
        """One row per failure cause: cause, category, per_hour (the job's rate) and the mean
        interruptions over the seeds."""
        return _frame(self.causes, columns=["cause", "category", "per_hour", "interruptions"])

    def __repr__(self):
        f = self.fields
        days = [f.get(f"time_to_target_s.{q}", 0) / 86400 for q in ("p10", "p50", "p90")]
        return (f"RunResult(time_to_target_days p10/p50/p90={days[0]:.2f}/{days[1]:.2f}/{days[2]:.2f}, "
                f"ettr={f.get('ettr.mean', 0):.3f}, interruptions={f.get('interruptions', 0):.1f})")


class TrainingResult(_Summary):
    """One training step: summary fields (step_time_s, tokens_per_s_per_gpu, mfu,
    peak_memory_bytes, out_of_memory, ...) and the per-stage breakdown (to_pandas()); with a `run`
    section, the whole run as .run (a RunResult; None without one, or when the step does not fit)."""

    _tables = ("stages", "run_interruptions")

    def __init__(self, report):
        super().__init__(report)
        self.stages = report.get("stages", [])
        fields = {k[len("run."):]: v for k, v in self.summary.items() if k.startswith("run.")}
        self.run = RunResult(fields, report.get("run_interruptions", []), report.get("run_trace_json")) if fields else None

    def to_pandas(self):
        """One row per pipeline stage: compute and communication seconds, memory in bytes."""
        return _frame(self.stages)

    def __repr__(self):
        s = self.summary
        band = self.interval("step_time_s")
        within = f" (90%: {band[0]:.4g}-{band[1]:.4g})" if band else ""
        return (f"TrainingResult(step_time_s={s.get('step_time_s')}{within}, mfu={s.get('mfu')}, "
                f"out_of_memory={s.get('out_of_memory')}, device_model={s.get('device_model')})")


class ServingResult(_Summary):
    """A serving run: summary fields (requests_per_s, ttft_ms, tpot_ms percentiles, slo_attainment,
    goodput_requests_per_s, ...) and one row per request (to_pandas())."""

    _tables = ("requests", "slo_classes")

    def __init__(self, report):
        super().__init__(report)
        self.requests = report.get("requests", [])
        self.slo_classes = report.get("slo_classes", [])

    def to_pandas(self):
        """One row per request: arrival_s, queue_s, ttft_s, tpot_s, e2e_s, tokens, slo_met, ..."""
        return _frame(self.requests)

    def __repr__(self):
        s = self.summary
        return (f"ServingResult(requests_per_s={s.get('requests_per_s')}, slo_attainment={s.get('slo_attainment')}, "
                f"goodput_requests_per_s={s.get('goodput_requests_per_s')})")


class CapacityResult(_Summary):
    """capacity_requests_per_s (median over seeds), capacity_min and capacity_max, per_seed,
    below_min_rate / above_max_rate, and every probe (seed, rate, slo_attainment, goodput;
    to_pandas()): the keys of `fathom capacity --json`."""

    _tables = ("probes",)

    def __init__(self, report):
        super().__init__(report)
        self.probes = report["probes"]

    def to_pandas(self):
        return _frame(self.probes)


class SearchResult:
    """A plan search: every candidate (evaluated, pruned with its reason, out of memory), the
    ranking (candidate indices, best first), and to_pandas() with a `rank` column (NaN for the
    candidates not ranked). With a `run` section, the whole runs of the plans that fit crossed with
    the search's run settings: .runs (records), .run_ranking (fastest to target first) and
    runs_to_pandas()."""

    def __init__(self, report):
        self.kind = report["kind"]
        self.objective = report["objective"]
        self.candidates = report["candidates"]
        self.ranking = list(report["ranking"])
        self.evaluated, self.pruned = report["evaluated"], report["pruned"]
        self.out_of_memory, self.skipped = report["out_of_memory"], report["skipped"]
        self.truncated = report["truncated"]
        self.truncation = report["truncation"]  # why the enumeration stopped short, "" when it did not
        self.runs = report.get("runs", [])
        self.run_ranking = list(report.get("run_ranking", []))

    @property
    def best(self):
        """The best candidate's record (None when nothing was evaluated)."""
        return self.candidates[self.ranking[0]] if self.ranking else None

    def to_pandas(self):
        df = _frame(self.candidates)
        rank = {index: k + 1 for k, index in enumerate(self.ranking)}
        df["rank"] = df["index"].map(rank)
        return df

    def runs_to_pandas(self):
        """One row per whole run (plan and run settings) with a `rank` column by time to target."""
        df = _frame(self.runs)
        if len(self.runs):
            rank = {index: k + 1 for k, index in enumerate(self.run_ranking)}
            df["rank"] = df["index"].map(rank)
        return df

    def __repr__(self):
        return (f"SearchResult({self.kind}, {len(self.candidates)} candidates: {self.evaluated} evaluated, {self.pruned} "
                f"pruned, {self.out_of_memory} out of memory)")


class CompareResult:
    """Every case of a measured-format file: measured, predicted, error ((predicted - measured) /
    measured), or the reason it is unsupported."""

    def __init__(self, rows):
        self.rows = rows

    def to_pandas(self):
        return _frame(self.rows)

    def __len__(self):
        return len(self.rows)
