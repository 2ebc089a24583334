"""The `fathom export` part of tools/bad_input_cases.py's corpus (issue 42): an unknown framework, a
plan a framework cannot express, a plan of the other kind, search results truncated or of another
tool, and what each message must say."""
from bad_input_base import QUICKSTART, SYNTHETIC


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
    add("export-class", "export --rank past the ranking", {"s.yaml": QUICKSTART}, "export", "IN", "--for", "megatron",
        "--rank", "3")


EXPORT_EXPECT = {
    'export for an unknown framework': "command line: --for: unknown framework 'deepspeed'; valid: megatron, nemo,",
    'export without --for': "command line: export needs --for FRAMEWORK: megatron, nemo, torchtitan, vllm, sglang,",
    'export a schedule Megatron-LM lacks': "s.yaml: key 'training.schedule': megatron cannot express this plan",
    'export a serving plan for a training framework': "s.yaml: megatron runs training, and this is a serving scenario",
    'export a truncated search result': "r.json: not a JSON object",
    'export another tool\'s JSON': "r.json: key 'scenario_file': no 'scenario_file'",
    'export --rank past the ranking': "command line: --rank picks a candidate of a search result",
}
