"""Bad inputs of issue 39's serving mechanisms (speculative decoding, multi-LoRA, quantized formats,
KV offloading, autoscaling),
part of tools/bad_input_cases.py's corpus."""
from bad_input_base import SERVING, SYNTHETIC, sub


def speculative_cases(add):
    """Speculative decoding (issue 39): acceptance out of range or past its drafts, an unknown drafter."""
    for name, spec in (
        ("speculative acceptance 1.5", "eagle, tokens: 3, acceptance: 1.5"),
        ("speculative acceptance length past its drafts", "eagle, tokens: 3, acceptance_length: 5"),
        ("speculative unknown draft model", "draft, tokens: 3, acceptance: 0.5, draft_model: llama-tiny"),
    ):
        add("silent-class", name, {"s.yaml": sub(SYNTHETIC, "serving: {engine: vllm, tp: 1}",
                                                  "serving: {engine: vllm, tp: 1, speculative: {method: " + spec + "}}")},
            "validate", "IN")


def lora_cases(add):
    """Multi-LoRA serving (issue 39): a rank above the hidden size, a trace naming an adapter past the
    plan's, a negative popularity."""
    lora = "serving: {engine: vllm, tp: 1, lora: {adapters: 4, rank: %s}}"
    add("silent-class", "lora rank above the hidden size",
        {"s.yaml": sub(SYNTHETIC, "serving: {engine: vllm, tp: 1}", lora % "8192")}, "validate", "IN")
    add("silent-class", "lora negative popularity",
        {"s.yaml": sub(SYNTHETIC, "serving: {engine: vllm, tp: 1}", lora % "8, popularity: -1")}, "validate", "IN")
    add("silent-class", "kv offload without prefix caching",
        {"s.yaml": sub(SYNTHETIC, "serving: {engine: vllm, tp: 1}", "serving: {engine: vllm, tp: 1, prefix_caching: false, kv_offload: 10 GB}")},
        "validate", "IN")
    add("silent-class", "kv offload copy method unstated for TensorRT-LLM",
        {"s.yaml": sub(SYNTHETIC, "serving: {engine: vllm, tp: 1}",
                       "serving: {engine: tensorrt-llm, tp: 1, prefix_caching: true, kv_offload: 10 GB}")},
        "validate", "IN")
    add("silent-class", "kv offload tier smaller than one block",
        {"s.yaml": sub(SYNTHETIC, "serving: {engine: vllm, tp: 1}",
                       "serving: {engine: vllm, tp: 1, prefix_caching: true, kv_offload: 1 MB}")},
        "run", "IN")
    add("silent-class", "serving fp4 on H100",
        {"s.yaml": sub(SYNTHETIC, "serving: {engine: vllm, tp: 1}", "serving: {engine: vllm, tp: 1, dtype: fp4}")},
        "validate", "IN")
    add("trace-class", "trace adapter past serving.lora.adapters",
        {"s.yaml": sub(SERVING, "serving: {engine: vllm, tp: 1}", lora % "8"),
         "trace.csv": "arrival_s,prompt_tokens,output_tokens,adapter\n0.0,512,64,1\n0.5,512,64,9\n"}, "run", "IN")


def autoscale_cases(add):
    """Autoscaling (issue 39): a policy without its target, weights from drives the cluster lacks, a
    diurnal day whose peak is below its trough."""
    base = "serving: {engine: vllm, tp: 1}"
    add("silent-class", "autoscale without a target",
        {"s.yaml": sub(SYNTHETIC, base, "serving: {engine: vllm, tp: 1, autoscale: {policy: queue, weights_from: host}}")},
        "validate", "IN")
    add("silent-class", "autoscale weights from an SSD the cluster lacks",
        {"s.yaml": sub(SYNTHETIC, base,
                       "serving: {engine: vllm, tp: 1, autoscale: {policy: queue, target: 4, weights_from: ssd}}")},
        "validate", "IN")
    add("silent-class", "sessions turns_max below turns",
        {"s.yaml": sub(SYNTHETIC, "  arrival: poisson\n", "  arrival: poisson\n  sessions: {turns: 4, turns_max: 3}\n")},
        "validate", "IN")
    add("silent-class", "diurnal peak below its trough",
        {"s.yaml": sub(SYNTHETIC, "  arrival: poisson\n", "  arrival: diurnal\n  peak_to_trough: 0.5\n")},
        "validate", "IN")


SERVING_EXPECT = {
    'autoscale without a target': "s.yaml:5: key 'serving.autoscale.target': impossible plan: missing: the policy's target a replica",
    'autoscale weights from an SSD the cluster lacks': "s.yaml:5: key 'serving.autoscale.weights_from': impossible plan: ssd needs cluster.ssd",
    'sessions turns_max below turns': "s.yaml:8: key 'traffic.sessions.turns_max': turns_max (3) is below turns (4)",
    'diurnal peak below its trough': "s.yaml:8: key 'traffic.peak_to_trough': must be between 1 and 1000000, got 0.5",
    'kv offload without prefix caching': "s.yaml:5: key 'serving.kv_offload': impossible plan: needs serving.prefix_caching: true",
    'speculative acceptance 1.5': "s.yaml:5: key 'serving.speculative.acceptance': must be between 0 and 1, got 1.5",
    'speculative acceptance length past its drafts': "s.yaml:5: key 'serving.speculative.acceptance_length': impossible plan: a verification of 3 drafts emits at most 4 tokens",
    'lora rank above the hidden size': "s.yaml:5: key 'serving.lora.rank': impossible plan: rank 8192 is above the model's hidden size 4096",
    'kv offload copy method unstated for TensorRT-LLM': "s.yaml:5: key 'serving.kv_offload_copy': impossible plan: missing: how the engine copies offloaded blocks back, memcpy or kernel (no engine preset states it)",
    'kv offload tier smaller than one block': "s.yaml:5: key 'serving.kv_offload': impossible plan: 1000000 bytes per GPU hold less than one KV block",
    'serving fp4 on H100': "s.yaml:5: key 'serving.dtype': impossible plan: accelerator 'h100-sxm-80gb' has no fp4 tensor cores",
    'lora negative popularity': "s.yaml:5: key 'serving.lora.popularity': must be between 0 and 10, got -1",
    'trace adapter past serving.lora.adapters': "trace.csv:3: key 'adapter': request 1 runs with LoRA adapter 9 but serving.lora.adapters is 4",
    'speculative unknown draft model': "s.yaml:5: key 'serving.speculative.draft_model': unknown model 'llama-tiny'",
}
