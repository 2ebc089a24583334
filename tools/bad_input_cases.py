"""The corpus of tools/bad_input_report.py: every wrong or extreme input, by class, built from the
project's own examples (quickstart, a measured case, a calibration CSV, a request trace), with what
each message must say (EXPECT) and which extremes must be answered (ANSWERED).
"""
import re

from bad_input_base import QUICKSTART, ROOT, SERVING, SYNTHETIC, sub
from bad_input_export import EXPORT_EXPECT, export_cases, import_cases
from bad_input_rl import RL_EXPECT, rl_cases
from bad_input_run_cases import RUN_EXPECT, run_cases
from bad_input_serving import SERVING_EXPECT, autoscale_cases, lora_cases, speculative_cases

RL_EXAMPLE = (ROOT / "scenarios/examples/rl-grpo-qwen3-8b-8xh100.yaml").read_text()
# One frozen training case (NeMo 24.07, Llama 3 8B on 8 H100) as a measurement file.
_FROZEN = (ROOT / "tests/data/measured_frozen.yaml").read_text()
FROZEN_ONE = "format_version: 1\ncases:\n" + _FROZEN[_FROZEN.index("- id: trn-nemo2407-llama3-8b-8"):
                                                    _FROZEN.index("- id: trn-nemo2407-llama3-70b-64")]

TRACE_HEAD = "arrival_s,prompt_tokens,output_tokens\n"
TRACE_ROWS = "0.0,512,64\n0.5,1024,32\n1.0,256,128\n"
MEASURED = re.sub(r"\n    pp: 0\n", "\n    pp: 8\n",
                  (ROOT / "tests/cli/bad/measured_pp_zero.yaml").read_text().split("\n", 1)[1])
CALIB_HEAD = ("op,dtype,m,n,k,batch,heads,kv_heads,seq_len,kv_len,head_dim,causal,bytes,time_us,"
              "time_p10_us,time_p90_us,achieved,source\n")
CALIB_ROW = "gemm,bf16,4096,4096,4096,1,,,,,,,,180.0,178.0,182.0,,test\n"
ESC = "\x1b"




def training(old, new):
    return sub(QUICKSTART, old, new)


def measured(old, new):
    return sub(MEASURED, old, new)


OTHER_METRIC = """
  other_metrics:
  - metric: tokens_per_s_per_gpu
    value: 700
    unit: tokens/s/gpu
    statistic: single
    scope: per_gpu
    variant:
      {variant}
  notes:"""

INLINE_MODEL = """model:
  name: tiny
  layers: {layers}
  hidden: 1024
  heads: 8
  kv_heads: {kv}
  ffn: 4096
  vocab: 32000
  head_dim: {head_dim}
  activation: swiglu
  norm: rmsnorm
"""


# A Llama 3.1 405B step of 1,000 micro-batches of 64 x 128k tokens on 8 GPUs: valid until its
# simulated clock passes about 106 days, an error found only while simulating.
LONG_STEP = (QUICKSTART.replace("model: llama3-8b", "model: llama3.1-405b").replace("tp: 1", "tp: 8").replace("cp: 2", "cp: 1")
             .replace("seq_len: 8192", "seq_len: 131072").replace("micro_batch_size: 1", "micro_batch_size: 64")
             .replace("global_batch_size: 128", "global_batch_size: 64000"))


def crash_cases(add):
    """Crashes the issue found."""
    for name, old, new in (
        ("measured pp 0", "\n    pp: 8\n", "\n    pp: 0\n"),
        ("measured vp 0", "vp: 6", "vp: 0"),
    ):
        add("crash-class", name, {"m.yaml": measured(old, new)}, "compare", "IN")
    add("crash-class", "measured variant gpus_per_node 0",
        {"m.yaml": measured("\n  notes:", OTHER_METRIC.format(variant="cluster.gpus: 64\n      cluster.gpus_per_node: 0"))},
        "compare", "IN", "--other-metrics")
    add("crash-class", "calibration CSV header only", {"c.csv": CALIB_HEAD}, "calibrate", "fit", "IN", "--device", "h100-sxm-80gb")
    add("crash-class", "calibration CSV no usable row", {"c.csv": CALIB_HEAD + "gemm,bf16,,,,,,,,,,,,,,,,x\n"},
        "calibrate", "fit", "IN", "--device", "h100-sxm-80gb")


def accepted_cases(add):
    """Wrong inputs that were accepted and answered (issue 37's wrong acceptances)."""
    synthetic = SYNTHETIC
    add("accepted-class", "warm-up requests >= requests", {"s.yaml": synthetic}, "validate", "IN", "--set", "traffic.warmup_requests=50")
    add("accepted-class", "warm-up requests >= trace rows", {"s.yaml": SERVING, "trace.csv": TRACE_HEAD + TRACE_ROWS},
        "run", "IN", "--set", "traffic.warmup_requests=3")
    add("accepted-class", "capacity min_rate > max_rate", {"s.yaml": synthetic}, "validate", "IN",
        "--set", "capacity.min_rate=20", "--set", "capacity.max_rate=5")
    add("accepted-class", "empty search axis", {"s.yaml": QUICKSTART + "search:\n  tp: []\n"}, "validate", "IN")
    add("accepted-class", "measured file without cases", {"m.yaml": "format_version: 1\ncases: []\n"}, "compare", "IN")
    add("accepted-class", "measured duplicate case id", {"m.yaml": MEASURED + MEASURED.split("cases:\n", 1)[1]}, "compare", "IN")
    add("accepted-class", "calibration CSV unknown op", {"c.csv": CALIB_HEAD + "rmsnrom,bf16,,,,,,,,,,,1048576,5.0,,,,test\n"},
        "calibrate", "fit", "IN", "--device", "h100-sxm-80gb")


def name_cases(add):
    """Names printed to stdout or written to JSON (issue 37: they reached the terminal raw)."""
    q = QUICKSTART.split("\n")
    named = lambda name: "\n".join(f"name: \"{name}\"" if l.startswith("name:") else l for l in q)
    add("name-class", "escape sequence in the scenario name", {"s.yaml": named(f"x{ESC}[2Jy")}, "run", "IN")
    add("name-class", "non-UTF-8 scenario name with --json", {"s.yaml": named("x\udcffy")}, "run", "IN", "--json", "OUT")
    add("name-class", "escape sequence in a trace SLO class",
        {"s.yaml": SERVING, "trace.csv": "arrival_s,prompt_tokens,output_tokens,slo_class\n0.0,512,64,a" + ESC + "[2Jb\n"}, "run", "IN")
    add("name-class", "escape sequence in a measured case id",
        {"m.yaml": measured("id: trn-nemo2407-gpt3-175b-128", f"id: \"trn{ESC}[2J\"")}, "compare", "IN")


def overflow_cases(add):
    """Products of parallel degrees past 2^31 (issue 37: they wrapped to 0 and divided, SIGFPE)."""
    for name, sets in (("tp x pp 2^32", ["parallel.tp=65536", "parallel.pp=65536"]),
                       ("dp x micro-batch 2^32", ["parallel.dp=65536", "training.micro_batch_size=65536", "parallel.cp=1"]),
                       ("cp 2^31-1", ["parallel.cp=2147483647"])):
        args = [a for s in sets for a in ("--set", s)]
        add("overflow-class", name, {"s.yaml": QUICKSTART}, "validate", "IN", *args)
    add("overflow-class", "serving tp x pp 2^32", {"s.yaml": SERVING, "trace.csv": TRACE_HEAD + TRACE_ROWS},
        "validate", "IN", "--set", "serving.tp=65536", "--set", "serving.pp=65536")


def internal_cases(add):
    """Internal errors the issue found."""
    for v in ("abc", "", "1.5", "nan", "1e400", "[2]"):
        add("internal-class", f"--set parallel.tp={v!r}", {"s.yaml": QUICKSTART}, "validate", "IN", "--set", f"parallel.tp={v}")
    add("internal-class", "--set without =", {"s.yaml": QUICKSTART}, "validate", "IN", "--set", "parallel.tp")
    add("internal-class", "--set unknown key", {"s.yaml": QUICKSTART}, "validate", "IN", "--set", "parallel.tpp=2")
    add("internal-class", "YAML sequence as a key", {"s.yaml": QUICKSTART + "? [a, b]\n: 1\n"}, "validate", "IN")
    add("internal-class", "YAML mapping as a key", {"s.yaml": QUICKSTART + "? {a: 1}\n: 1\n"}, "validate", "IN")
    for name, old, new in (
        ("measured value not a number", "value: 726", "value: fast"),
        ("measured value a mapping", "value: 726", "value: {a: 1}"),
        ("measured value a list", "value: 726", "value: [1, 2]"),
        ("measured id a mapping", "id: trn-nemo2407-gpt3-175b-128", "id: {a: 1}"),
        ("measured layers a list", "layers: 96", "layers: [96]"),
    ):
        add("internal-class", name, {"m.yaml": measured(old, new)}, "compare", "IN")
    add("internal-class", "global batch 1e15 (allocation)", {"s.yaml": training("global_batch_size: 128", "global_batch_size: 1000000000000000")},
        "run", "IN")


def silent_cases(add):
    """Silently accepted with another meaning."""
    for name, old, new in (
        ("tp 2^32+2 (wraps to 2)", "tp: 1", "tp: 4294967298"),
        ("nodes 2^32+1 (wraps to 1)", "nodes: 1", "nodes: 4294967297"),
        ("gpus_per_node 2^64+8", "gpus_per_node: 8", "gpus_per_node: 18446744073709551624"),
        ("duplicate key", "  pp: 1\n", "  pp: 1\n  tp: 2\n"),
        ("number with trailing text", "seq_len: 8192", "seq_len: 8192abc"),
        ("fraction for an integer", "seq_len: 8192", "seq_len: 8192.5"),
        ("negative integer", "seq_len: 8192", "seq_len: -8192"),
        ("hex integer", "seq_len: 8192", "seq_len: 0x2000"),
        ("micro-batch 0", "micro_batch_size: 1", "micro_batch_size: 0"),
        ("zero stage 7", "zero_stage: 1", "zero_stage: 7"),
        ("global batch 1e400", "global_batch_size: 128", "global_batch_size: 1e400"),
    ):
        add("silent-class", name, {"s.yaml": training(old, new)}, "validate", "IN")
    add("silent-class", "duplicate section", {"s.yaml": QUICKSTART + "parallel:\n  tp: 2\n"}, "validate", "IN")
    add("silent-class", "second YAML document", {"s.yaml": QUICKSTART + "---\nkind: training\n"}, "validate", "IN")
    add("silent-class", "list item with trailing text",
        {"s.yaml": QUICKSTART + "search:\n  objective: throughput\n  tp: [1abc, 2]\n"}, "validate", "IN")
    for key, v in (("oversubscription", ".nan"), ("oversubscription", "0"), ("oversubscription", "-2"),
                   ("oversubscription", ".inf"), ("nodes_per_leaf", "0")):
        add("silent-class", f"scale_out.{key} {v}",
            {"s.yaml": training("  gpus_per_node: 8\n", f"  gpus_per_node: 8\n  scale_out: {{{key}: {v}}}\n")}, "validate", "IN")
    for v in ("0", "-4", ".nan", "1e400", "25 MB"):
        add("silent-class", f"stack.bucket_size {v}", {"s.yaml": training("  dtype: bf16\n", f"  dtype: bf16\n  bucket_size: {v}\n")},
            "validate", "IN")
    for layers, kv, hd in (("0", "8", "128"), ("-1", "8", "128"), ("4", "0", "128"), ("4", "8", "0"), ("4", "8", ".nan"), ("4", "3", "128")):
        add("silent-class", f"inline model layers {layers} kv_heads {kv} head_dim {hd}",
            {"s.yaml": training("model: llama3-8b\n", INLINE_MODEL.format(layers=layers, kv=kv, head_dim=hd))}, "validate", "IN")
    for name, old, new in (
        ("measured layers 0", "layers: 96", "layers: 0"),
        ("measured kv_heads 0", "kv_heads: 96", "kv_heads: 0"),
        ("measured heads not dividing hidden", "heads: 96", "heads: 97"),
        ("measured value negative", "value: 726", "value: -726"),
        ("measured value nan", "value: 726", "value: .nan"),
        ("measured tp 2^32+4", "tp: 4", "tp: 4294967300"),
        ("measured activation unknown", "activation: gelu", "activation: gleu"),
        ("measured dtype unknown", "dtype: fp8", "dtype: fp9"),
    ):
        add("silent-class", name, {"m.yaml": measured(old, new)}, "compare", "IN")
    add("silent-class", "measured variant key unknown",
        {"m.yaml": measured("\n  notes:", OTHER_METRIC.format(variant="training.bogus_key: 3"))}, "compare", "IN", "--other-metrics")
    add("silent-class", "measured variant value text",
        {"m.yaml": measured("\n  notes:", OTHER_METRIC.format(variant="training.tp: many"))}, "compare", "IN", "--other-metrics")
    add("silent-class", "calibration CSV negative time", {"c.csv": CALIB_HEAD + CALIB_ROW.replace("180.0", "-180.0")},
        "calibrate", "fit", "IN", "--device", "h100-sxm-80gb")
    add("silent-class", "calibration CSV shape 2^64", {"c.csv": CALIB_HEAD + CALIB_ROW.replace("4096,4096,4096", "18446744073709551616,4096,4096")},
        "calibrate", "fit", "IN", "--device", "h100-sxm-80gb")


def resource_cases(add):
    """Resource limits."""
    add("resource-class", "global batch 2^31-4, validate", {"s.yaml": training("global_batch_size: 128", "global_batch_size: 2147483644")},
        "validate", "IN")
    add("resource-class", "a million micro-batches, run", {"s.yaml": training("global_batch_size: 128", "global_batch_size: 4194304")},
        "run", "IN")
    add("resource-class", "simulated clock beyond 106 days", {"s.yaml": LONG_STEP}, "run", "IN")
    huge = ["--set", "traffic.num_requests=2147483647"]
    add("resource-class", "2^31-1 requests, run", {"s.yaml": SYNTHETIC}, "run", "IN", *huge)
    add("resource-class", "2^31-1 requests, validate", {"s.yaml": SYNTHETIC}, "validate", "IN", *huge)
    add("resource-class", "2^31-1 requests, capacity", {"s.yaml": SYNTHETIC}, "capacity", "IN", *huge)
    add("resource-class", "trace past --max-requests", {"s.yaml": SERVING, "trace.csv": TRACE_HEAD + TRACE_ROWS},
        "run", "IN", "--max-requests", "2")
    big = ["--set", "cluster.nodes=1000000", "--set", "training.global_batch_size=4000000"]
    add("resource-class", "a million nodes, topology", {"s.yaml": QUICKSTART}, "topology", "IN", *big, "-o", "OUT")
    add("resource-class", "a million nodes, simgrid", {"s.yaml": QUICKSTART}, "run", "IN", *big, "--network", "simgrid")
    # Past the lower bound only as it is built: 20,000 dragonfly groups of one node, all-to-all.
    add("resource-class", "a quadratic dragonfly, topology", {"s.yaml": QUICKSTART}, "topology", "IN",
        "--set", "cluster.nodes=20000", "--set", "training.global_batch_size=80000",
        "--set", "cluster.scale_out.topology=dragonfly", "--set", "cluster.scale_out.nodes_per_leaf=1", "-o", "OUT")
    # 64 tp x 80 pp x 20 vp x 32 micro-batch x 40 global batch x 2 x 3 x 2 = 786M combinations.
    search = sub(QUICKSTART, "stack:", "search:\n" + "".join(
        f"  {k}: [{', '.join(str(v) for v in vals)}]\n" for k, vals in (
            ("tp", range(1, 65)), ("pp", range(1, 81)), ("vp", range(1, 21)), ("micro_batch_size", range(1, 33)),
            ("global_batch_size", range(64, 2600, 64)), ("zero_stage", (1, 3)),
            ("recompute", ("none", "selective", "full")), ("dtype", ("bf16", "fp8")))) + "stack:")
    add("resource-class", "a search of 786M combinations", {"s.yaml": search}, "search", "IN")
    add("resource-class", "a search of 786M combinations, --time-limit 1", {"s.yaml": search}, "search", "IN",
        "--time-limit", "1", "--threads", "2")
    add("resource-class", "serving run past 106 days", {"s.yaml": SYNTHETIC}, "run", "IN", "--set", "traffic.rate=1e-7")
    # A correct answer, bounded: the cost follows the 10 requests, not the 2^31 clients.
    add("resource-class", "closed loop of 2^31-1 clients, 10 requests", {"s.yaml": SYNTHETIC}, "run", "IN",
        "--set", "traffic.arrival=concurrency", "--set", "traffic.concurrency=2147483647",
        "--set", "traffic.num_requests=10")


def output_cases(add):
    """Output safety: escapes in messages, no partial output files."""
    add("output-class", "escape sequence in a key", {"s.yaml": QUICKSTART + f"bogus{ESC}[2J{ESC}]0;pwned{ESC}\\: 1\n"}, "validate", "IN")
    add("output-class", "escape sequence in a value", {"s.yaml": training("model: llama3-8b", f"model: \"llama{ESC}[31m\"")}, "validate", "IN")
    add("output-class", "escape sequence in --set", {"s.yaml": QUICKSTART}, "validate", "IN", "--set", f"stack.dtype=bf{ESC}[5m16")
    add("output-class", "escape sequence in a measured id", {"m.yaml": measured("value: 726", "value: \"7\x1b[2J26\"")}, "compare", "IN")
    add("output-class", "--json after a late error", {"s.yaml": LONG_STEP}, "run", "IN", "--json", "OUT")
    add("output-class", "--json of a bad scenario", {"s.yaml": training("tp: 1", "tp: 3")}, "run", "IN", "--json", "OUT")
    add("output-class", "-o of a bad search", {"s.yaml": QUICKSTART + "search:\n  objective: speed\n"}, "search", "IN", "-o", "OUT")
    add("output-class", "--html of a bad scenario", {"s.yaml": training("tp: 1", "tp: 3")}, "run", "IN", "--html", "OUT")
    add("output-class", "--html of an RL search", {"s.yaml": RL_EXAMPLE}, "search", "IN", "--html", "OUT")
    add("output-class", "--html of validate", {"s.yaml": QUICKSTART}, "validate", "IN", "--html", "OUT")
    add("output-class", "refit without --device", {"m.yaml": FROZEN_ONE}, "calibrate", "refit", "IN")
    add("output-class", "refit to a device without cases", {"m.yaml": FROZEN_ONE}, "calibrate", "refit", "IN",
        "--device", "a100-sxm-80gb", "-o", "OUT")
    add("output-class", "refit of a file that is not measured-format", {"m.yaml": "hello: 1\n"}, "calibrate", "refit",
        "IN", "--device", "h100-sxm-80gb")


def bomb(key):
    """Ten lists of nine aliases of the one before ("billion laughs": 9^10 values), under `key`."""
    lines = ["l0: &l0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, 10)]
    return "\n".join(lines) + f"\n{key}: *l9\n"


def alias_cases(add):
    """YAML aliases (issue 37): cycles crashed every reader, alias bombs ran for ever."""
    add("alias-class", "alias cycle in a scenario", {"s.yaml": QUICKSTART + "notes: &a [*a]\n"}, "validate", "IN")
    add("alias-class", "alias bomb in a scenario", {"s.yaml": QUICKSTART + bomb("notes")}, "validate", "IN")
    add("alias-class", "alias cycle in slo.classes", {"s.yaml": SERVING.replace("slo: {ttft: 2 s, tpot: 100 ms}", "slo:\n  classes: &c [*c]"),
                                                      "trace.csv": TRACE_HEAD + TRACE_ROWS}, "run", "IN")
    add("alias-class", "alias cycle in a measured file", {"m.yaml": MEASURED + "extra: &n [*n]\n"}, "compare", "IN", "--other-metrics")
    add("alias-class", "alias bomb in a measured file", {"m.yaml": MEASURED + bomb("extra")}, "compare", "IN")
    add("alias-class", "alias cycle in --set", {"s.yaml": QUICKSTART}, "validate", "IN", "--set", "training.layers_per_stage=&a [*a]")


def trace_cases(add):
    """The serving trace reader."""
    for name, text in (("negative arrival", TRACE_HEAD + "-1.0,512,64\n"),
                       ("arrivals out of order", TRACE_HEAD + "1.0,512,64\n0.5,512,64\n"),
                       ("text length", TRACE_HEAD + "0.0,lots,64\n"),
                       ("zero output", TRACE_HEAD + "0.0,512,0\n"),
                       ("fractional tokens", TRACE_HEAD + "0.0,512.5,64\n"),
                       ("missing column", "arrival_s,prompt_tokens\n0.0,512\n"),
                       ("extra field", TRACE_HEAD + "0.0,512,64,9\n"),
                       ("empty", ""),
                       ("header only", TRACE_HEAD),
                       ("nan arrival", TRACE_HEAD + "nan,512,64\n"),
                       ("huge tokens", TRACE_HEAD + "0.0,99999999999999999999,64\n"),
                       ("unterminated quote", TRACE_HEAD + "\"0.0,512,64\n"),
                       ("tokens near 2^63", TRACE_HEAD + "0.0,9223372036854775800,100\n0.5,100,100\n"),
                       ("request longer than max_model_len", TRACE_HEAD + "0.0,512,64\n0.5,9000,64\n"),
                       ("arrival past 106 days", TRACE_HEAD + "0.0,512,64\n1e10,512,64\n")):
        add("trace-class", f"trace {name}", {"s.yaml": SERVING, "trace.csv": text}, "run", "IN")
    add("trace-class", "trace a directory", {"s.yaml": SERVING, "trace.csv": TRACE_HEAD + TRACE_ROWS}, "run", "IN",
        "--set", "traffic.trace=.")


def yaml_cases(add):
    """What yaml-cpp read wrongly or reported poorly (issue 37): the guard in front of it says where."""
    add("yaml-class", "unterminated quote in a scenario", {"s.yaml": QUICKSTART.replace("name: llama3-8b-dgx-h100", 'name: "llama3')},
        "validate", "IN")
    add("yaml-class", "unclosed flow list in a scenario", {"s.yaml": sub(QUICKSTART, "  seq_len: 8192\n", "  seq_len: 8192\n  layers_per_stage: [16, 16\n")},
        "validate", "IN")
    add("yaml-class", "YAML nested 100,000 deep", {"s.yaml": QUICKSTART + "notes: " + "[" * 100000 + "]" * 100000 + "\n"},
        "validate", "IN")
    add("yaml-class", "YAML nested 100,000 deep in a measured file", {"m.yaml": "x: " + "[" * 100000 + "]" * 100000 + "\n" + MEASURED},
        "compare", "IN")


def file_cases(add):
    """Files that are not what they should be: directories, byte order marks, empty cells."""
    for cmd in (["run"], ["compare"], ["calibrate", "fit"], ["calibrate", "layers"]):
        device = ["--device", "h100-sxm-80gb"] if cmd[0] == "calibrate" else []
        add("file-class", f"a directory given to {' '.join(cmd)}", {"s.yaml": QUICKSTART}, *cmd, "DIR", *device)
    # A spreadsheet's export: accepted, as traces accept it.
    add("file-class", "calibration CSV with a byte order mark", {"c.csv": "\ufeff" + CALIB_HEAD + CALIB_ROW},
        "calibrate", "fit", "IN", "--device", "h100-sxm-80gb")
    add("file-class", "layer CSV with a byte order mark",
        {"l.csv": "\ufeffmodel,phase,batch,q_len,kv_len,time_us\r\nllama3-8b,train,1,4096,4096,10805.6\r\n"},
        "calibrate", "layers", "IN", "--device", "h100-sxm-80gb")
    add("file-class", "calibration CSV empty time", {"c.csv": CALIB_HEAD + CALIB_ROW.replace("180.0", "")},
        "calibrate", "fit", "IN", "--device", "h100-sxm-80gb")
    add("file-class", "calibration CSV empty dtype", {"c.csv": CALIB_HEAD + CALIB_ROW.replace("gemm,bf16,", "gemm,,")},
        "calibrate", "fit", "IN", "--device", "h100-sxm-80gb")
    add("file-class", "layer CSV empty model", {"l.csv": "model,phase,batch,q_len,kv_len,time_us\n,train,1,4096,4096,5\n"},
        "calibrate", "layers", "IN", "--device", "h100-sxm-80gb")
    add("file-class", "layer CSV empty batch", {"l.csv": "model,phase,batch,q_len,kv_len,time_us\nllama3-8b,train,,4096,4096,5\n"},
        "calibrate", "layers", "IN", "--device", "h100-sxm-80gb")


def cases():
    """(class, name, files {name: text}, args) for every input; 'IN' in args is the first file."""
    c = []

    def add(cls, name, files, *args):
        c.append((cls, name, files, list(args)))

    for group in (crash_cases, internal_cases, silent_cases, resource_cases, output_cases, trace_cases, alias_cases,
                  overflow_cases, accepted_cases, name_cases, file_cases, yaml_cases, run_cases, speculative_cases,
                  lora_cases, autoscale_cases, rl_cases, export_cases, import_cases):
        group(add)
    return c


# What each input's message must say (the start of the error after "fathom: error: ", file names
# without their temporary folder; for a compare case reported unsupported, its line): an error that
# names the right file, line and key, with the reason.
EXPECT = {
    **RUN_EXPECT,
    **SERVING_EXPECT,
    **RL_EXPECT,
    **EXPORT_EXPECT,
    '2^31-1 requests, run': "s.yaml: key 'traffic.num_requests': impossible plan: 2147483647 requests: more than 10000000",
    '2^31-1 requests, validate': "s.yaml: key 'traffic.num_requests': impossible plan: 2147483647 requests: more than 10000000",
    '2^31-1 requests, capacity': "s.yaml: key 'traffic.num_requests': impossible plan: 2147483647 requests",
    'a million nodes, topology': "s.yaml: key 'cluster.nodes': the cluster's graph would hold at least 64000000 vertices",
    'a million nodes, simgrid': "s.yaml: key 'cluster.nodes': the cluster's graph would hold at least 64000000 vertices",
    'a quadratic dragonfly, topology': "s.yaml: key 'cluster.nodes': the cluster's graph would hold more than 12000000",
    'a search of 786M combinations': "s.yaml: key 'search': the axes cross more than 10000000 combinations (64 tp x 80 pp",
    'serving run past 106 days': "s.yaml: key 'traffic.num_requests': a duration of",
    'trace arrival past 106 days': "trace.csv:3: key 'arrival_s': arrival time 1e+10 s is past the range of simulated time",
    'trace past --max-requests': "trace.csv:4: the trace holds more than 2 requests",
    'trace tokens near 2^63': "trace.csv:2: key 'prompt_tokens': must be <= 2^53 (9007199254740992), got 9223372036854775800",
    'trace request longer than max_model_len': "trace.csv:3: key 'prompt_tokens': request 1 has 9000 prompt + 64 output",
    'trace a directory': "s.yaml: key 'traffic.trace': cannot open the trace '",
    'a directory given to run': ": cannot open the YAML file: it is a directory",
    'a directory given to compare': ": cannot open the YAML file: it is a directory",
    'a directory given to calibrate fit': ": cannot open the measurements file: it is a directory",
    'a directory given to calibrate layers': ": cannot open the layer measurements file: it is a directory",
    'calibration CSV empty dtype': "c.csv:2: key 'dtype': missing value",
    'layer CSV empty model': "l.csv:2: key 'model': missing value",
    'calibration CSV empty time': "c.csv:2: key 'time_us': missing value",
    'layer CSV empty batch': "l.csv:2: key 'batch': expected a positive number, got ''",
    'unterminated quote in a scenario': "s.yaml:4: malformed YAML at column 7: wrongly indented double-quoted scalar (a closing quote missing?)",
    'unclosed flow list in a scenario': "s.yaml:19: malformed YAML at column 19: missing comma in flow sequence (in the flow collection opened at line 17, column 21)",
    'YAML nested 100,000 deep': "s.yaml:24: YAML nested deeper than 64 levels (at column 71)",
    'YAML nested 100,000 deep in a measured file': "m.yaml:1: YAML nested deeper than 64 levels",
    'escape sequence in the scenario name': "s.yaml:4: key 'name': a control character (\\x1b) at byte 1",
    'non-UTF-8 scenario name with --json': "s.yaml:4: not UTF-8 text at column 9: YAML files are UTF-8",
    'escape sequence in a trace SLO class': "trace.csv:2",
    'escape sequence in a measured case id': "key 'cases[0].id': a control character (\\x1b) at byte 3",
    'warm-up requests >= requests': "key 'traffic.warmup_requests': impossible plan: 50 warm-up requests leave none of the 50 requests",
    'warm-up requests >= trace rows': "key 'traffic.warmup_requests': 3 warm-up requests leave none of the 3 requests to measure",
    'capacity min_rate > max_rate': "key 'capacity.min_rate': impossible plan: the capacity search's lowest rate (20 requests/s)",
    'empty search axis': "key 'search.tp': an empty list searches nothing",
    'measured file without cases': "m.yaml:2: key 'cases': no cases",
    'measured duplicate case id': "duplicate case id",
    'calibration CSV unknown op': "c.csv:2: key 'op': unknown op 'rmsnrom'",
    'tp x pp 2^32': "s.yaml: key 'parallel.tp': tp x pp x cp = 8589934592 does not divide the cluster's 8 GPUs",
    'dp x micro-batch 2^32': "is not a multiple of dp x micro_batch_size = 4294967296",
    'cp 2^31-1': "s.yaml:12: key 'parallel.tp': tp x pp x cp = 2147483647 does not divide the cluster's 8 GPUs",
    'serving tp x pp 2^32': "s.yaml: key 'serving.tp': tp x pp = 4294967296 does not divide the cluster",
    'alias cycle in a scenario': "s.yaml:24: YAML nested deeper than 64 levels (an alias inside its own anchor?)",
    'alias bomb in a scenario': "the YAML document expands to more than 1000000 values (aliases of aliases?)",
    'alias cycle in slo.classes': "YAML nested deeper than 64 levels",
    'alias cycle in a measured file': "YAML nested deeper than 64 levels",
    'alias bomb in a measured file': "the YAML document expands to more than 1000000 values",
    'measured pp 0': "m.yaml:49: key 'training.pp': must be >= 1, got 0",
    'measured vp 0': "m.yaml:51: key 'training.vp': must be >= 1, got 0",
    'measured variant gpus_per_node 0': "m.yaml:72: key 'cluster.gpus_per_node': must be >= 1, got 0",
    'calibration CSV header only': 'c.csv:1: no measurement rows to fit (only a header, or only launch-overhead rows)',
    'calibration CSV no usable row': "c.csv:2: key 'time_us': missing value",
    "--set parallel.tp='abc'": "s.yaml: key 'parallel.tp': expected an integer, got 'abc'",
    "--set parallel.tp=''": "s.yaml: key 'parallel.tp': expected an integer, got ''",
    "--set parallel.tp='1.5'": "s.yaml: key 'parallel.tp': expected an integer, got '1.5'",
    "--set parallel.tp='nan'": "s.yaml: key 'parallel.tp': expected an integer, got 'nan'",
    "--set parallel.tp='1e400'": "s.yaml: key 'parallel.tp': expected an integer, got '1e400'",
    "--set parallel.tp='[2]'": "s.yaml: key 'parallel.tp': expected an integer, got a list",
    '--set without =': "--set expects key=value (e.g. parallel.tp=8), got 'parallel.tp'",
    '--set unknown key': "s.yaml: key 'parallel.tpp': unknown key 'tpp' (did you mean 'tp'?); allowed here: dp, tp,",
    'YAML sequence as a key': 's.yaml:24: a key must be a plain name, not a sequence',
    'YAML mapping as a key': 's.yaml:24: a key must be a plain name, not a mapping',
    'measured value not a number': "m.yaml:60: key 'value': expected a number, got 'fast'",
    'measured value a mapping': "m.yaml:60: key 'value': expected a number, got a mapping",
    'measured value a list': "m.yaml:60: key 'value': expected a number, got a list",
    'measured id a mapping': 'm.yaml:3: a value of the wrong type (bad conversion)',
    'measured layers a list': "m.yaml:36: key 'model.layers': expected an integer, got a list",
    'global batch 1e15 (allocation)': "s.yaml:17: key 'training.global_batch_size': is too large: at most 2147483647, got 1e+15",
    'tp 2^32+2 (wraps to 2)': "s.yaml:12: key 'parallel.tp': is too large: at most 2147483647, got 4294967298",
    'nodes 2^32+1 (wraps to 1)': "s.yaml:9: key 'cluster.nodes': is too large: at most 2147483647, got 4294967297",
    'gpus_per_node 2^64+8': "s.yaml:10: key 'cluster.gpus_per_node': expected an integer, got '18446744073709551624'",
    'duplicate key': "s.yaml:14: key 'parallel.tp': duplicate key (a second value for it)",
    'number with trailing text': "s.yaml:16: key 'training.seq_len': expected an integer, got '8192abc'",
    'fraction for an integer': "s.yaml:16: key 'training.seq_len': expected an integer, got '8192.5'",
    'negative integer': "s.yaml:16: key 'training.seq_len': must be >= 1, got -8192",
    'hex integer': "s.yaml:16: key 'training.seq_len': expected an integer, got '0x2000'",
    'micro-batch 0': "s.yaml:18: key 'training.micro_batch_size': must be >= 1, got 0",
    'zero stage 7': "s.yaml:19: key 'training.zero_stage': must be between 0 and 3, got 7",
    'global batch 1e400': "s.yaml:17: key 'training.global_batch_size': expected an integer, got '1e400'",
    'duplicate section': "s.yaml:24: key 'parallel': duplicate key (a second value for it)",
    'second YAML document': "s.yaml:24: a second YAML document ('---'); a file holds one",
    'list item with trailing text': "s.yaml:26: key 'search.tp[0]': expected an integer, got '1abc'",
    'scale_out.oversubscription .nan': "s.yaml:11: key 'cluster.scale_out.oversubscription': expected a number, got '.nan'",
    'scale_out.oversubscription 0': "s.yaml:11: key 'cluster.scale_out.oversubscription': must be >= 1, got 0",
    'scale_out.oversubscription -2': "s.yaml:11: key 'cluster.scale_out.oversubscription': must be >= 1, got -2",
    'scale_out.oversubscription .inf': "s.yaml:11: key 'cluster.scale_out.oversubscription': expected a number, got '.inf'",
    'scale_out.nodes_per_leaf 0': "s.yaml:11: key 'cluster.scale_out.nodes_per_leaf': must be >= 1, got 0",
    'stack.bucket_size 0': "s.yaml:24: key 'stack.bucket_size': must be >= 1, got 0",
    'stack.bucket_size -4': "s.yaml:24: key 'stack.bucket_size': must be >= 1, got -4",
    'stack.bucket_size .nan': "s.yaml:24: key 'stack.bucket_size': expected a number, got '.nan'",
    'stack.bucket_size 1e400': "s.yaml:24: key 'stack.bucket_size': expected a number, got '1e400'",
    'stack.bucket_size 25 MB': "s.yaml:24: key 'stack.bucket_size': expected a number, got '25 MB'",
    'inline model layers 0 kv_heads 8 head_dim 128': "s.yaml:8: key 'model.layers': must be >= 1, got 0",
    'inline model layers -1 kv_heads 8 head_dim 128': "s.yaml:8: key 'model.layers': must be >= 1, got -1",
    'inline model layers 4 kv_heads 0 head_dim 128': "s.yaml:11: key 'model.kv_heads': must be >= 1, got 0",
    'inline model layers 4 kv_heads 8 head_dim 0': "s.yaml:14: key 'model.head_dim': must be >= 1, got 0",
    'inline model layers 4 kv_heads 8 head_dim .nan': "s.yaml:14: key 'model.head_dim': expected an integer, got '.nan'",
    'inline model layers 4 kv_heads 3 head_dim 128': "s.yaml:11: key 'model.kv_heads': heads must be a multiple of kv_heads",
    'measured layers 0': "m.yaml:36: key 'model.layers': must be >= 1, got 0",
    'measured kv_heads 0': "m.yaml:39: key 'model.kv_heads': must be >= 1, got 0",
    'measured heads not dividing hidden': "m.yaml:39: key 'model.kv_heads': heads must be a multiple of kv_heads",
    'measured value negative': "m.yaml:60: key 'value': the measurement must be a positive finite number",
    'measured value nan': "m.yaml:60: key 'value': expected a number, got '.nan'",
    'measured tp 2^32+4': "m.yaml:48: key 'training.tp': is too large: at most 2147483647, got 4294967300",
    'measured activation unknown': "m.yaml:43: key 'model.activation': expected gelu, relu, squared_relu, swiglu or geglu, got 'gleu'",
    'measured dtype unknown': "m.yaml:57: key 'precision.dtype': expected one of fp32, tf32, bf16, fp16, fp8, int8, fp4,",
    'measured variant key unknown': "m.yaml:71: key 'other_metrics[0].variant.training.bogus_key': 'training.bogus_key' is not",
    'measured variant value text': "m.yaml:71: key 'training.tp': expected an integer, got 'many'",
    'calibration CSV negative time': "c.csv:2: key 'time_us': a kernel time must be a positive finite number of microseconds,",
    'calibration CSV shape 2^64': "c.csv:2: key 'm': expected a whole number from 1 to 2^53, got '18446744073709551616'",
    'global batch 2^31-4, validate': "s.yaml: key 'training.global_batch_size': impossible plan: the step's replay would hold about 2.19e+11",
    'a million micro-batches, run': "s.yaml: key 'training.global_batch_size': impossible plan: the step's replay would hold about 4.28e+08 tasks (1.05e+06",
    'simulated clock beyond 106 days': "s.yaml: key 'training.global_batch_size': simulated time exceeds its range (about 106 days)",
    'escape sequence in a key': "s.yaml:24: key 'bogus\\x1b[2J\\x1b]0;pwned\\x1b\\': unknown key",
    'escape sequence in a value': "s.yaml:6: key 'model': unknown model 'llama\\x1b[31m'; known: codellama-13b, deepseek-v2,",
    'escape sequence in --set': "s.yaml: key 'stack.dtype': expected bf16, fp16 or fp8, got 'bf\\x1b[5m16'",
    'escape sequence in a measured id': "m.yaml:60: key 'value': expected a number, got '7\\x1b[2J26'",
    '--json after a late error': "s.yaml: key 'training.global_batch_size': simulated time exceeds its range (about 106 days)",
    '--json of a bad scenario': "s.yaml:12: key 'parallel.tp': tp x pp x cp = 6 does not divide the cluster's 8 GPUs",
    '--html of a bad scenario': "s.yaml:12: key 'parallel.tp': tp x pp x cp = 6 does not divide the cluster's 8 GPUs",
    '--html of an RL search': "s.yaml: --html: not yet for RL searches (kind: rl)",
    '--html of validate': "command line: --html is not an option of `fathom validate`",
    'refit without --device': "command line: calibrate refit needs --device",
    'refit to a device without cases': "m.yaml: no case ran on 'a100-sxm-80gb' with a metric the refit covers",
    'refit of a file that is not measured-format': "m.yaml:1: key 'hello'",
    '-o of a bad search': "s.yaml:25: key 'search.objective': expected goodput, throughput, cost or capacity, got",
    'trace negative arrival': "trace.csv:2: key 'arrival_s': arrival time must be >= 0, got -1.0",
    'trace arrivals out of order': "trace.csv:3: key 'arrival_s': arrival times must not decrease (0.5 s after 1 s on the row",
    'trace text length': "trace.csv:2: key 'prompt_tokens': expected an integer, got 'lots'",
    'trace zero output': "trace.csv:2: key 'output_tokens': must be >= 1, got 0",
    'trace fractional tokens': "trace.csv:2: key 'prompt_tokens': expected an integer, got '512.5'",
    'trace missing column': "trace.csv:1: key 'output_tokens': missing column output_tokens",
    'trace extra field': 'trace.csv:2: expected 3 columns (arrival_s, prompt_tokens, output_tokens), got 4',
    'trace empty': 'trace.csv: the trace holds no requests',
    'trace header only': 'trace.csv:1: the trace holds no requests',
    'trace nan arrival': "trace.csv:2: key 'arrival_s': expected a finite number, got 'nan'",
    'trace huge tokens': "trace.csv:2: key 'prompt_tokens': '99999999999999999999' does not fit a 64-bit integer",
    'trace unterminated quote': "trace.csv:2: key 'arrival_s': unterminated quote in column 1",
}


# Inputs at the edge of what is valid, whose right outcome is an answer (exit 0) before the report's
# timeout (60 s; unbounded work ran minutes: 2^31 clients looped over every one, a search of 786M
# combinations enumerated them all before its time limit). No tighter bound: a wall-clock limit
# fails on a busy machine or under the sanitizers; the unit tests pin the bounds themselves
# (serving_arrivals_test, search_test).
ANSWERED = {
    'closed loop of 2^31-1 clients, 10 requests',
    'a search of 786M combinations, --time-limit 1',
    'calibration CSV with a byte order mark',
    'layer CSV with a byte order mark',
}
