#include "scenarios/layer_check.h"

#include "models/llm/dense_layer.h"
#include "models/llm/moe_layer.h"
#include "scenarios/calibration_io.h"
#include "sim/error.h"
#include "sim/input_file.h"

#include <cmath>
#include <fstream>
#include <map>

namespace fathom::scenarios {

std::vector<LayerMeasurement> read_layer_csv(const std::string& path) {
    std::ifstream in = sim::open_input(path, "layer measurements file");
    const auto col =
        read_csv_header(in, path, "layer measurements file", {"model", "phase", "batch", "q_len", "kv_len", "time_us"});
    std::string line;
    std::vector<LayerMeasurement> out;
    int line_no = 1;
    while (std::getline(in, line)) {
        ++line_no;
        if (line.empty()) continue;
        const auto f = split_csv(line);
        auto get = [&](const char* name) { return col.at(name) < f.size() ? f[col.at(name)] : std::string(); };
        auto num = [&](const char* name) {
            const std::string s = get(name);
            try {
                size_t pos = 0;
                const double v = std::stod(s, &pos);
                if (pos == s.size() && v > 0 && std::isfinite(v)) return v;
            } catch (const std::exception&) {}
            throw sim::InputError("expected a positive number, got '" + s + "'", path, line_no, name);
        };
        // Counts (sequences, tokens, keys) are whole numbers below 2^53: 1.5 sequences is an error,
        // never truncated.
        auto count = [&](const char* name) {
            const double v = num(name);
            if (v != std::floor(v) || v > 9007199254740992.0)
                throw sim::InputError("expected a whole number, got '" + get(name) + "'", path, line_no, name);
            return static_cast<int64_t>(v);
        };
        LayerMeasurement m;
        m.line = line_no;
        m.model = get("model");
        m.phase = get("phase");
        if (m.phase != "train" && m.phase != "forward" && m.phase != "prefill" && m.phase != "decode" &&
            m.phase != "decode_graph")
            throw sim::InputError("unknown phase '" + m.phase + "' (train, forward, prefill, decode, decode_graph)",
                                  path, line_no, "phase");
        m.batch = count("batch");
        m.q_len = count("q_len");
        m.kv_len = count("kv_len");
        m.seconds = num("time_us") * 1e-6;
        // Optional column: eager (default: layers.py) or fused (layers_compiled.py, torch.compile).
        const std::string ew = col.count("elementwise") ? get("elementwise") : std::string();
        if (!ew.empty() && ew != "eager" && ew != "fused")
            throw sim::InputError("unknown elementwise kernels '" + ew + "' (eager, fused)", path, line_no,
                                  "elementwise");
        m.fused_elementwise = ew == "fused";
        // Optional: the measured kernel time of each op class (an empty cell: not measured).
        for (size_t k = 0; k < kOpClasses.size(); ++k) {
            const std::string column = std::string(kOpClasses[k]) + "_us";
            if (!col.count(column) || get(column.c_str()).empty()) continue;
            try {
                size_t pos = 0;
                const double v = std::stod(get(column.c_str()), &pos);
                if (pos == get(column.c_str()).size() && v >= 0 && std::isfinite(v)) m.class_seconds[k] = v * 1e-6;
            } catch (const std::exception&) {}
            if (m.class_seconds[k] < 0)
                throw sim::InputError("expected a number >= 0, got '" + get(column.c_str()) + "'", path, line_no,
                                      column);
        }
        out.push_back(m);
    }
    if (out.empty()) throw sim::InputError("no layer measurement rows", path, 1);
    return out;
}

void check_layer_models(const std::vector<LayerMeasurement>& rows, const plans::Catalog& catalog,
                        const std::string& path) {
    for (const auto& m : rows) {
        const auto it = catalog.models().find(m.model);
        if (it == catalog.models().end())
            throw sim::InputError(
                m.model.empty() ? "missing value" : "unknown model '" + m.model + "' (see `fathom list models`)", path,
                m.line, "model");
        const auto& model = it->second;
        // A mixture of experts is priced on one GPU (EP 1): every layer must be an MoE layer, and
        // no shared experts (moe_layers.py measures neither interleaved dense layers nor them).
        if (model.moe.num_experts > 0 && (model.moe_layers() != model.layers || model.moe.shared_experts > 0))
            throw sim::InputError("model '" + m.model +
                                      "': layer checks take dense models and mixtures of experts whose every layer is "
                                      "an MoE layer without shared experts",
                                  path, m.line, "model");
    }
}

size_t op_class(const models::OpDesc& op) {
    if (op.kind == models::OpKind::Gemm) return 0;
    if (op.kind == models::OpKind::AttentionFwd || op.kind == models::OpKind::AttentionBwd) return 1;
    return 2;
}

LayerSum layer_op_sum(const models::ModelSpec& model, const LayerMeasurement& m, const models::CostModel& cost) {
    models::LayerInputs in;
    in.batch = models::TokenBatch::uniform(m.batch, m.q_len, m.kv_len);
    in.kernels.fused_elementwise = m.fused_elementwise;  // eager PyTorch, or torch.compile's fusions
    in.kernels.attention_kernel = models::AttentionKernel::Fa3;
    in.kernels.expert_gemm_kernel = models::GemmKernel::Grouped;  // moe_layers.py: torch._grouped_mm
    const bool moe = model.moe.num_experts > 0;
    const models::LayerProgram fwd =
        moe ? models::moe_layer_forward(model, in) : models::dense_layer_forward(model, in);
    std::vector<models::OpDesc> ops = fwd.ops();
    if (m.phase == "train") {
        const auto bwd = models::backward_program(fwd).ops();
        ops.insert(ops.end(), bwd.begin(), bwd.end());
    }
    LayerSum s;
    for (const auto& op : ops) {
        const double t = cost.seconds(op);
        s.seconds += t;
        s.each.emplace_back(op, t);
    }
    return s;
}

}  // namespace fathom::scenarios
