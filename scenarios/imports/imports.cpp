#include "scenarios/imports/imports.h"

#include "plans/catalog.h"
#include "plans/keys.h"
#include "scenarios/imports/importers.h"
#include "scenarios/launch/launch.h"
#include "sim/error.h"

#include <cctype>
#include <filesystem>

namespace fathom::scenarios::imports {

const sim::Registry<Importer>& import_registry() {
    static const sim::Registry<Importer> r = [] {
        sim::Registry<Importer> x("import format");
        x.add("vllm-bench", "vLLM `vllm bench serve --save-result` (benchmark_serving.py) JSON", vllm_bench_importer());
        x.add("sglang-bench", "SGLang `python -m sglang.bench_serving --output-file` JSONL, a case per line",
              sglang_bench_importer());
        x.add("nccl-tests", "nccl-tests output (all_reduce_perf, all_gather_perf, ...): busbw per size",
              nccl_importer());
        x.add("megatron-log", "Megatron-LM training log: its arguments and iteration times", megatron_log_importer());
        x.add("genai-perf", "GenAI-Perf `genai-perf profile` profile_export_genai_perf.json", genai_perf_importer());
        x.add("aiperf", "AIPerf `aiperf profile` profile_export_aiperf.json", aiperf_importer());
        x.add("nemo-log", "NeMo training log: train_step_timing per step, the plan from its config dump",
              nemo_log_importer());
        x.add("torch-profiler",
              "torch.profiler key_averages().table() text or export_chrome_trace JSON: kernel time per op class of "
              "a layer, as layers.csv rows",
              torch_profiler_importer());
        x.add("nsys-kernels",
              "nsys stats --report cuda_gpu_kern_sum --format csv: kernel time per op class of a layer, as "
              "layers.csv rows",
              nsys_kernels_importer());
        return x;
    }();
    return r;
}

const Importer& importer_of(const Source& file, const std::string& tool) {
    const auto& r = import_registry();
    const Importer* importer = nullptr;
    if (!tool.empty()) {
        importer = &r.get(tool).factory;
        if (!importer->recognizes(file)) fail(file, "", std::string("not a file of ") + importer->what);
    } else {
        for (const auto& e : r.entries())
            if (e.factory.recognizes(file)) importer = &e.factory;
        if (!importer) fail(file, "", "not a file fathom imports (" + r.names() + "; --from says which)");
    }
    return *importer;
}

YAML::Node import_file(const Source& file, const std::string& tool, const Context& context) {
    const Importer* importer = &importer_of(file, tool);
    if (!importer->read)
        fail(file, "", std::string(importer->what) + " gives layers.csv rows for `fathom calibrate layers`, not cases");
    YAML::Node doc;
    doc["format_version"] = 1;
    for (const YAML::Node& c : importer->read(file, context)) doc["cases"].push_back(c);
    return doc;
}

void fail(const Source& file, const std::string& key, const std::string& why, int line) {
    throw sim::InputError(why, file.path, line, key);
}

YAML::Node new_case(const Source& file, const Context& context, const std::string& kind, const std::string& tool) {
    YAML::Node c;
    std::string id = context.id;
    if (id.empty()) {
        for (char ch : std::filesystem::path(file.path).stem().string())
            id += std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '-' || ch == '_' ? ch : '-';
        if (id.empty() || !std::isalnum(static_cast<unsigned char>(id[0]))) id = "imported-" + id;
    }
    c["id"] = id;
    c["kind"] = kind;
    c["source"]["type"] = "import";
    c["source"]["title"] = tool + " output " + std::filesystem::path(file.path).filename().string();
    c["source"]["path"] = file.path;
    c["source"]["note"] = "imported by fathom import from " + tool + " output";
    c["trust"] = "medium";
    c["completeness"] = "complete";
    return c;
}

namespace {

void add_model(YAML::Node m, const models::ModelSpec& s) {
    m["name"] = s.name;
    m["architecture"] = s.moe.enabled() ? "moe" : "dense";
    m["layers"] = s.layers;
    m["hidden"] = s.hidden;
    m["heads"] = s.heads;
    m["kv_heads"] = s.kv_heads;
    if (s.head_dim > 0) m["head_dim"] = s.head_dim;
    m["ffn"] = s.ffn;
    m["vocab"] = s.vocab;
    m["activation"] = sim::name(s.activation);
    m["norm"] = sim::name(s.norm);
    m["position_embedding"] = sim::name(s.position);
    m["tied_embeddings"] = s.tied_embeddings;
    if (s.moe.enabled()) {
        m["moe"]["num_experts"] = s.moe.num_experts;
        m["moe"]["top_k"] = s.moe.top_k;
        m["moe"]["expert_ffn"] = s.moe.expert_ffn;
        if (s.moe.shared_experts > 0) m["moe"]["shared_experts"] = s.moe.shared_experts;
        if (s.moe.dense_layers > 0) m["moe"]["dense_layers"] = s.moe.dense_layers;
        if (s.moe.layer_frequency > 1) m["moe"]["moe_layer_frequency"] = s.moe.layer_frequency;
    }
    if (s.mla.enabled()) {
        m["mla"]["q_lora_rank"] = s.mla.q_lora_rank;
        m["mla"]["kv_lora_rank"] = s.mla.kv_lora_rank;
        m["mla"]["qk_nope_head_dim"] = s.mla.qk_nope_head_dim;
        m["mla"]["qk_rope_head_dim"] = s.mla.qk_rope_head_dim;
        m["mla"]["v_head_dim"] = s.mla.v_head_dim;
    }
}

// The launch dialect of the scenario's framework or engine.
std::string dialect_of(const plans::Scenario& s) {
    if (const auto* t = s.training()) {
        const std::string& p = t->stack_preset;
        if (p.rfind("megatron", 0) == 0) return "megatron";
        if (p.rfind("nemo", 0) == 0) return "nemo";
        if (p == "torchtitan") return "torchtitan";
        throw sim::InputError("the scenario's stack '" + (p.empty() ? std::string("fathom defaults") : p) +
                                  "' is none of the frameworks export writes (megatron-lm, nemo, torchtitan)",
                              s.file, 0, "stack.preset");
    }
    const std::string& e = s.serving()->engine.preset;
    if (e == "vllm" || e == "sglang") return e;
    if (e == "tensorrt-llm") return "trtllm";
    throw sim::InputError("the scenario's engine '" + (e.empty() ? std::string("fathom defaults") : e) +
                              "' is none of the engines export writes (vllm, sglang, tensorrt-llm)",
                          s.file, 0, "serving.engine");
}

}  // namespace

void add_scenario(YAML::Node c, const Source& file, const Context& context, const std::string& needs) {
    if (!context.scenario) fail(file, "", "the file does not say " + needs + ": give the scenario it ran (--scenario)");
    const plans::Scenario& s = *context.scenario;
    const std::string kind = c["kind"].as<std::string>();
    if ((kind == "serving") != (s.serving() != nullptr) || s.rl())
        throw sim::InputError(
            "a " + kind + " file needs a " + kind + " scenario, and this is a " + sim::name(s.kind()) + " one", s.file);
    const int64_t gpus = s.training() ? s.training()->gpus() : s.serving()->gpus();
    const int per_node = s.cluster.gpus_per_node;
    c["hardware"]["accelerator"] = s.cluster.accelerator.id;
    YAML::Node cl = c["cluster"];
    cl["gpus"] = gpus;
    cl["nodes"] = (gpus + per_node - 1) / per_node;
    cl["gpus_per_node"] = per_node;
    cl["intra_node"]["fabric"] = s.cluster.scale_up.id;
    if (gpus > per_node) {
        cl["scale_out"]["fabric"] = s.cluster.nic.id;
        cl["scale_out"]["nics_per_node"] = s.cluster.nics_per_node;
    }
    add_model(c["model"], s.model);
    const std::string framework = dialect_of(s);
    const launch::Job job{s.name, s.file, &s.model, &s.cluster, s.training(), s.serving()};
    const YAML::Node fields =
        launch::launch_registry().get(framework).factory.read(launch::export_launch(job, framework), s.model);
    for (const auto& kv : fields) c[kv.first.as<std::string>()] = kv.second;
    if (s.serving()) c["serving"]["router"] = s.serving()->router;
    // A format the launch files leave to the checkpoint (quantized weights): the plan's.
    if (!c["precision"]["dtype"]) {
        const std::string d = s.serving() ? plans::format_value(plans::get_serving_key(*s.serving(), "serving.dtype"))
                                          : plans::format_value(plans::get_training_key(*s.training(), "stack.dtype"));
        c["precision"]["dtype"] = d == "w4a16" ? "int4" : d == "w8a16" ? "int8" : d;
        if (d == "w4a16" || d == "w8a16") c["precision"]["activations"] = "bf16";
    }
    c["notes"].push_back("model, cluster and plan from the scenario " + s.file + " (as fathom export --for " +
                         framework + " writes them)");
}

YAML::Node metric(const std::string& name, double value, const std::string& unit, const std::string& statistic,
                  const std::string& scope) {
    YAML::Node m;
    m["metric"] = name;
    m["value"] = launch::yaml_number(value);
    m["unit"] = unit;
    m["statistic"] = statistic;
    if (!scope.empty()) m["scope"] = scope;
    return m;
}

}  // namespace fathom::scenarios::imports
