#include "scenarios/scenario.h"

#include "plans/constraints.h"
#include "scenarios/calibration_io.h"
#include "sim/error.h"

namespace fathom::scenarios {
namespace {

void apply_override(YAML::Node root, const std::string& assignment) {
    const auto eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0)
        throw sim::InputError("--set expects key=value (e.g. training.tp=8), got '" + assignment + "'");
    const std::string path = assignment.substr(0, eq);
    const std::string value = assignment.substr(eq + 1);
    std::vector<std::string> parts;
    size_t start = 0;
    while (true) {
        const auto dot = path.find('.', start);
        parts.push_back(path.substr(start, dot - start));
        if (dot == std::string::npos) break;
        start = dot + 1;
    }
    std::vector<YAML::Node> chain{root};
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
        YAML::Node next = chain.back()[parts[i]];
        if (!next.IsDefined() || next.IsNull()) {
            chain.back()[parts[i]] = YAML::Node(YAML::NodeType::Map);
            next = chain.back()[parts[i]];
        }
        if (!next.IsMap()) throw sim::InputError("--set " + path + ": '" + parts[i] + "' is not a mapping");
        chain.push_back(next);
    }
    // Lists may be given inline: --set training.layers_per_stage=[16,16,15]
    YAML::Node parsed = YAML::Load(value);
    chain.back()[parts.back()] = parsed.IsSequence() ? parsed : YAML::Node(value);
}

workloads::Recompute parse_recompute(const Node& n, const std::string& key) {
    const std::string r = n.str(key);
    if (r == "none") return workloads::Recompute::None;
    if (r == "selective") return workloads::Recompute::Selective;
    if (r == "full") return workloads::Recompute::Full;
    n.fail(key, "expected none, selective or full, got '" + r + "'");
}

hardware::ClusterSpec parse_cluster(const Node& n, const Catalog& cat) {
    n.allow_only({"accelerator", "nodes", "gpus_per_node", "scale_up", "scale_out", "pcie", "ssd"});
    ClusterRequest r;
    r.accelerator = n.str("accelerator");
    r.nodes = static_cast<int>(n.integer("nodes"));
    r.gpus_per_node = static_cast<int>(n.integer("gpus_per_node"));
    if (r.nodes < 1) n.fail("nodes", "nodes must be >= 1");
    if (r.gpus_per_node < 1) n.fail("gpus_per_node", "gpus_per_node must be >= 1");
    if (n.has("scale_up")) r.scale_up = n.str("scale_up");
    if (auto so = n.find("scale_out")) {
        so->allow_only({"nic", "nics_per_node", "topology", "oversubscription", "nodes_per_leaf"});
        if (so->has("nic")) r.nic = so->str("nic");
        if (so->has("nics_per_node")) r.nics_per_node = static_cast<int>(so->integer("nics_per_node"));
        if (so->has("topology")) {
            const std::string t = so->str("topology");
            if (t == "fat-tree-2") r.topology = hardware::ScaleOutTopology::FatTree2;
            else if (t == "fat-tree-3") r.topology = hardware::ScaleOutTopology::FatTree3;
            else if (t == "rail-optimized") r.topology = hardware::ScaleOutTopology::RailOptimized;
            else so->fail("topology", "expected fat-tree-2, fat-tree-3 or rail-optimized, got '" + t + "'");
        }
        if (so->has("oversubscription")) {
            r.oversubscription = so->number("oversubscription");
            if (r.oversubscription < 1) so->fail("oversubscription", "oversubscription must be >= 1");
        }
        if (so->has("nodes_per_leaf")) r.nodes_per_leaf = static_cast<int>(so->integer("nodes_per_leaf"));
        if (r.nics_per_node < 1) so->fail("nics_per_node", "nics_per_node must be >= 1");
        if (r.nodes_per_leaf < 1) so->fail("nodes_per_leaf", "nodes_per_leaf must be >= 1");
    }
    if (n.has("pcie")) r.pcie = n.str("pcie");
    if (n.has("ssd")) r.ssd = n.str("ssd");
    try {
        return build_cluster(r, cat);
    } catch (const sim::InputError& e) {
        n.fail("", e.bare_message());
    }
}

workloads::TrainingPlan parse_training(const Node& n, int gpus) {
    n.allow_only({"seq_len", "global_batch_size", "micro_batch_size", "dp", "tp", "pp", "vp", "cp", "sequence_parallel",
                  "zero_stage", "recompute", "dtype", "schedule", "layers_per_stage", "grad_dtype", "tp_comm_overlap",
                  "dp_comm_overlap", "param_gather_overlap", "bucket_size", "runtime_reserved", "flash_attention", "fused_elementwise"});
    workloads::TrainingPlan p;
    p.training.seq_len = n.integer("seq_len");
    p.training.global_batch = static_cast<int>(n.integer("global_batch_size"));
    p.training.micro_batch = static_cast<int>(n.integer("micro_batch_size"));
    auto opt_int = [&n](const char* key, int fallback) { return n.has(key) ? static_cast<int>(n.integer(key)) : fallback; };
    p.layout.tp = opt_int("tp", 1);
    p.layout.pp = opt_int("pp", 1);
    p.layout.vp = opt_int("vp", 1);
    p.layout.cp = opt_int("cp", 1);
    const int model_parallel = p.layout.tp * p.layout.pp * p.layout.cp;
    if (n.has("dp")) p.layout.dp = static_cast<int>(n.integer("dp"));
    else if (model_parallel > 0 && gpus % model_parallel == 0) p.layout.dp = gpus / model_parallel;
    else n.fail("tp", "tp x pp x cp = " + std::to_string(model_parallel) + " does not divide the cluster's " +
                          std::to_string(gpus) + " GPUs");
    if (n.has("sequence_parallel")) p.layout.sequence_parallel = n.boolean("sequence_parallel");
    if (n.has("zero_stage")) p.training.zero_stage = static_cast<int>(n.integer("zero_stage"));
    if (n.has("recompute")) p.training.recompute = parse_recompute(n, "recompute");
    if (n.has("dtype")) {
        const auto d = hardware::parse_dtype(n.str("dtype"));
        if (!d || (*d != hardware::Dtype::bf16 && *d != hardware::Dtype::fp16 && *d != hardware::Dtype::fp8))
            n.fail("dtype", "expected bf16, fp16 or fp8, got '" + n.str("dtype") + "'");
        p.stack.kernels.gemm_dtype = *d;
    }
    p.training.schedule = n.has("schedule") ? n.str("schedule") : (p.layout.vp > 1 ? "interleaved-1f1b" : "1f1b");
    if (auto l = n.find("layers_per_stage")) {
        for (const auto& item : l->items()) {
            const std::string s = item.scalar();
            try {
                p.training.layers_per_virtual_stage.push_back(std::stoi(s));
            } catch (const std::exception&) {
                item.fail("", "expected an integer, got '" + s + "'");
            }
        }
    }
    if (n.has("grad_dtype")) {
        const std::string g = n.str("grad_dtype");
        if (g == "fp32") p.stack.grad_bytes = 4;
        else if (g == "bf16") p.stack.grad_bytes = 2;
        else n.fail("grad_dtype", "expected fp32 or bf16, got '" + g + "'");
    }
    if (n.has("flash_attention")) p.stack.kernels.flash_attention = n.boolean("flash_attention");
    if (n.has("fused_elementwise")) p.stack.kernels.fused_elementwise = n.boolean("fused_elementwise");
    if (n.has("tp_comm_overlap")) p.stack.tp_comm_overlap = n.boolean("tp_comm_overlap");
    if (n.has("dp_comm_overlap")) p.stack.dp_comm_overlap = n.boolean("dp_comm_overlap");
    if (n.has("param_gather_overlap")) p.stack.param_gather_overlap = n.boolean("param_gather_overlap");
    if (n.has("bucket_size")) p.stack.bucket_params = n.number("bucket_size");
    if (n.has("runtime_reserved")) p.stack.runtime_reserved = n.quantity("runtime_reserved", sim::Dimension::Bytes);
    return p;
}

}  // namespace

hardware::ClusterSpec build_cluster(const ClusterRequest& r, const Catalog& cat) {
    hardware::ClusterSpec c;
    c.accelerator = cat.accelerator(r.accelerator);
    c.nodes = r.nodes;
    c.gpus_per_node = r.gpus_per_node;
    c.scale_up = cat.fabric(r.scale_up.empty() ? c.accelerator.scale_up : r.scale_up);
    if (r.gpus_per_node > c.scale_up.max_domain_size)
        throw sim::InputError("gpus_per_node = " + std::to_string(r.gpus_per_node) + " exceeds the " +
                              std::to_string(c.scale_up.max_domain_size) + "-GPU domain of fabric '" + c.scale_up.id + "'");
    c.nic = cat.nic(r.nic);
    c.nics_per_node = r.nics_per_node;
    c.topology = r.topology;
    c.oversubscription = r.oversubscription;
    c.nodes_per_leaf = r.nodes_per_leaf;
    c.pcie = cat.pcie(r.pcie);
    if (!r.ssd.empty()) c.ssd = cat.ssd(r.ssd);
    return c;
}

Scenario parse_scenario(const Node& root, const Catalog& catalog) {
    root.allow_only({"name", "kind", "seed", "model", "cluster", "training"});
    Scenario s;
    s.file = root.file();
    s.name = root.has("name") ? root.str("name") : root.file();
    const std::string kind = root.has("kind") ? root.str("kind") : "training";
    if (kind != "training") root.fail("kind", "only 'training' scenarios are supported so far (got '" + kind + "')");
    if (root.has("seed")) s.seed = static_cast<uint64_t>(root.integer("seed"));
    const Node model = root.child("model");
    if (model.is_scalar()) {
        try {
            s.model = catalog.model(model.scalar());
        } catch (const sim::InputError& e) {
            root.fail("model", e.bare_message());
        }
    } else {
        s.model = parse_model(model, false);
    }
    s.cluster = parse_cluster(root.child("cluster"), catalog);
    s.cost_table = load_cost_table(s.cluster.accelerator);
    const Node training = root.child("training");
    s.plan = parse_training(training, s.cluster.gpus());
    const auto violations = plans::check_training_plan(s.model, s.cluster, s.plan);
    if (!violations.empty()) {
        std::string msg = violations.front().message;
        for (size_t i = 1; i < violations.size(); ++i) msg += "; also " + violations[i].key + ": " + violations[i].message;
        const std::string key = violations.front().key;
        training.fail(key, "impossible plan: " + msg);
    }
    return s;
}

std::shared_ptr<const models::CalibrationTable> load_cost_table(const hardware::AcceleratorSpec& acc) {
    if (acc.calibration_table.empty()) return nullptr;
    auto t = std::make_shared<models::CalibrationTable>(read_calibration_table(acc.calibration_table));
    if (t->device != acc.id)
        throw sim::InputError("calibration table is for '" + t->device + "', not '" + acc.id + "'", acc.calibration_table);
    return t;
}

Scenario load_scenario(const std::string& path, const Catalog& catalog, const std::vector<std::string>& overrides) {
    Node root = load_yaml_file(path);
    for (const auto& o : overrides) apply_override(root.raw(), o);
    return parse_scenario(root, catalog);
}

}  // namespace fathom::scenarios
