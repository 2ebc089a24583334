"""What the bad-input corpus (tools/bad_input_cases.py and its whole-run part,
tools/bad_input_run_cases.py) builds its inputs from: the project's quickstart and a small serving
scenario, and the one-substitution edit every case is made with.
"""
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUICKSTART = (ROOT / "scenarios/examples/quickstart.yaml").read_text()
SERVING = """name: bad-input serving
kind: serving
model: llama3-8b
cluster: {accelerator: h100-sxm-80gb, nodes: 1, gpus_per_node: 1}
serving: {engine: vllm, tp: 1}
traffic:
  arrival: trace
  trace: trace.csv
slo: {ttft: 2 s, tpot: 100 ms}
"""
SYNTHETIC = SERVING.replace("  arrival: trace\n  trace: trace.csv\n",
                            "  arrival: poisson\n  rate: 2\n  num_requests: 50\n  prompt: 512\n  output: 64\n")


def sub(text, old, new, count=1):
    assert old in text, old
    return text.replace(old, new, count)
