// Context parallelism, each against a derivation: the load-balanced split gives every rank the
// causal total / cp (checked against a brute-force count of the query/key pairs each rank's
// mirrored chunks see), the three K/V exchanges build the collectives they run, and a transfer
// overlapped with the attention steps is exposed by exactly the sum over steps of
// max(0, transfer - step).
#include "hardware/network/network_model.h"
#include "models/cost/cost_model.h"
#include "models/llm/dense_layer.h"
#include "tests/support/model_fixture.h"
#include "workloads/parallelism.h"
#include "workloads/replay/program_cost.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

using namespace fathom;
using models::CpComm;
using models::OpKind;

namespace {

models::ModelSpec small_model() { return testing::dense_model(2, 1024, 8, 2, 4096, 1000); }

// The forward program of one context-parallel rank: `sequences` sequences of `seq` tokens.
models::LayerProgram rank_program(int cp, CpComm how, int64_t seq, int64_t sequences = 1) {
    models::LayerInputs in;
    in.shard.cp = cp;
    in.shard.cp_comm = how;
    in.batch = models::TokenBatch::uniform(sequences, seq / cp, seq);
    return models::dense_layer_forward(small_model(), in);
}

double attention_flops(const models::LayerProgram& p) {
    double f = 0;
    for (const auto& op : p.ops())
        if (op.kind == OpKind::AttentionFwd) f += op.flops;
    return f;
}

// Pairs (query i, key j) with j <= i among rank r's queries, the diagonal counted half (the
// op's FLOP count neglects it the same way: a causal s x s block is s^2 / 2), with the sequence
// split into 2 cp chunks and rank r holding chunks r and 2 cp - 1 - r.
double visible_pairs(int r, int cp, int64_t seq) {
    const int64_t c = seq / (2 * cp);
    double pairs = 0;
    for (int64_t chunk : {static_cast<int64_t>(r), static_cast<int64_t>(2 * cp - 1 - r)})
        for (int64_t i = chunk * c; i < (chunk + 1) * c; ++i) pairs += static_cast<double>(i) + 0.5;
    return pairs;
}

// Every op takes a fixed time by kind; every collective 1 ns per byte.
class FixedCost final : public models::CostModel {
public:
    double seconds(const models::OpDesc& op) const override {
        return op.kind == OpKind::AttentionFwd || op.kind == OpKind::AttentionBwd ? attention : 1e-3;
    }
    double attention = 4e-3;
};
class PerByte final : public hardware::NetworkModel {
public:
    hardware::CollectiveCost collective(hardware::Collective, double bytes, const hardware::CommGroup&) const override {
        return {bytes * 1e-9, "fixed"};
    }
    hardware::GroupLayout layout(const hardware::CommGroup& g) const override { return {g.count(), g.count(), 1}; }
};

}  // namespace

TEST_CASE("load-balanced context parallelism gives every rank the causal total / cp", "[workloads][cp]") {
    // s = 4096, 8 heads of 128: the causal total is 4 x 8 x 128 x s^2 / 2 FLOPs. Per rank, the two
    // mirrored chunks see (r + (2cp - 1 - r)) c^2 + c^2 = 2 cp c^2 = s^2 / (2 cp) pairs.
    const int64_t s = 4096;
    const double per_pair = 4.0 * 8 * 128;
    const double causal_total = attention_flops(rank_program(1, CpComm::P2p, s));
    CHECK(causal_total == Approx(per_pair * s * s / 2.0).epsilon(1e-12));
    for (CpComm how : {CpComm::P2p, CpComm::AllGather, CpComm::A2a})
        for (int cp : {2, 4, 8}) {
            INFO(sim::name(how) << " cp " << cp);
            const double rank = attention_flops(rank_program(cp, how, s));
            CHECK(cp * rank == Approx(causal_total).epsilon(1e-12));  // summed over the cp ranks
            for (int r = 0; r < cp; ++r) CHECK(rank == Approx(per_pair * visible_pairs(r, cp, s)).epsilon(1e-12));
        }
    // The old per-rank charge, q x kv x (1 - q / (2 kv)) for q = s/cp trailing queries, was 2 - 1/cp
    // times this (1.75x at cp 4): every rank paid for the last, densest slice.
    CHECK(attention_flops(rank_program(4, CpComm::P2p, s)) < 0.6 * per_pair * (s / 4.0) * s * (1 - 1 / 8.0));
}

TEST_CASE("each context-parallel flavour runs its own collectives", "[workloads][cp]") {
    // Per rank: q = s/cp = 1024 local tokens; K and V of 2 KV heads x 128 in bf16 = 1024 B per token.
    const int cp = 4;
    const int64_t s = 4096;
    const double kv_local = 1024.0 * 2 * 2 * 128 * 2;
    auto cp_steps = [](const models::LayerProgram& p) {
        std::vector<models::CommStep> out;
        for (const auto& st : p.steps)
            if (st.kind == models::ProgramStep::Kind::Comm && st.comm.group == models::GroupKind::cp)
                out.push_back(st.comm);
        return out;
    };
    {
        const auto fwd = rank_program(cp, CpComm::P2p, s);
        const auto f = cp_steps(fwd);
        REQUIRE(f.size() == 1);
        CHECK(*f[0].collective == hardware::Collective::SendRecv);
        CHECK(f[0].bytes == kv_local);
        CHECK(f[0].attention_steps == cp);
        CHECK(f[0].overlapped == cp - 1);
        // Backward: K/V and their gradients together beside the steps, then the gradients' last hop.
        const auto b = cp_steps(models::backward_program(fwd));
        REQUIRE(b.size() == 2);
        CHECK(b[0].bytes == 2 * kv_local);
        CHECK(b[0].overlapped == cp - 1);
        CHECK(b[1].bytes == kv_local);
        CHECK(b[1].attention_steps == 0);
    }
    {
        const auto fwd = rank_program(cp, CpComm::AllGather, s);
        const auto f = cp_steps(fwd);
        REQUIRE(f.size() == 1);
        CHECK(*f[0].collective == hardware::Collective::AllGather);
        CHECK(f[0].bytes == cp * kv_local);  // nccl-tests size: the gathered K/V
        CHECK(f[0].overlapped == 1);         // beside the first (diagonal) step
        const auto b = cp_steps(models::backward_program(fwd));
        REQUIRE(b.size() == 2);
        CHECK(*b[0].collective == hardware::Collective::AllGather);  // gathered again, beside a step
        CHECK(b[0].overlapped == 1);
        CHECK(*b[1].collective == hardware::Collective::ReduceScatter);  // dK, dV, exposed
        CHECK(b[1].attention_steps == 0);
    }
    {
        const auto fwd = rank_program(cp, CpComm::A2a, s);
        const auto f = cp_steps(fwd);
        REQUIRE(f.size() == 2);
        // Q, K, V (8 + 2 + 2 heads x 128 x 2 B per local token) in; the output (8 heads) back.
        CHECK(*f[0].collective == hardware::Collective::AllToAll);
        CHECK(f[0].bytes == 1024.0 * 12 * 128 * 2);
        CHECK(f[1].bytes == 1024.0 * 8 * 128 * 2);
        for (const auto& op : fwd.ops())
            if (op.kind == OpKind::AttentionFwd) {
                CHECK(op.attn.heads == 2);  // 8 heads / cp 4, over the whole sequence
                CHECK(op.attn.slices.front().q_len == s);
            }
    }
}

TEST_CASE("a transfer beside the attention steps is exposed by the sum of max(0, transfer - step)", "[workloads][cp]") {
    // Hand-built program: 3 ms of other compute, 4 ms of attention in 4 steps (1 ms each), and
    // 3 ring transfers beside steps 0-2. At 1 ns/B a 1.5 MB transfer takes 1.5 ms:
    //   exposed = 3 x max(0, 1.5 - 1) = 1.5 ms, hidden = 3 x min(1.5, 1) = 3 ms;
    // a 0.5 MB transfer (0.5 ms) hides entirely: exposed 0, hidden 1.5 ms.
    FixedCost cost;
    PerByte net;
    workloads::ParallelLayout layout;
    layout.cp = 4;
    workloads::ProgramCoster coster(cost, net, layout);
    for (const double mb : {1.5, 0.5}) {
        models::LayerProgram p;
        p.compute(models::gemm_op("qkv", 64, 64, 64, hardware::Dtype::bf16));
        models::CommStep c;
        c.collective = hardware::Collective::SendRecv;
        c.bytes = mb * 1e6;
        c.group = models::GroupKind::cp;
        c.awaited = true;
        c.attention_steps = 4;
        c.overlapped = 3;
        p.comm(c);
        models::AttentionShape a;
        a.heads = a.kv_heads = 1;
        a.head_dim = 128;
        a.slices = {{1, 128, 128}};
        p.compute(models::attention_op(false, a, hardware::Dtype::bf16));
        p.compute(models::gemm_op("proj", 64, 64, 64, hardware::Dtype::bf16));
        p.compute(models::gemm_op("fc", 64, 64, 64, hardware::Dtype::bf16));
        const workloads::PassCost pc = coster.cost(p);
        const double transfer = mb * 1e-3, step = 1e-3;
        double exposed = 0, hidden = 0;
        for (int k = 0; k < 3; ++k) {
            exposed += std::max(0.0, transfer - step);
            hidden += std::min(transfer, step);
        }
        INFO(mb << " MB per transfer");
        CHECK(pc.compute == Approx(7e-3));
        CHECK(pc.trail_of(models::GroupKind::cp) ==
              Approx(exposed).margin(1e-15));  // the step sits after compute began
        CHECK(pc.lead_of(models::GroupKind::cp) == 0);
        CHECK(pc.hidden_of(models::GroupKind::cp) == Approx(hidden));
    }
}
