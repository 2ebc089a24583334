// Microbenchmark cases of a measured-format file: the case's devices as a scenario's `cluster` (the
// one cluster reader of every kind), and one op on them priced by the same cost model (at kernel
// clocks: a benchmark loop is not a sustained training step) and network model a training step
// uses, reported in the source's own units and conventions:
//   gemm         TFLOPS = 2 M N K / time (flops_convention gemm_2mnk);
//   attention    TFLOPS = FlashAttention's count: 4 b s^2 h d forward, half of it causal, 2.5x
//                for the backward (attention_fa);
//   collectives  nccl-tests bus bandwidth: size / time x 2(n-1)/n (all-reduce), (n-1)/n
//                (all-gather, reduce-scatter, all-to-all), 1 (broadcast);
//   memcpy       a host-device copy by the copy engine: the PCIe link's achievable rate;
//   p2p          a copy between two GPUs of a node: bytes / time, both directions' bytes when
//                bidirectional (CUDA samples p2pBandwidthLatencyTest);
//   MoE all-to-all (DeepEP normal kernels, `tokens`, `hidden`, `top_k`): DeepEP's "bottleneck
//                bandwidth", the bytes its test counts over the bottleneck link / kernel time.
//                DeepEP sends a token once per destination rank (intra-node) or node (inter-node),
//                whatever the number of its experts there; with DeepSeek-V3's 256 experts routed
//                uniformly the expected number of destinations follows from the hypergeometric
//                law. The counted bytes include the rank's (node's) own share, the time is the
//                all-to-all of the bytes that leave it; both conventions are stated as assumptions.
#include "hardware/network/network_model.h"
#include "models/cost/cost_model.h"
#include "models/llm/moe_layer.h"
#include "models/ops/op.h"
#include "scenarios/measured_blocks.h"
#include "scenarios/measured_kinds.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

namespace fathom::scenarios::measured {
namespace {

hardware::Dtype case_dtype(const std::string& d) {
    if (d == "fp8") return hardware::Dtype::fp8;
    if (d == "fp16") return hardware::Dtype::fp16;
    if (d == "bf16" || d.empty()) return hardware::Dtype::bf16;
    throw Unsupported{"dtype '" + d + "' is not priced"};
}

void expect_metric(const Case& c, const char* metric, const std::string& of) {
    const std::string m = c.text("metric");
    if (m != metric) throw Unsupported{"metric '" + m + "' of " + of};
}

double price_gemm(const Case& c, const Evaluated& e, CompareResult& out) {
    expect_metric(c, "gemm_tflops", "a GEMM");
    if (c.peek("flops_convention") == "gemm_2mnk") c.at("flops_convention");
    const auto m = c.count("benchmark.M"), n = c.count("benchmark.N"), k = c.count("benchmark.K");
    // A grouped GEMM (fathom's extension, benchmark.groups): `groups` GEMMs of M rows each over
    // their own weights, one kernel, priced as the MoE layer prices its expert GEMMs (one batched
    // GEMM of that many groups); the source's TFLOP/s counts 2 M N K per group.
    const int64_t groups = c.has("benchmark.groups") ? c.count("benchmark.groups") : 1;
    const hardware::Dtype d = case_dtype(c.text("benchmark.dtype", "bf16"));
    const hardware::AcceleratorSpec& a = e.scenario.cluster.accelerator;
    if (!a.has(d)) throw Unsupported{"accelerator has no " + std::string(sim::name(d)) + " tensor cores"};
    plans::CostModelKind kind{};
    const auto cost = plans::cost_model_for(a, e.context, kind, models::Load::Kernel);
    models::OpDesc g = models::gemm_op("gemm", m, n, k, d, groups);
    // DeepGEMM's own kernels (deepseek-ai/DeepGEMM): their class where the device calibrates it.
    if (c.peek("benchmark.implementation") == "deepgemm") {
        c.at("benchmark.implementation");
        g.gemm_kernel = models::GemmKernel::DeepGemm;
        if (!(a.calibration.deepgemm_efficiency > 0))
            out.assumptions.push_back("no DeepGEMM class calibrated for this device: priced as the vendor library's");
    }
    if (c.has("benchmark.shape_sweep") && c.flag("benchmark.shape_sweep"))
        out.assumptions.push_back("best of a shape sweep: priced at the best shape the source names");
    return 2.0 * static_cast<double>(groups) * m * static_cast<double>(n) * k / cost->seconds(g) / 1e12;
}

double price_attention(const Case& c, const Evaluated& e, CompareResult& out) {
    expect_metric(c, "attention_tflops", "attention");
    if (c.peek("flops_convention") == "attention_fa") c.at("flops_convention");
    const std::string phase = c.text("benchmark.phase");
    if (phase != "forward" && phase != "backward") throw Unsupported{"attention phase '" + phase + "'"};
    if (c.has("benchmark.paged_kv") && c.flag("benchmark.paged_kv"))
        throw Unsupported{"paged decode attention is not compared yet"};
    models::AttentionShape a;
    const int64_t batch = c.count("benchmark.batch"), seq = c.count("benchmark.seq_len");
    a.heads = c.count("benchmark.heads");
    a.kv_heads = c.has("benchmark.kv_heads") ? c.count("benchmark.kv_heads") : a.heads;
    a.head_dim = c.count("benchmark.head_dim");
    a.causal = c.has("benchmark.causal") && c.flag("benchmark.causal");
    a.slices = {models::SequenceSlice{batch, seq, seq}};
    // FA3 and cuDNN are the Hopper-native class; flash-attn 2, Triton and SDPA's flash path the other.
    const std::string impl = c.text("benchmark.implementation");
    const bool fa3 = impl == "flash-attention-3" || impl == "cudnn" || impl.empty();
    a.kernel = fa3 ? models::AttentionKernel::Fa3 : models::AttentionKernel::Fa2;
    if (impl.empty()) out.assumptions.push_back("kernel class not stated: FA3");
    const hardware::Dtype d = case_dtype(c.text("benchmark.dtype", "bf16"));
    if (d == hardware::Dtype::fp8) throw Unsupported{"fp8 attention kernels are not priced"};
    plans::CostModelKind kind{};
    const auto cost = plans::cost_model_for(e.scenario.cluster.accelerator, e.context, kind, models::Load::Kernel);
    const models::OpDesc o = models::attention_op(phase == "backward", a, d);
    double flops = 4.0 * batch * static_cast<double>(seq) * seq * a.heads * a.head_dim * (a.causal ? 0.5 : 1.0);
    if (phase == "backward") flops *= 2.5;
    return flops / cost->seconds(o) / 1e12;
}

// A copy between two GPUs of one node (CUDA samples p2pBandwidthLatencyTest: copy-engine
// cudaMemcpyPeerAsync of 10,000,000 ints, 5 back to back, bytes / time), priced as the pipeline's
// send-recv over the scale-up fabric; bidirectional: both GPUs send at once over the full-duplex
// links and the source counts the bytes of both directions.
double price_p2p(const Case& c, const Evaluated& e, CompareResult& out) {
    expect_metric(c, "bandwidth_gb_per_s", "a p2p copy");
    if (c.text("link", "nvlink") != "nvlink") throw Unsupported{"p2p over '" + c.text("link") + "'"};
    if (e.scenario.cluster.gpus_per_node < 2) throw Unsupported{"a p2p copy within a node of one GPU"};
    double size = 0;
    if (c.has("benchmark.size_bytes")) {
        size = c.number("benchmark.size_bytes");
        if (!(size > 0)) c.fail("benchmark.size_bytes", "expected a positive finite number of bytes");
    } else if (c.text("benchmark.implementation") == "p2pBandwidthLatencyTest") {
        size = 4.0e7;  // NVIDIA/cuda-samples p2pBandwidthLatencyTest.cu: numElems = 10000000 ints per copy
        out.assumptions.push_back("40 MB per copy (p2pBandwidthLatencyTest's 10,000,000 ints)");
    } else {
        throw Unsupported{"p2p copy without size_bytes"};
    }
    const std::string direction = c.choice("direction", {"unidirectional", "bidirectional"}, "unidirectional");
    if (!c.has("direction")) out.assumptions.push_back("direction not stated: unidirectional");
    const auto network = hardware::make_network(e.context.with_network(e.scenario.cluster));
    const double t = network->collective(hardware::Collective::SendRecv, size, hardware::CommGroup(2, 1)).seconds;
    return (direction == "bidirectional" ? 2.0 : 1.0) * size / t / 1e9;
}

// A host-device copy over the GPU's PCIe link (nvbandwidth host_to_device_memcpy_ce and the like):
// the link's rate at its copy-engine efficiency, the rate the serving replay swaps KV blocks at.
// Copies driven by SM loads and stores (nvbandwidth *_memcpy_sm) are another mechanism (an SM's
// reads over PCIe are latency bound) that fathom does not model.
double price_memcpy(const Case& c, const Evaluated& e, CompareResult& out) {
    expect_metric(c, "bandwidth_gb_per_s", "a copy");
    if (c.text("link", "pcie") != "pcie") throw Unsupported{"a copy over '" + c.text("link") + "'"};
    const std::string copy = c.choice("benchmark.copy", {"h2d", "d2h", "d2d"}, "h2d");
    if (copy == "d2d") throw Unsupported{"device-to-device copies are not compared yet"};
    const std::string method = c.choice("benchmark.copy_method", {"ce", "sm"}, "ce");
    if (!c.has("benchmark.copy_method")) out.assumptions.push_back("copy method not stated: the copy engine");
    if (!c.has("benchmark.copy"))
        out.assumptions.push_back("copy direction not stated (host-to-device and back are priced alike)");
    if (method == "sm")
        throw Unsupported{"SM-driven copies are not modelled (fathom's PCIe rate is the copy engine's)"};
    out.assumptions.push_back("a large copy (latency negligible) over " + e.scenario.cluster.pcie.id);
    return e.scenario.cluster.pcie.achievable_bandwidth() / 1e9;
}

// DeepEP's low-latency kernels: every (token, expert) pair travels to the expert's rank (the
// accounting of DeepEP's own bandwidth figures), priced as the serving replay's deepep_ll dispatcher
// prices it: an all-to-all of tokens x top_k rows.
double price_low_latency(const Case& c, const hardware::NetworkModel& network, hardware::CommGroup group,
                         CompareResult& out) {
    expect_metric(c, "latency_us", "a low-latency MoE all-to-all");
    const double tokens = c.count("benchmark.tokens"), hidden = c.count("benchmark.hidden"),
                 k = c.count("benchmark.top_k");
    const bool fp8 = c.text("benchmark.dtype", "bf16") == "fp8";
    const double row = fp8 ? hidden + hidden / 128.0 * 4.0 : hidden * 2.0;
    out.assumptions.push_back("DeepEP low-latency accounting: every (token, expert) pair travels");
    const double efficiency = models::dispatcher_efficiency(models::MoeDispatcher::DeepEpLowLatency);
    return network.collective(hardware::Collective::AllToAll, tokens * k * row, group).seconds / efficiency * 1e6;
}

// DeepEP's normal kernels: the bytes its test counts over the bottleneck link / kernel time.
double price_deepep_normal(const Case& c, const Evaluated& e, const hardware::NetworkModel& network,
                           hardware::CommGroup group, CompareResult& out) {
    expect_metric(c, "bandwidth_gb_per_s", "an MoE all-to-all");
    const std::string impl = c.text("benchmark.implementation");
    if (impl.rfind("deepep-normal", 0) != 0)
        throw Unsupported{"MoE all-to-all '" + impl + "' (only DeepEP's normal kernels)"};
    const double tokens = c.count("benchmark.tokens"), hidden = c.count("benchmark.hidden"),
                 k = c.count("benchmark.top_k");
    // fp8 dispatch carries one float scale per 128 values.
    const double per_token = c.text("benchmark.dtype", "bf16") == "fp8" ? hidden + hidden / 128.0 * 4.0 : hidden * 2.0;
    const int64_t experts = 256;  // DeepSeek-V3's routed experts (the benchmark's shapes)
    const double n = group.size, g = std::min(group.size, e.scenario.cluster.gpus_per_node), nodes = std::ceil(n / g);
    out.assumptions.push_back("DeepEP accounting: a token travels once per destination " +
                              std::string(nodes > 1 ? "node" : "rank") + ", 256 experts routed uniformly");
    // Destinations of one token among `parts` equal parts of the experts (as the training replay's
    // DeepEP dispatcher counts them); the counted bytes include the own share ("logical" RDMA bytes
    // across nodes, everything received over NVLink within one).
    const double parts = nodes > 1 ? nodes : n;
    const double d = models::moe_destinations(experts, static_cast<int64_t>(k), static_cast<int>(parts));
    const double counted = tokens * d * per_token, leaving = tokens * d * (parts - 1) / parts * per_token;
    // The all-to-all of the leaving bytes, as the training replay prices it (per-rank send buffer:
    // leaving x n / (n - 1) spread evenly, of which the remote part crosses the NIC).
    const double send_buffer = nodes > 1 ? leaving * n / (n - g) : leaving * n / (n - 1);
    return counted / network.collective(hardware::Collective::AllToAll, send_buffer, group).seconds / 1e9;
}

double price_collective(const Case& c, const Evaluated& e, hardware::Collective op, CompareResult& out) {
    const int ranks = static_cast<int>(c.count("benchmark.ranks"));
    if (ranks < 2) throw Unsupported{"a collective of one rank"};
    if (ranks > e.scenario.cluster.gpus()) throw Unsupported{"more ranks than GPUs"};
    const std::string algorithm = c.text("benchmark.algorithm", "default");
    const std::string impl = c.text("benchmark.implementation");
    std::string forced;
    if (algorithm == "ring" || algorithm == "tree" || algorithm == "nvls") forced = algorithm;
    else if (algorithm != "default") throw Unsupported{"collective algorithm '" + algorithm + "' is not modelled"};
    hardware::ClusterSpec cluster = e.context.with_network(e.scenario.cluster);
    // A serving engine's own all-reduce kernel (vLLM, SGLang, TensorRT-LLM custom all-reduce):
    // fathom's `peer` algorithm, with the fabric's calibrated constants.
    const bool custom = impl == "custom-allreduce";
    if (custom) {
        if (op != hardware::Collective::AllReduce) throw Unsupported{"a custom all-reduce kernel of another op"};
        if (cluster.scale_up.peer_allreduce_bandwidth <= 0)
            throw Unsupported{"no custom all-reduce calibrated for fabric " + cluster.scale_up.id};
        cluster.peer_allreduce = true;
        forced = "peer";
    }
    const auto network = hardware::make_network(cluster, forced);
    hardware::CommGroup group;
    group.size = ranks;
    if (op == hardware::Collective::AllToAll && c.has("benchmark.tokens")) {
        // The MoE all-to-alls are priced as their dispatch (a combine would be read as its own phase).
        if (c.peek("benchmark.phase") == "dispatch") c.at("benchmark.phase");
        if (impl.rfind("deepep-low-latency", 0) == 0) return price_low_latency(c, *network, group, out);
        return price_deepep_normal(c, e, *network, group, out);
    }
    const std::string metric = c.text("metric");
    if (metric != "busbw_gb_per_s" && metric != "latency_us")
        throw Unsupported{"metric '" + metric + "' of a collective"};
    if (!c.has("benchmark.size_bytes")) throw Unsupported{"collective without size_bytes"};
    const double size = c.number("benchmark.size_bytes");
    const hardware::CollectiveCost cost = network->collective(op, size, group);
    if (custom && cost.algorithm != "peer")
        throw Unsupported{"a message above the custom all-reduce's size limit (NCCL's then)"};
    const double t = cost.seconds;
    if (impl != "nccl-tests" && !impl.empty() && !custom)
        out.assumptions.push_back("'" + impl + "' timed like nccl-tests");
    if (metric == "latency_us") return t * 1e6;
    return size / t * hardware::bus_factor(op, static_cast<double>(ranks)) / 1e9;
}

Translation translate_microbench(const Case& c, const plans::EvaluationContext& ctx) {
    Translation t;
    CaseScenario s;
    const std::string accelerator = translate_accelerator(c, *ctx.catalog, s.doc, t.assumptions);
    std::vector<std::string> nic;  // the NIC matters (and is said) only between nodes
    if (translate_cluster(c, *ctx.catalog, accelerator, s.doc, nic, t.fill_ins) > 1)
        t.fill_ins.insert(t.fill_ins.end(), nic.begin(), nic.end());
    const std::string impl = c.text("benchmark.implementation");
    t.stack = impl.empty() ? "defaults" : impl;
    t.scenarios.push_back(std::move(s));
    return t;
}

double microbench_metric(const Case& c, const Evaluated& e, CompareResult& out) {
    c.accept_deterministic_statistic();
    // The devices it ran on (`fathom calibrate refit` fits their constants).
    out.accelerator = e.scenario.cluster.accelerator.id;
    out.cluster = std::make_shared<const hardware::ClusterSpec>(e.scenario.cluster);
    const std::string op = c.text("benchmark.op");
    if (op == "gemm") return price_gemm(c, e, out);
    if (op == "attention") return price_attention(c, e, out);
    if (op == "p2p") return price_p2p(c, e, out);
    if (op == "memcpy") return price_memcpy(c, e, out);
    static const std::map<std::string, hardware::Collective> collectives = {
        {"allreduce", hardware::Collective::AllReduce},
        {"allgather", hardware::Collective::AllGather},
        {"reducescatter", hardware::Collective::ReduceScatter},
        {"alltoall", hardware::Collective::AllToAll},
        {"broadcast", hardware::Collective::Broadcast}};
    const auto it = collectives.find(op);
    if (it == collectives.end()) throw Unsupported{"microbenchmark op '" + op + "' is not compared yet"};
    return price_collective(c, e, it->second, out);
}

}  // namespace

const CaseKind& microbench_kind() {
    static const CaseKind kind{"microbench", translate_microbench, microbench_metric};
    return kind;
}

}  // namespace fathom::scenarios::measured
