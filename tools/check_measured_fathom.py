#!/usr/bin/env python3
"""Check measured-case files in fathom's extension of measured-format v1.

usage: tools/check_measured_fathom.py [--strict] FILE.yaml ...

The shared checker (../shared/reference/check_measured.py, read-only) with the fields that
scenarios/measured-format-fathom.md adds. Exit 0 when every file passes, 1 otherwise, 2 on usage.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(HERE, '..', '..', 'shared', 'reference')

# scenarios/measured-format-fathom.md, "Added serving fields" (the same vocabularies as
# scenarios/measured_schema.cpp serving_extension_choices).
SERVING_EXTENSION = {
    'moe_dispatcher': {'alltoall', 'deepep', 'deepep_low_latency', 'deepep_auto'},
    'two_batch_overlap': 'bool',
    'packaging': {'nim'},
    'router': 'str',
    'speculative': {'method': {'draft', 'eagle', 'mtp', 'ngram'}, 'tokens': 'int', 'acceptance': 'num',
                    'acceptance_length': 'num', 'draft_model': 'str'},
    'kv_offload': {'connector': {'lmcache', 'vllm', 'hicache'}, 'host_gb': 'num', 'chunk_tokens': 'int'},
}
# scenarios/measured-format-fathom.md, "Added serving.workload fields": multi-turn conversations.
LENGTH = {'distribution': {'fixed', 'uniform', 'normal', 'lognormal'}, 'value': 'int', 'min': 'int', 'max': 'int',
          'mean': 'num', 'stddev': 'num'}
WORKLOAD_EXTENSION = {'sessions': {'conversations': 'int', 'turns_min': 'int', 'turns_max': 'int',
                                   'common_prefix_len': 'int', 'first_turn_scaled': 'bool', 'first_turn_len': LENGTH,
                                   'turn_len': LENGTH, 'output_len': LENGTH}}
# scenarios/measured-format-fathom.md, "Added training fields" (with `run`, a window of a whole run).
TRAINING_EXTENSION = {'recompute_num_layers': 'int', 'ep_comm_overlap': 'bool',
                      'run': {'days': 'num', 'steps': 'int', 'storage': 'str', 'checkpoint_method': {'sync', 'async'},
                              'checkpoint_writer': 'str', 'checkpoint_interval_s': 'num',
                              'checkpoint_every_steps': 'int', 'detect_s': 'num', 'restart_s': 'num'}}
# scenarios/measured-format-fathom.md, "Added metrics": (unit, required qualifiers, optional ones).
METRICS_EXTENSION = {'interruptions_per_day': ('interruptions/day', {}, {}), 'ettr_percent': ('%', {}, {}),
                     'checkpoint_throughput_gb_per_s': ('GB/s', {}, {}), 'run_time_s': ('s', {}, {})}
# scenarios/measured-format-fathom.md, "Added kind rl": an RL post-training iteration, its `rl` block
# and metrics.
RL = {'framework': {'verl', 'nemo-rl', 'openrlhf', 'slime', 'areal', 'trl', 'other'}, 'framework_version': 'str',
      'software': 'str', 'algorithm': {'grpo', 'dapo', 'ppo', 'other'}, 'prompts': 'int', 'samples': 'int',
      'prompt_len': LENGTH, 'response_len': LENGTH, 'layout': {'colocated', 'disaggregated'}, 'staleness': 'int0',
      'minibatches': 'int', 'epochs': 'int', 'reference': 'bool', 'critic': 'bool', 'sync': {'nccl', 'host', 'ipc'},
      'offload_trainer': 'bool',
      'rollout': {'engine': {'vllm', 'sglang'}, 'engine_version': 'str', 'gpus': 'int', 'tp': 'int', 'pp': 'int',
                  'gpu_memory_fraction': 'frac', 'max_model_len': 'int'},
      'trainer': {'backend': {'megatron', 'fsdp'}, 'gpus': 'int', 'tp': 'int', 'pp': 'int', 'cp': 'int', 'ep': 'int',
                  'dp': 'int', 'zero_stage': {0, 1, 2, 3}, 'micro_batch_size': 'int', 'seq_len': 'int',
                  'recompute': {'none', 'selective', 'full'}, 'sequence_parallel': 'bool'}}
RL_METRICS = {'rl_step_time_s': ('s', {}, {}), 'rl_generation_s': ('s', {}, {}), 'rl_update_s': ('s', {}, {}),
              'rl_logprob_s': ('s', {}, {}), 'rl_sync_s': ('s', {}, {})}
RL_REQUIRED = ('framework', 'prompts', 'samples', 'prompt_len', 'response_len', 'layout', 'rollout.engine',
               'rollout.tp', 'trainer.backend', 'trainer.tp', 'trainer.pp', 'trainer.seq_len')
# scenarios/measured-format-fathom.md, "Added benchmark fields".
BENCHMARK_EXTENSION = {'groups': 'int'}
# scenarios/measured-format-fathom.md, "Added source type import": a user's own file, imported.
SOURCE_TYPES_EXTENSION = {'import'}
# scenarios/measured-format-fathom.md, "Added hardware.accelerator values": catalog accelerators the
# shared vocabulary lacks.
ACCELERATORS_EXTENSION = {'rtx-4090'}
# scenarios/measured-format-fathom.md, "Added serving.workload.dataset values": the catalog's
# datasets (workloads/datasets/*.yaml).
DATASETS = {os.path.splitext(f)[0] for f in os.listdir(os.path.join(HERE, '..', 'workloads', 'datasets'))
            if f.endswith('.yaml')}


def main(argv):
    sys.path.insert(0, os.environ.get('FATHOM_SHARED_REFERENCE', SHARED))
    try:
        import check_measured
    except ImportError:
        print('check_measured_fathom: the shared checker (../shared/reference/check_measured.py) is missing',
              file=sys.stderr)
        return 2
    check_measured.SERVING.update(SERVING_EXTENSION)
    check_measured.SERVING['workload'].update(WORKLOAD_EXTENSION)
    check_measured.TRAINING.update(TRAINING_EXTENSION)
    check_measured.METRICS.update(METRICS_EXTENSION)
    check_measured.METRICS.update(RL_METRICS)
    check_measured.METRIC_FIELDS['metric'].update(METRICS_EXTENSION)  # the set CASE and OTHER_METRIC share
    check_measured.METRIC_FIELDS['metric'].update(RL_METRICS)
    check_measured.KINDS.add('rl')
    check_measured.KIND_BLOCKS['rl'] = ('model', 'rl', 'precision')
    check_measured.CASE['rl'] = RL
    base_case = check_measured.Checker.case

    def case(self, c, line, seen):  # kind rl: its required fields too
        base_case(self, c, line, seen)
        if isinstance(c, dict) and c.get('kind') == 'rl':
            ctx = check_measured.Ctx(self, line, c.get('id', '?'))
            missing = set(check_measured.path_list(c, 'missing'))
            for f in RL_REQUIRED:
                if check_measured.get(c, 'rl.' + f) is None and 'rl.' + f not in missing:
                    ctx.err('rl.' + f, 'required for kind rl (or list it in missing)')
            for f in ('name', 'architecture', 'layers', 'hidden', 'heads', 'kv_heads', 'vocab'):
                if check_measured.get(c, 'model.' + f) is None:
                    ctx.err('model.' + f, 'required for kind rl')

    check_measured.Checker.case = case
    check_measured.BENCHMARK.update(BENCHMARK_EXTENSION)
    check_measured.ACCELERATORS.update(ACCELERATORS_EXTENSION)
    check_measured.SOURCE_TYPES.update(SOURCE_TYPES_EXTENSION)
    check_measured.DATASETS.update(DATASETS)  # the set SERVING's workload.dataset refers to
    return check_measured.main(argv)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
