// A Megatron-LM training log (megatron/training/arguments.py print_args, training.py training_log):
// the "arguments" block between its dashed lines ("  name ........ value", the parsed and derived
// arguments: world_size, data_parallel_size, virtual_pipeline_model_parallel_size included), then a
// line per logged iteration with "elapsed time per iteration (ms)" and "throughput per GPU
// (TFLOP/s/GPU)". A training case: the model and plan from the arguments, the cluster from the
// scenario given alongside; the step time is the median over the logged iterations after the first
// (which holds the warm-up).
#include "scenarios/imports/importers.h"
#include "scenarios/launch/launch.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace fathom::scenarios::imports {
namespace {

struct Log {
    std::map<std::string, std::pair<std::string, int>> args;  // name -> value, line
    std::vector<double> step_ms, tflops;
    int64_t padded_vocab = 0;  // the tokenizer's " > padded vocab (size: V) with N dummy tokens (new size: W)"
};

Log parse(const Source& file) {
    Log log;
    std::istringstream in(file.text);
    std::string line;
    int number = 0;
    bool in_args = false;
    while (std::getline(in, line)) {
        ++number;
        if (line.find("------------------------ arguments ------------------------") != std::string::npos) {
            in_args = true;
            continue;
        }
        if (line.find("end of arguments") != std::string::npos) {
            in_args = false;
            continue;
        }
        if (in_args) {
            // "  tensor_model_parallel_size ...................... 8"
            const size_t dots = line.find(" ..");
            if (dots == std::string::npos) continue;
            const std::string name = line.substr(line.find_first_not_of(' '), dots - line.find_first_not_of(' '));
            const size_t value = line.find_first_not_of(". ", dots);
            log.args[name] = {value == std::string::npos ? "" : line.substr(value), number};
            continue;
        }
        if (const size_t v = line.find("(new size: ");
            v != std::string::npos && line.find("padded vocab") != std::string::npos)
            log.padded_vocab = std::atoll(line.c_str() + v + 11);
        const size_t t = line.find("elapsed time per iteration (ms):");
        if (t == std::string::npos) continue;
        try {
            log.step_ms.push_back(std::stod(line.substr(t + 32)));
            const size_t f = line.find("throughput per GPU (TFLOP/s/GPU):");
            if (f != std::string::npos) log.tflops.push_back(std::stod(line.substr(f + 33)));
        } catch (const std::exception&) {
            fail(file, "elapsed time per iteration (ms)", "not a number", number);
        }
    }
    if (log.args.empty()) fail(file, "", "no arguments block: the log's start (print_args) is missing");
    if (log.step_ms.empty()) fail(file, "", "no iteration line with 'elapsed time per iteration (ms)'");
    return log;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

class Args {
public:
    Args(const Source& file, const Log& log) : file_(file), log_(log) {}
    bool has(const std::string& k) const {
        const auto it = log_.args.find(k);
        return it != log_.args.end() && it->second.first != "None";
    }
    std::string text(const std::string& k, const std::string& d = "") const {
        return has(k) ? log_.args.at(k).first : d;
    }
    bool yes(const std::string& k) const { return text(k, "False") == "True"; }
    int64_t integer(const std::string& k) const {
        if (!has(k)) fail(file_, k, "missing from the arguments block");
        try {
            return std::stoll(log_.args.at(k).first);
        } catch (const std::exception&) {
            fail(file_, k, "not a whole number: '" + log_.args.at(k).first + "'", log_.args.at(k).second);
        }
    }
    int64_t integer(const std::string& k, int64_t d) const { return has(k) ? integer(k) : d; }

private:
    const Source& file_;
    const Log& log_;
};

void model(YAML::Node m, const Args& a, const Log& log, const Source& file) {
    m["name"] = "from the Megatron-LM arguments";
    m["architecture"] = a.has("num_experts") ? "moe" : "dense";
    m["layers"] = a.integer("num_layers");
    m["hidden"] = a.integer("hidden_size");
    m["heads"] = a.integer("num_attention_heads");
    m["kv_heads"] = a.yes("group_query_attention") ? a.integer("num_query_groups") : a.integer("num_attention_heads");
    if (a.has("kv_channels") && a.integer("kv_channels") * a.integer("num_attention_heads") != a.integer("hidden_size"))
        m["head_dim"] = a.integer("kv_channels");
    m["ffn"] = a.integer("ffn_hidden_size");
    const int64_t vocab =
        a.integer("padded_vocab_size", log.padded_vocab > 0 ? log.padded_vocab : a.integer("vocab_size", 0));
    if (vocab <= 0)
        fail(file, "padded_vocab_size",
             "the log names no vocabulary (padded_vocab_size or vocab_size among the arguments, or the tokenizer's "
             "'padded vocab ... (new size: N)' line)");
    m["vocab"] = vocab;
    m["activation"] = a.yes("swiglu") ? "swiglu" : "gelu";
    m["norm"] = a.text("normalization", "LayerNorm") == "RMSNorm" ? "rmsnorm" : "layernorm";
    m["position_embedding"] = a.text("position_embedding_type", "learned_absolute") == "rope" ? "rope" : "learned";
    m["tied_embeddings"] = !a.yes("untie_embeddings_and_output_weights");
    if (a.has("num_experts")) {
        m["moe"]["num_experts"] = a.integer("num_experts");
        m["moe"]["top_k"] = a.integer("moe_router_topk", 2);
        m["moe"]["expert_ffn"] = a.integer("moe_ffn_hidden_size", a.integer("ffn_hidden_size"));
    }
}

void training(YAML::Node t, YAML::Node c, const Args& a) {
    t["framework"] = "megatron-lm";
    t["tp"] = a.integer("tensor_model_parallel_size");
    t["pp"] = a.integer("pipeline_model_parallel_size");
    t["cp"] = a.integer("context_parallel_size", 1);
    t["dp"] = a.integer("data_parallel_size");
    const int64_t vp = a.integer("virtual_pipeline_model_parallel_size", 1);
    t["vp"] = vp;
    t["ep"] = a.integer("expert_model_parallel_size", 1);
    if (a.has("expert_tensor_parallel_size")) t["etp"] = a.integer("expert_tensor_parallel_size");
    t["sequence_parallel"] = a.yes("sequence_parallel");
    t["micro_batch_size"] = a.integer("micro_batch_size");
    t["global_batch_size"] = a.integer("global_batch_size");
    t["zero_stage"] = a.yes("use_distributed_optimizer") ? 1 : 0;
    const std::string g = a.text("recompute_granularity", "none");
    t["recompute"] = g;
    if (g == "full" && a.text("recompute_method") == "block")
        t["recompute_num_layers"] = a.integer("recompute_num_layers");
    t["pp_schedule"] = vp > 1 ? "interleaved-1f1b" : "1f1b";
    t["tp_comm_overlap"] = a.yes("tp_comm_overlap");
    t["dp_comm_overlap"] = a.yes("overlap_grad_reduce");
    t["pp_comm_overlap"] = a.yes("overlap_p2p_comm") && vp > 1;
    const std::string attention = a.text("attention_backend", "AttnBackend.auto");
    t["flash_attention"] = attention.find("unfused") == std::string::npos;
    c["model"]["seq_len"] = a.integer("seq_length");
    c["precision"]["dtype"] = a.has("fp8") ? "fp8" : a.yes("fp16") ? "fp16" : "bf16";
}

std::vector<YAML::Node> read(const Source& file, const Context& context) {
    const Log log = parse(file);
    const Args a(file, log);
    YAML::Node c = new_case(file, context, "training", "megatron-log");
    if (!context.scenario)
        fail(file, "", "the log does not name the accelerator: give the scenario of its cluster (--scenario)");
    const auto& cl = context.scenario->cluster;
    const int64_t gpus = a.integer("world_size");
    c["hardware"]["accelerator"] = cl.accelerator.id;
    c["cluster"]["gpus"] = gpus;
    c["cluster"]["nodes"] = (gpus + cl.gpus_per_node - 1) / cl.gpus_per_node;
    c["cluster"]["gpus_per_node"] = std::min<int64_t>(gpus, cl.gpus_per_node);
    c["cluster"]["intra_node"]["fabric"] = cl.scale_up.id;
    if (gpus > cl.gpus_per_node) {
        c["cluster"]["scale_out"]["fabric"] = cl.nic.id;
        c["cluster"]["scale_out"]["nics_per_node"] = cl.nics_per_node;
    }
    model(c["model"], a, log, file);
    training(c["training"], c, a);
    // The first logged iteration holds the warm-up (compilation, allocator growth).
    std::vector<double> steps(log.step_ms.begin() + (log.step_ms.size() > 1 ? 1 : 0), log.step_ms.end());
    c["metric"] = "step_time_s";
    c["value"] = launch::yaml_number(median(steps) / 1e3);
    c["unit"] = "s";
    c["statistic"] = "median";
    if (log.tflops.size() == log.step_ms.size()) {
        std::vector<double> f(log.tflops.begin() + (log.tflops.size() > 1 ? 1 : 0), log.tflops.end());
        YAML::Node m = metric("model_tflops_per_gpu", median(f), "TFLOPS/gpu", "median", "per_gpu");
        m["flops_convention"] = "model";
        m["attention_flops"] = "causal";
        m["note"] =
            "Megatron-LM's num_floating_point_operations: causal attention from 2025-03-06 (8873b55d6a), "
            "full before; the log does not say which version wrote it";
        c["other_metrics"].push_back(m);
        c["assumed"].push_back("attention_flops");
        c["completeness"] = "mostly_complete";
    }
    c["notes"].push_back("step time: the median of " + std::to_string(steps.size()) +
                         " logged iterations after the first; the cluster from the scenario " + context.scenario->file);
    return {c};
}

}  // namespace

Importer megatron_log_importer() {
    return {"a Megatron-LM training log",
            [](const Source& f) {
                return f.text.find("------------------------ arguments ------------------------") !=
                           std::string::npos &&
                       f.text.find("elapsed time per iteration (ms)") != std::string::npos;
            },
            read};
}

}  // namespace fathom::scenarios::imports
