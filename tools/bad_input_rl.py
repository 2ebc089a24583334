"""The RL part of tools/bad_input_cases.py's corpus (issue 40): an RL scenario's pools, trainer,
batch, staleness bound, weight sync and search that cannot work, and what each message must say.
"""
from bad_input_base import ROOT, sub

RL = (ROOT / "scenarios/examples/rl-grpo-qwen3-8b-8xh100.yaml").read_text()


def rl(old, new):
    return sub(RL, old, new)


def rl_cases(add):
    """An RL scenario (issue 40): each impossible or malformed setting, named by file, line and key."""
    for name, old, new in (
        ("rl rollout pool larger than the cluster", "  layout: colocated\n",
         "  layout: disaggregated\n  rollout_gpus: 16\n"),
        ("rl trainer that cannot hold the policy", "zero_stage: 3", "zero_stage: 0"),
        ("rl samples 0", "samples: 32", "samples: 0"),
        ("rl staleness negative", "  layout: colocated\n", "  layout: colocated\n  staleness: -1\n"),
        ("rl sync path unknown", "  layout: colocated\n", "  layout: colocated\n  sync: pigeon\n"),
        ("rl sync over IPC between pools", "  layout: colocated\n",
         "  layout: disaggregated\n  rollout_gpus: 4\n  sync: ipc\n"),
        ("rl staleness on colocated GPUs", "  layout: colocated\n", "  layout: colocated\n  staleness: 1\n"),
        ("rl partial rollouts without an asynchronous pipeline", "  layout: colocated\n",
         "  layout: colocated\n  partial_rollout: true\n"),
        ("rl engines larger than their pool", "  tp: 2\n  prefix_caching", "  tp: 2\n  replicas: 9\n  prefix_caching"),
        ("rl global batch given", "  seq_len: 16384\n", "  seq_len: 16384\n  global_batch_size: 64\n"),
        ("rl packed documents given", "  seq_len: 16384\n", "  seq_len: 16384\n  documents: 4096\n"),
        ("rl reward model unknown", "  reference: true\n", "  reference: true\n  reward_model: gpt-9\n"),
        ("rl response mean zero", "response: {distribution: lognormal, mean: 1000", "response: {distribution: lognormal, mean: 0"),
        ("rl without a response length", "  response: {distribution: lognormal, mean: 1000, stddev: 600, max: 2048}\n", ""),
        ("rl traffic section", "serving:\n", "traffic: {rate: 1}\nserving:\n"),
    ):
        add("rl-class", name, {"s.yaml": rl(old, new)}, "run", "IN")
    add("rl-class", "rl search ranked by cost without a price",
        {"s.yaml": rl("stack:\n", "search: {objective: cost}\nstack:\n")}, "search", "IN")
    add("rl-class", "rl search axis in a training scenario",
        {"s.yaml": (ROOT / "scenarios/examples/quickstart.yaml").read_text() + "search: {rl_staleness: [1]}\n"},
        "validate", "IN")


RL_EXPECT = {
    'rl rollout pool larger than the cluster': "s.yaml:24: key 'rl.rollout_gpus': the rollout pool's 16 GPUs leave none",
    'rl trainer that cannot hold the policy': "s.yaml:32: key 'parallel.tp': impossible plan: the trainer cannot hold the policy",
    'rl samples 0': "s.yaml:20: key 'rl.samples': must be between 1 and 100000, got 0",
    'rl staleness negative': "s.yaml:24: key 'rl.staleness': must be between 0 and 1000, got -1",
    'rl sync path unknown': "s.yaml:24: key 'rl.sync': expected nccl, host or ipc, got 'pigeon'",
    'rl sync over IPC between pools': "s.yaml:25: key 'rl.sync': impossible plan: ipc hands weights over on the same GPUs",
    'rl partial rollouts without an asynchronous pipeline': "s.yaml:24: key 'rl.partial_rollout': impossible plan: carrying answers",
    'rl staleness on colocated GPUs': "s.yaml:24: key 'rl.staleness': impossible plan: colocated GPUs take turns",
    'rl engines larger than their pool': "s.yaml:29: key 'serving.replicas': impossible plan: the rollout engines need 18 GPUs",
    'rl global batch given': "s.yaml:35: key 'training.global_batch_size': an RL scenario derives it",
    'rl packed documents given': "s.yaml:35: key 'training.documents': an RL scenario packs its answers",
    'rl reward model unknown': "s.yaml:26: key 'rl.reward_model': unknown model 'gpt-9'",
    'rl response mean zero': "s.yaml:22: key 'rl.response.mean': must be >= 1, got 0",
    'rl without a response length': "s.yaml:19: key 'rl': missing required key 'response'",
    'rl traffic section': "s.yaml:26: key 'traffic': key 'traffic' belongs to serving scenarios (this one is kind: rl)",
    'rl search ranked by cost without a price': "s.yaml: key 'search.objective': ranking by cost needs search.price_per_gpu_hour",
    'rl search axis in a training scenario': "s.yaml:24: key 'search.rl_staleness': this axis searches rl plans",
}
