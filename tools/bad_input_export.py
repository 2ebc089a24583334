"""The `fathom export` and `fathom import` part of tools/bad_input_cases.py's corpus (issue 42): an
unknown framework, a plan a framework cannot express, a plan of the other kind, search results
truncated or of another tool; benchmark results truncated, of no known tool or of another one, and
files that leave out what only a scenario can say; and what each message must say."""
from bad_input_base import QUICKSTART, ROOT, SYNTHETIC

VLLM = (ROOT / "tests/data/import/vllm_bench_serve.json").read_text()
NCCL = (ROOT / "tests/data/import/nccl_all_reduce_8xh100.txt").read_text()
MEGATRON = (ROOT / "tests/data/import/megatron_llama3_8b_8xh100.log").read_text()
GENAI = (ROOT / "tests/data/import/genai_perf_profile_export_genai_perf.json").read_text()
AIPERF = (ROOT / "tests/data/import/aiperf_profile_export_aiperf.json").read_text()
NEMO1 = (ROOT / "tests/data/import/nemo_1x_llama3_8b_8xh100.log").read_text()
NEMO2 = (ROOT / "tests/data/import/nemo2_llama3_8b_8xh100.log").read_text()
CHROME = (ROOT / "tests/data/import/torch_chrome_trace_llama3_8b_layer.json").read_text()
NSYS = (ROOT / "tests/data/import/nsys_cuda_gpu_kern_sum_llama3_8b_prefill.csv").read_text()
TABLE = (ROOT / "tests/data/import/torch_key_averages_llama3_8b_train_h100.txt").read_text()
GENAI_CUT = GENAI[:GENAI.index('"inter_token_latency"')]
NEMO2_BAD = NEMO2.replace("train_step_timing in s: 10.58", "train_step_timing in s: n/a")


def export_cases(add):
    """`fathom export` inputs that cannot give a launch configuration."""
    add("export-class", "export for an unknown framework", {"s.yaml": QUICKSTART}, "export", "IN", "--for", "deepspeed")
    add("export-class", "export without --for", {"s.yaml": QUICKSTART}, "export", "IN")
    add("export-class", "export a schedule Megatron-LM lacks", {"s.yaml": QUICKSTART}, "export", "IN", "--for",
        "megatron", "--set", "training.schedule=zb-h1", "-o", "OUT")
    add("export-class", "export a serving plan for a training framework", {"s.yaml": SYNTHETIC}, "export", "IN",
        "--for", "megatron")
    add("export-class", "export a truncated search result", {"r.json": '{"ranking": [0], "candidates": ['},
        "export", "IN", "--for", "megatron")
    add("export-class", "export another tool's JSON", {"r.json": '{"results": []}'}, "export", "IN", "--for", "vllm")
    add("export-class", "export a search result of the wrong types",
        {"r.json": '{"scenario_file": 5, "ranking": [0], "candidates": [{"index": 0, "keys": {}}]}'},
        "export", "IN", "--for", "megatron")
    add("export-class", "export --rank past the ranking", {"s.yaml": QUICKSTART}, "export", "IN", "--for", "megatron",
        "--rank", "3")



def import_cases(add):
    """`fathom import` inputs that cannot give a measured case."""
    add("import-class", "import a truncated vLLM result",
        {"r.json": VLLM[:VLLM.index('"mean_tpot_ms"')].replace(", ", ",\n"), "s.yaml": SYNTHETIC},
        "import", "IN", "--scenario", "s.yaml", "-o", "OUT")
    add("import-class", "import a serving result without its scenario", {"r.json": VLLM}, "import", "IN")
    add("import-class", "import a result with a null dataset",
        {"r.json": VLLM.replace('"num_prompts"', '"dataset_name": null, "num_prompts"'), "s.yaml": SYNTHETIC},
        "import", "IN", "--scenario", "s.yaml")
    add("import-class", "import a file no importer knows", {"x.txt": "hello\n"}, "import", "IN")
    add("import-class", "import with --from another tool", {"r.json": VLLM}, "import", "IN", "--from", "nccl-tests")
    add("import-class", "import nccl-tests output cut before its table",
        {"all_reduce_perf.txt": NCCL[:NCCL.index("     1048576")]}, "import", "IN")
    add("import-class", "import a Megatron-LM log without its cluster", {"t.log": MEGATRON}, "import", "IN")
    add("import-class", "import a truncated GenAI-Perf export", {"g.json": GENAI_CUT, "s.yaml": SYNTHETIC},
        "import", "IN", "--scenario", "s.yaml", "-o", "OUT")
    add("import-class", "import a GenAI-Perf export without its arrivals",
        {"g.json": GENAI.replace('"concurrency": 16', '"concurrency": null'), "s.yaml": SYNTHETIC},
        "import", "IN", "--scenario", "s.yaml")
    add("import-class", "import an AIPerf export with --from genai-perf", {"a.json": AIPERF, "s.yaml": SYNTHETIC},
        "import", "IN", "--scenario", "s.yaml", "--from", "genai-perf")
    add("import-class", "import an AIPerf export with a latency in tokens",
        {"a.json": AIPERF.replace('"unit": "ms"', '"unit": "tokens"', 1), "s.yaml": SYNTHETIC},
        "import", "IN", "--scenario", "s.yaml")
    add("import-class", "import a NeMo log without its scenario", {"t.log": NEMO2}, "import", "IN")
    add("import-class", "import a NeMo log cut before training", {"t.log": NEMO2[:NEMO2.index("Training epoch")],
        "s.yaml": QUICKSTART}, "import", "IN", "--scenario", "s.yaml")
    add("import-class", "import a NeMo log whose step time is not a number", {"t.log": NEMO2_BAD, "s.yaml": QUICKSTART},
        "import", "IN", "--scenario", "s.yaml")
    add("import-class", "import a NeMo log of another model than the scenario's", {"t.log": NEMO1, "s.yaml": QUICKSTART},
        "import", "IN", "--scenario", "s.yaml", "--set", "model=llama3-70b")
    add("import-class", "import a NeMo log whose global batch is not the scenario's",
        {"t.log": NEMO2, "s.yaml": QUICKSTART}, "import", "IN", "--scenario", "s.yaml", "--set",
        "training.global_batch_size=256")
    add("import-class", "import a kernel profile that names no layer", {"t.json": CHROME}, "import", "IN", "-o", "OUT")
    add("import-class", "import an nsys report cut before its rows", {"k.csv": NSYS[:NSYS.index("46.7,")]},
        "import", "IN", "-o", "OUT")
    add("import-class", "import an nsys report with a time that is not a number",
        {"k.csv": NSYS.replace("808600,1,", "80e600x,1,", 1)}, "import", "IN")
    add("import-class", "import a kernel table of an unknown model",
        {"p.txt": TABLE.replace("== llama3-8b", "== llama9-1b", 1)}, "import", "IN")


EXPORT_EXPECT = {
    'export for an unknown framework': "command line: --for: unknown framework 'deepspeed'; valid: megatron, nemo,",
    'export without --for': "command line: export needs --for FRAMEWORK: megatron, nemo, torchtitan, vllm, sglang,",
    'export a schedule Megatron-LM lacks': "s.yaml: key 'training.schedule': megatron cannot express this plan",
    'export a serving plan for a training framework': "s.yaml: megatron runs training, and this is a serving scenario",
    'export a truncated search result': "r.json: not a JSON object",
    'export another tool\'s JSON': "r.json: key 'scenario_file': no 'scenario_file'",
    'export --rank past the ranking': "command line: --rank picks a candidate of a search result",
    'import a truncated vLLM result': "r.json:21: malformed JSON",
    'import a serving result without its scenario': "r.json: the file does not say the server's model, GPUs and layout",
    'import a file no importer knows': "x.txt: not a file fathom imports",
    'import a result with a null dataset': "r.json: a value of the wrong type",
    'export a search result of the wrong types': "r.json: not a search result of this fathom",
    'import with --from another tool': "r.json: not a file of nccl-tests output",
    'import nccl-tests output cut before its table': "all_reduce_perf.txt: no result rows",
    'import a Megatron-LM log without its cluster': "t.log: the log does not name the accelerator",
    'import a truncated GenAI-Perf export': f"g.json:{GENAI_CUT.count(chr(10)) + 1}: malformed JSON",
    'import a GenAI-Perf export without its arrivals': "g.json: key 'input_config': states neither a concurrency",
    'import an AIPerf export with --from genai-perf': "a.json: not a file of GenAI-Perf's export",
    'import an AIPerf export with a latency in tokens': "a.json: key 'request_latency.unit': a time in 'tokens'",
    'import a NeMo log without its scenario': "t.log: the file does not say the accelerator",
    'import a NeMo log cut before training': "t.log: no step with 'train_step_timing'",
    'import a NeMo log whose step time is not a number':
        f"t.log:{NEMO2_BAD[:NEMO2_BAD.index('n/a')].count(chr(10)) + 1}: key 'train_step_timing in s': not a positive",
    'import a NeMo log of another model than the scenario\'s': "t.log:42: key 'model.num_layers': 32 in the log, 80",
    'import a kernel profile that names no layer': "t.json: the profile does not say which layer ran",
    'import an nsys report cut before its rows': "k.csv: no kernel rows",
    'import an nsys report with a time that is not a number': "k.csv:7: key 'Total Time (ns)': not a number",
    'import a kernel table of an unknown model': "p.txt:1: key 'label': unknown model 'llama9-1b'",
    'import a NeMo log whose global batch is not the scenario\'s':
        "t.log:15: key 'global_batch_size': the log's global batch 128 is not the scenario's 256",
}
