"""The whole-run part of tools/bad_input_cases.py's corpus (issue 38): a training scenario's `run`
section with rates, targets, intervals and tiers that cannot work, and what each message must say.
"""
from bad_input_base import QUICKSTART, SYNTHETIC, sub

RUN = QUICKSTART.replace("  gpus_per_node: 8\n", "  gpus_per_node: 8\n  ssd: nvme-gen5-14gbs\n") + (
    "run:\n  target_tokens: 1e11\n  failures: llama3-h100\n  detect: 5 min\n  restart: 10 min\n")


def run(old, new):
    return sub(RUN, old, new)


def run_cases(add):
    """A whole run's section (issue 38): rates, targets, intervals and tiers that cannot work."""
    for name, old, new in (
        ("run failure_scale negative", "  failures: llama3-h100\n", "  failures: llama3-h100\n  failure_scale: -2\n"),
        ("run unknown failure profile", "failures: llama3-h100", "failures: llama-h100"),
        ("run without a target", "  target_tokens: 1e11\n", ""),
        ("run with two targets", "  target_tokens: 1e11\n", "  target_tokens: 1e11\n  target_steps: 10\n"),
        ("run target already reached", "  target_tokens: 1e11\n", "  target_tokens: 1e11\n  trained_tokens: 2e11\n"),
        ("run interval shorter than a write", "  target_tokens: 1e11\n", "  target_tokens: 1e11\n  checkpoint_interval: 1 s\n"),
        ("run interval without a unit", "  target_tokens: 1e11\n", "  target_tokens: 1e11\n  checkpoint_interval: 600\n"),
        ("run interval zero", "  target_tokens: 1e11\n", "  target_tokens: 1e11\n  checkpoint_interval: 0 s\n"),
        ("run detect nan", "detect: 5 min", "detect: .nan min"),
        ("run seeds 0", "  restart: 10 min\n", "  restart: 10 min\n  seeds: 0\n"),
        ("run target tokens 1e400", "target_tokens: 1e11", "target_tokens: 1e400"),
        ("run on a cluster without storage", "  ssd: nvme-gen5-14gbs\n", ""),
        ("run tier storage without a file system", "  restart: 10 min\n", "  restart: 10 min\n  checkpoint_tier: storage\n"),
        ("run tier too small for two checkpoints", "model: llama3-8b", "model: llama3.1-405b"),
        ("run memory tier without host memory", "  restart: 10 min\n", "  restart: 10 min\n  checkpoint_tier: memory\n"),
        ("run evicting stragglers faster than it checkpoints", "  restart: 10 min\n",
         "  restart: 10 min\n  stragglers_per_node_day: 1000\n  straggler_slowdown: 2\n  straggler_detect: 1 s\n"
         "  checkpoint_interval: 10 h\n"),
        ("run stragglers without a slowdown", "  restart: 10 min\n", "  restart: 10 min\n  stragglers_per_node_day: 0.01\n"),
        ("run spares without a repair time", "  restart: 10 min\n", "  restart: 10 min\n  spare_nodes: 4\n"),
        ("run never finishing", "  restart: 10 min\n", "  restart: 10 min\n  failure_scale: 1e6\n  checkpoint_interval: 10 h\n"),
        ("run elastic without a reconfiguration time", "  restart: 10 min\n", "  restart: 10 min\n  recovery: elastic\n"),
        ("run reconfiguration time without elastic", "  restart: 10 min\n", "  restart: 10 min\n  reconfigure: 1 s\n"),
        ("run SSD copies on more nodes than there are", "  restart: 10 min\n", "  restart: 10 min\n  ssd_replicas: 1\n"),
        ("run persisted level without a file system", "  restart: 10 min\n", "  restart: 10 min\n  persist_every: 2\n"),
        ("run on local SSDs losing everything to node failures", "  restart: 10 min\n",
         "  restart: 10 min\n  failure_scale: 1000\n"),
        ("run elastic with every replica on one node", "  restart: 10 min\n",
         "  restart: 10 min\n  recovery: elastic\n  reconfigure: 1 s\n"),
        ("run unknown checkpoint writer", "  restart: 10 min\n", "  restart: 10 min\n  checkpoint_writer: pickle9\n"),
        ("run checkpoint interval given twice", "  restart: 10 min\n",
         "  restart: 10 min\n  checkpoint_every: 10\n  checkpoint_interval: 1 h\n"),
        ("run checkpoint layout unknown", "  restart: 10 min\n", "  restart: 10 min\n  checkpoint_layout: first\n"),
    ):
        add("run-class", name, {"s.yaml": run(old, new)}, "run", "IN")
    for name, search in (
        ("run search interval without a unit", "search:\n  checkpoint_interval: [10]\n"),
        ("run search spares without a repair time", "search:\n  tp: [1]\n  spare_nodes: [0, 2]\n"),
    ):
        add("run-class", name, {"s.yaml": RUN + search}, "search", "IN")
    add("run-class", "activation offload without SSDs",
        {"s.yaml": sub(QUICKSTART, "  preset: nemo-24.07", "  activation_offload: ssd\n  preset: nemo-24.07")},
        "validate", "IN")
    add("run-class", "run section in a serving scenario",
        {"s.yaml": SYNTHETIC + "run: {target_steps: 10}\n"}, "validate", "IN")
    add("run-class", "run --set failures unknown", {"s.yaml": RUN}, "validate", "IN", "--set", "run.failures=x")


RUN_EXPECT = {
    'run unknown checkpoint writer': "s.yaml:30: key 'run.checkpoint_writer': unknown checkpoint writer 'pickle9' (known: torch-save)",
    'run checkpoint interval given twice': "s.yaml:30: key 'run.checkpoint_every': give the checkpoint interval as one of",
    'run checkpoint layout unknown': "s.yaml:30: key 'run.checkpoint_layout':",
    'run evicting stragglers faster than it checkpoints': "s.yaml: key 'run.checkpoint_interval': impossible plan: the job fails",
    'run stragglers without a slowdown': "s.yaml:30: key 'run.stragglers_per_node_day': run.stragglers_per_node_day, run.straggler_slowdown",
    'run memory tier without host memory': "s.yaml:8: key 'cluster.host_memory': run.checkpoint_tier memory needs",
    'run spares without a repair time': "s.yaml:30: key 'run.spare_nodes': run.spare_nodes and run.repair go together",
    'run failure_scale negative': "s.yaml:28: key 'run.failure_scale': must be between 0 and 1000000, got -2",
    'run unknown failure profile': "s.yaml:27: key 'run.failures': unknown failure-rate profile 'llama-h100' (known: none",
    'run without a target': "s.yaml:26: key 'run.target_tokens': give the target as run.target_tokens, run.target_steps or run.target_time",
    'run with two targets': "s.yaml:26: key 'run.target_tokens': give the target as run.target_tokens, run.target_steps or run.target_time",
    'run target already reached': "s.yaml:27: key 'run.trained_tokens': 2e+11 tokens already trained: the target",
    'run interval shorter than a write': "s.yaml:27: key 'run.checkpoint_interval': 1 s is shorter than one checkpoint's write",
    'run interval without a unit': "s.yaml:27: key 'run.checkpoint_interval': missing unit",
    'run interval zero': "s.yaml:27: key 'run.checkpoint_interval': must be between",
    'run detect nan': "s.yaml:28: key 'run.detect': expected a time",
    'run seeds 0': "s.yaml:30: key 'run.seeds': must be between 1 and 100000, got 0",
    'run target tokens 1e400': "s.yaml:26: key 'run.target_tokens': expected a number",
    'run on a cluster without storage': "s.yaml:25: key 'run.checkpoint_tier': the cluster has neither a shared file system",
    'run tier storage without a file system': "s.yaml:30: key 'run.checkpoint_tier': storage: the cluster has no shared file system",
    'run tier too small for two checkpoints': "s.yaml:8: key 'cluster.ssds_per_node': a node's share of two checkpoints",
    'run never finishing': "s.yaml: key 'run.checkpoint_interval': impossible plan: the job fails more often than can be counted",
    'run SSD copies on more nodes than there are': "s.yaml:30: key 'run.ssd_replicas': a copy of each node's share on 1 other nodes, but the cluster has 0",
    'run persisted level without a file system': "s.yaml:30: key 'run.persist_every': a persistent level needs a shared file system",
    'run on local SSDs losing everything to node failures': "s.yaml: key 'run.ssd_replicas': impossible plan: a node's failure loses its share",
    'run elastic without a reconfiguration time': "s.yaml:30: key 'run.recovery': run.recovery elastic and run.reconfigure go together",
    'run reconfiguration time without elastic': "s.yaml:30: key 'run.reconfigure': run.recovery elastic and run.reconfigure go together",
    'run elastic with every replica on one node': "s.yaml:30: key 'run.recovery': elastic: a failed node would take every data-parallel replica",
    'run search interval without a unit': "s.yaml:31: key 'search.checkpoint_interval': missing unit",
    'run search spares without a repair time': "s.yaml: key 'search.spare_nodes': spare pools need a node's time out for repair",
    'activation offload without SSDs': "s.yaml:22: key 'stack.activation_offload': impossible plan: ssd: the activations go to the nodes' SSDs",
    'run section in a serving scenario': "s.yaml:13: key 'run': key 'run' belongs to training scenarios",
    'run --set failures unknown': "s.yaml: key 'run.failures': unknown failure-rate profile 'x'",
}
