// A NeMo training log. Every step NeMo's TimingCallback logs `train_step_timing in s` (NVIDIA/NeMo
// nemo/utils/exp_manager.py, _on_batch_end: the name + " in s", on the progress bar; NeMo before
// 1.20 logged it as `train_step_timing`), beside reduced_train_loss, global_step and
// consumed_samples. NeMo 2.0 (nemo.lightning) prints them through ProgressPrinter
// (nemo/lightning/pytorch/callbacks/progress_printer.py: "Training epoch E, iteration N/T | key:
// value | ..."; every log_interval steps, each value the mean over the interval), NeMo 1.x through
// Lightning's progress bar ("Epoch 0: ... [..., key=value, ...]", updates separated by carriage
// returns). NeMo 1.x scripts also log their Hydra configuration at the start ("Experiment
// configuration", then OmegaConf.to_yaml(cfg), continuation lines indented four spaces by NeMo's
// log formatter): the plan (trainer.devices x trainer.num_nodes GPUs, the model's parallel sizes,
// micro and global batch, encoder_seq_length, optimizer, recompute) is read from it through the
// NeMo launch dialect (scenarios/launch/nemo.cpp reads the same keys as Hydra overrides). NeMo 2.0
// logs no configuration: the plan is the scenario's, said in `assumed`. The log never names the
// accelerator, and its model only by sizes: both are the scenario's (the dump's sizes checked
// against it). Step time: the median of the logged values after the first (which holds the
// warm-up), as for Megatron-LM logs.
#include "scenarios/imports/importers.h"
#include "scenarios/launch/launch.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

namespace fathom::scenarios::imports {
namespace {

struct Log {
    std::vector<double> step_s;                         // train_step_timing, one a logged step
    std::vector<int64_t> step_of;                       // its global_step (-1: not printed)
    std::vector<std::pair<int64_t, int>> global_batch;  // printed global_batch_size and its line
    std::string config;                                 // NeMo 1.x's configuration dump, dedented
    int config_line = 0;                                // its first line in the log
};

// The number after `key` and its separator (":" or "=") in `line`; false when `key` is absent.
bool value_after(const std::string& line, const std::string& key, double& value, bool& malformed) {
    size_t at = line.find(key);
    if (at == std::string::npos) return false;
    at += key.size();
    if (line.compare(at, 5, " in s") == 0) at += 5;
    at = line.find_first_not_of(' ', at);
    if (at == std::string::npos || (line[at] != ':' && line[at] != '=')) return false;
    const char* start = line.c_str() + at + 1;
    char* end = nullptr;
    value = std::strtod(start, &end);
    malformed = end == start;
    return true;
}

void step_line(const Source& file, const std::string& line, int number, Log& log) {
    double v = 0, step = -1, gbs = 0;
    bool bad = false, ignored = false;
    if (value_after(line, "global_batch_size", gbs, ignored) && !ignored)
        log.global_batch.emplace_back(static_cast<int64_t>(gbs), number);
    if (!value_after(line, "train_step_timing", v, bad)) return;
    if (bad || !(v > 0)) fail(file, "train_step_timing in s", "not a positive number", number);
    if (!value_after(line, "global_step", step, ignored) || ignored) step = -1;
    // A progress bar redraws a step's line: its last value stands.
    if (step >= 0 && !log.step_of.empty() && log.step_of.back() == static_cast<int64_t>(step)) {
        log.step_s.back() = v;
        return;
    }
    log.step_s.push_back(v);
    log.step_of.push_back(static_cast<int64_t>(step));
}

Log parse(const Source& file) {
    Log log;
    int number = 1, state = 0;  // 0: before the dump, 1: its header next, 2: in it, 3: after it
    size_t indent = std::string::npos;
    for (size_t start = 0; start <= file.text.size();) {
        size_t end = file.text.find_first_of("\r\n", start);
        if (end == std::string::npos) end = file.text.size();
        const std::string line = file.text.substr(start, end - start);
        if (state == 2 && !line.empty() && line[0] != ' ') state = 3;
        if (state == 2) {
            if (indent == std::string::npos && line.find_first_not_of(' ') != std::string::npos)
                indent = line.find_first_not_of(' ');
            log.config += (indent == std::string::npos ? "" : line.substr(std::min(indent, line.size()))) + "\n";
        } else if (state == 1 && line.rfind("[NeMo", 0) == 0) {
            state = 2;
            log.config_line = number + 1;
        } else if (state == 0 && line.find("Experiment configuration") != std::string::npos) {
            state = 1;
        } else {
            step_line(file, line, number, log);
        }
        if (end < file.text.size() && file.text[end] == '\n') ++number;
        start = end + 1;
    }
    if (log.step_s.empty())
        fail(file, "", "no step with 'train_step_timing' (NeMo's TimingCallback): the log was cut before training");
    return log;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The dump's value at dotted `key` (a null node where it is missing).
YAML::Node config_at(const YAML::Node& config, const std::string& key) {
    YAML::Node n;
    n.reset(config);
    for (size_t at = 0;;) {
        const size_t dot = key.find('.', at);
        if (!n.IsMap()) return YAML::Node();
        const YAML::Node next = static_cast<const YAML::Node&>(n)[key.substr(at, dot - at)];
        if (!next) return YAML::Node();
        n.reset(next);
        if (dot == std::string::npos) return n;
        at = dot + 1;
    }
}

int64_t config_int(const Source& file, const Log& log, const YAML::Node& config, const std::string& key) {
    const YAML::Node n = config_at(config, key);
    if (n.IsNull()) fail(file, key, "missing from the configuration dump", log.config_line);
    try {
        const int64_t v = n.as<int64_t>();
        if (v >= 1) return v;
    } catch (const YAML::Exception&) {}
    fail(file, key, "not a whole number >= 1: '" + (n.IsScalar() ? n.Scalar() : std::string("a block")) + "'",
         log.config_line + n.Mark().line);
}

// The dump's scalars as the Hydra overrides NeMo's launch dialect reads
// ("++model.micro_batch_size=1"; booleans as Python writes them).
void overrides(const YAML::Node& n, const std::string& key, std::string& out) {
    if (n.IsMap()) {
        for (const auto& kv : n) overrides(kv.second, key + (key.empty() ? "" : ".") + kv.first.Scalar(), out);
        return;
    }
    if (!n.IsScalar() || n.Scalar().empty() || n.Scalar().find_first_of(" '\"$\\`;|&<>(){}") != std::string::npos)
        return;
    const std::string v = n.Scalar() == "true" ? "True" : n.Scalar() == "false" ? "False" : n.Scalar();
    if (v != "null") out += " ++" + key + "=" + v;
}

// The scenario's model must be the log's: the sizes the dump states.
void check_model(const Source& file, const Log& log, const YAML::Node& config, const plans::Scenario& s) {
    const std::pair<const char*, int64_t> sizes[] = {{"model.num_layers", s.model.layers},
                                                     {"model.hidden_size", s.model.hidden},
                                                     {"model.num_attention_heads", s.model.heads},
                                                     {"model.ffn_hidden_size", s.model.ffn},
                                                     {"model.num_query_groups", s.model.kv_heads}};
    for (const auto& [key, want] : sizes) {
        if (config_at(config, key).IsNull()) continue;
        const int64_t v = config_int(file, log, config, key);
        if (v != want)
            fail(file, key,
                 std::to_string(v) + " in the log, " + std::to_string(want) + " in the scenario's model " +
                     s.model.name + ": give the scenario of the model it trained",
                 log.config_line + config_at(config, key).Mark().line);
    }
}

// The plan of the configuration dump (NeMo 1.x), through the NeMo launch dialect.
void plan_of_config(YAML::Node c, const Source& file, const Log& log, const plans::Scenario& s) {
    YAML::Node config;
    try {
        config = YAML::Load(log.config);
    } catch (const YAML::Exception& e) {
        fail(file, "", "the configuration dump is not YAML: " + e.msg, log.config_line + e.mark.line);
    }
    check_model(file, log, config, s);
    const int64_t devices = config_int(file, log, config, "trainer.devices"),
                  nodes = config_int(file, log, config, "trainer.num_nodes");
    int64_t model_parallel = config_int(file, log, config, "model.tensor_model_parallel_size") *
                             config_int(file, log, config, "model.pipeline_model_parallel_size");
    if (!config_at(config, "model.context_parallel_size").IsNull())
        model_parallel *= config_int(file, log, config, "model.context_parallel_size");
    if ((devices * nodes) % model_parallel != 0)
        fail(file, "trainer.devices", "the GPUs (devices x num_nodes) are no multiple of tp x pp x cp",
             log.config_line);
    for (const char* k : {"model.micro_batch_size", "model.global_batch_size"}) config_int(file, log, config, k);
    for (const char* k : {"model.virtual_pipeline_model_parallel_size", "model.expert_model_parallel_size",
                          "model.activations_checkpoint_num_layers"})
        if (!config_at(config, k).IsNull()) config_int(file, log, config, k);
    std::string words = "python3 megatron_gpt_pretraining.py";
    overrides(config, "", words);
    const YAML::Node fields = launch::launch_registry().get("nemo").factory.read({{"nemo.sh", words}}, s.model);
    c["training"] = fields["training"];
    c["precision"] = fields["precision"];
    c["model"]["seq_len"] = config_int(file, log, config, "model.encoder_seq_length");
    c["cluster"]["gpus"] = devices * nodes;
    c["cluster"]["nodes"] = nodes;
    c["cluster"]["gpus_per_node"] = devices;
    if (nodes == 1) c["cluster"].remove("scale_out");
    else c["cluster"]["scale_out"]["fabric"] = s.cluster.nic.id;
    if (nodes > 1) c["cluster"]["scale_out"]["nics_per_node"] = s.cluster.nics_per_node;
    c["notes"].push_back("the plan, GPUs and sequence length from the log's configuration dump (NeMo 1.x)");
}

// No configuration in the log (NeMo 2.0): the scenario's plan, its global batch checked.
void plan_of_scenario(YAML::Node c, const Source& file, const Log& log, const plans::Scenario& s) {
    const auto& t = s.training()->training;
    for (const auto& [gbs, line] : log.global_batch)
        if (gbs != t.global_batch)
            fail(file, "global_batch_size",
                 "the log's global batch " + std::to_string(gbs) + " is not the scenario's " +
                     std::to_string(t.global_batch) + ": give the scenario of the run",
                 line);
    c["model"]["seq_len"] = t.seq_len;
    for (const char* k : {"training.tp", "training.pp", "training.cp", "training.vp", "training.dp",
                          "training.micro_batch_size", "training.recompute", "model.seq_len"})
        c["assumed"].push_back(k);
    c["completeness"] = "mostly_complete";
    c["notes"].push_back("the log states no configuration (NeMo 2.0 logs none): the plan is the scenario's " + s.file +
                         (log.global_batch.empty() ? std::string() : ", its global batch checked against the log's"));
}

std::vector<YAML::Node> read(const Source& file, const Context& context) {
    const Log log = parse(file);
    YAML::Node c = new_case(file, context, "training", "nemo-log");
    add_scenario(c, file, context, "the accelerator, the cluster or the model by name");
    const plans::Scenario& s = *context.scenario;
    if (!log.config.empty()) plan_of_config(c, file, log, s);
    else plan_of_scenario(c, file, log, s);
    c["training"]["framework"] = "nemo";
    // The first logged step holds the warm-up (compilation, allocator growth, the first batches).
    const std::vector<double> steps(log.step_s.begin() + (log.step_s.size() > 1 ? 1 : 0), log.step_s.end());
    c["metric"] = "step_time_s";
    c["value"] = launch::yaml_number(median(steps));
    c["unit"] = "s";
    c["statistic"] = "median";
    c["notes"].push_back("step time: the median of " + std::to_string(steps.size()) +
                         " logged train_step_timing values after the first (NeMo 2.0's ProgressPrinter logs each "
                         "as the mean over its log_interval steps)");
    return {c};
}

}  // namespace

Importer nemo_log_importer() {
    return {"a NeMo training log",
            [](const Source& f) {
                if (f.text.find("------------------------ arguments ---") != std::string::npos) return false;
                return f.text.find("[NeMo ") != std::string::npos ||
                       (f.text.find("train_step_timing") != std::string::npos &&
                        f.text.find("reduced_train_loss") != std::string::npos);
            },
            read};
}

}  // namespace fathom::scenarios::imports
