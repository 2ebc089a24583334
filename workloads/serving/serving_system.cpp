#include "workloads/serving/serving_system.h"

#include "sim/error.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace fathom::workloads::serving {

ServingSystem::ServingSystem(const ServingInputs& in) : in_(in) {
    const ServingPlan& p = in.plan;
    max_len_ = p.batching.max_model_len > 0 ? p.batching.max_model_len : in.model.max_seq_len;
    if (p.lora.enabled()) popularity_.emplace(p.lora.adapters, p.lora.popularity);
    const std::vector<Pool> pools = p.pools();
    FATHOM_CHECK(in.pool_costs.size() == pools.size(), "a cost model per pool");
    pools_.reserve(pools.size());  // decode_ points into it
    // The KV store the replicas share, in whole blocks.
    if (p.kv.store_bytes > 0)
        store_.emplace(static_cast<int64_t>(std::floor(p.kv.store_bytes / store_block_bytes(in.model, p.kv))));
    int index = 0, rank = 0;
    for (size_t i = 0; i < pools.size(); ++i)
        if (pools[i].simulated) build(pools[i], *in.pool_costs[i], i, index, rank);
    FATHOM_CHECK(!pools_.empty(), "a serving plan without a simulated pool");
    if (pools_.front().pool.role == PoolRole::Prefill && pools_.back().pool.role == PoolRole::Decode) {
        decode_ = &pools_.back();
        connect_kv_transfers();
    }
    if (p.autoscale.enabled()) {
        FATHOM_CHECK(pools_.size() == 1 && pools_.front().pool.role == PoolRole::Aggregated,
                     "autoscaling scales an aggregated pool");
        const PoolState& pool = pools_.front();
        const PoolLayout& layout = *pool.pool.layout;
        const ColdStart cold = cold_start(p.autoscale, in.cluster, layout, pool.memory.weight_bytes);
        autoscaler_ = std::make_unique<Autoscaler>(sim_, static_cast<Fleet&>(*this), p.autoscale, p.slo,
                                                   layout.replicas, int64_t{layout.tp} * layout.pp, cold);
        warm_.assign(static_cast<size_t>(layout.replicas), false);
        for (int64_t i = 0; i < std::min<int64_t>(p.autoscale.initial(), layout.replicas); ++i)
            warm_[static_cast<size_t>(i)] = true;
        autoscaler_->start();
    }
}

ServingSystem::~ServingSystem() = default;

void ServingSystem::build(const Pool& pool, const models::CostModel& cost, size_t pool_index, int& index, int& rank) {
    const ServingPlan& p = in_.plan;
    const PoolLayout& layout = *pool.layout;
    PoolState& s = pools_.emplace_back();
    s.pool = pool;
    s.memory = replica_memory(in_.model, layout, p.kernels, p.kv, p.batching, p.engine, p.speculative, p.lora);
    if (!s.memory.fits()) throw sim::InputError(s.memory.why_not());
    s.router = router_registry().get(p.router).factory();
    s.costs = std::make_unique<PoolCosts>(in_, layout, cost, pool_index);
    for (int i = 0; i < layout.replicas; ++i) {
        const ReplicaPlace place{pool.role, i, index++, rank};
        s.replicas.push_back(std::make_unique<Replica>(sim_, signals_, *this, place, layout, s.memory, in_, *s.costs));
        if (store_) s.replicas.back()->share_store(&*store_);
        rank += layout.tp * layout.pp;
    }
    s.loads.resize(s.replicas.size());
}

// The prefill pool's replicas send their KV caches to the decode pool's over the network.
void ServingSystem::connect_kv_transfers() {
    const PoolState& prefill = pools_.front();
    std::vector<int> prefill_ranks, decode_ranks;
    for (const auto& r : prefill.replicas) prefill_ranks.push_back(r->first_rank());
    for (const auto& r : decode_->replicas) decode_ranks.push_back(r->first_rank());
    kv_transfers_ = std::make_unique<KvTransfers>(sim_, in_.network, std::move(prefill_ranks), std::move(decode_ranks),
                                                  std::min(prefill.pool.layout->tp, decode_->pool.layout->tp));
}

std::vector<int64_t> ServingSystem::kv_capacities() const {
    std::vector<int64_t> c;
    for (const PoolState& pool : pools_)
        for (const auto& r : pool.replicas) c.push_back(r->kv().capacity());
    return c;
}

int64_t ServingSystem::cost_cache_entries() const {
    int64_t n = 0;
    for (const PoolState& pool : pools_) n += static_cast<int64_t>(pool.costs->iteration.cache_size());
    return n;
}

int64_t ServingSystem::lora_loads() const {
    int64_t n = 0;
    for (const PoolState& pool : pools_)
        for (const auto& r : pool.replicas) n += r->lora_loads();
    for (const auto& r : retired_) n += r->lora_loads();
    return n;
}

OpSources ServingSystem::op_sources() const {
    OpSources s;
    for (const PoolState& pool : pools_) s.merge(pool.costs->iteration.op_sources());
    return s;
}

Sequence* ServingSystem::new_sequence(const Request& req) {
    Sequence* s;
    if (!free_.empty()) {
        s = free_.back();
        free_.pop_back();
        *s = Sequence{};
    } else {
        sequences_.emplace_back();
        s = &sequences_.back();
    }
    s->req = req;
    s->arrival = sim_.now();
    s->prefill_target = req.prompt_tokens;
    return s;
}

Replica& ServingSystem::route(PoolState& pool, const Request& req) {
    for (size_t i = 0; i < pool.replicas.size(); ++i) {
        pool.loads[i] = pool.replicas[i]->load();
        if (autoscaler_) pool.loads[i].available = autoscaler_->available(static_cast<int>(i));
    }
    const int r = pool.router->route(req, pool.loads);
    FATHOM_CHECK(r >= 0, "a router found no replica that takes requests");
    return *pool.replicas[static_cast<size_t>(r)];
}

namespace {

// A request the plan cannot serve, located: a trace's request by its file, line and column, a
// generated one by the scenario key that bounds it (the CLI adds the scenario's file).
template <class Error>
[[noreturn]] void refuse(const Request& req, const std::string& trace, const std::string& message,
                         const char* generated_key, const char* column = "prompt_tokens") {
    const std::string what = "request " + std::to_string(req.id) + " " + message;
    if (req.line > 0) throw Error(what, trace, req.line, column);
    throw Error(what, "", 0, generated_key);
}

}  // namespace

// Token counts are below 2^53 (the trace reader's and the generators' bound), so the sums are exact.
void ServingSystem::check_capacity(const Replica& r, const Request& req, const char* which) const {
    const int64_t whole = KvCache::blocks_for(req.prompt_tokens + req.output_tokens, in_.plan.kv.block_size);
    if (whole > r.kv().capacity())
        refuse<sim::KvCapacityError>(req, in_.plan.traffic.trace,
                                     "needs " + std::to_string(whole) + " KV blocks, more than " + which +
                                         " whole KV cache (" + std::to_string(r.kv().capacity()) + " blocks)",
                                     "traffic.prompt");
}

void ServingSystem::admit(const Request& given) {
    // Multi-LoRA: the adapter a trace names, or a draw from the popularity (lora.h).
    Request req = given;
    if (popularity_ && req.adapter < 0) req.adapter = popularity_->draw(in_.seed, req.id);
    if (req.adapter < 0) req.adapter = 0;
    if (req.adapter > in_.plan.lora.adapters)
        refuse<sim::InputError>(req, in_.plan.traffic.trace,
                                "runs with LoRA adapter " + std::to_string(req.adapter) +
                                    " but serving.lora.adapters is " + std::to_string(in_.plan.lora.adapters),
                                "serving.lora.adapters", "adapter");
    if (req.prompt_tokens + req.output_tokens > max_len_ && max_len_ > 0)
        refuse<sim::InputError>(req, in_.plan.traffic.trace,
                                "has " + std::to_string(req.prompt_tokens) + " prompt + " +
                                    std::to_string(req.output_tokens) + " output tokens, more than max_model_len " +
                                    std::to_string(max_len_) + " (serving.max_model_len, or the model's context)",
                                "serving.max_model_len");
    Sequence* s = new_sequence(req);
    PoolState& entry = pools_.front();
    if (entry.pool.role == PoolRole::Decode) return arrive_with_kv(s);
    // The prefill pool alone: the first token ends the request here (an unlimited decode pool).
    if (entry.pool.role == PoolRole::Prefill && !decode_) s->req.output_tokens = 1;
    if (entry.pool.role == PoolRole::Aggregated) check_capacity(*entry.replicas.front(), req, "a replica's");
    if (autoscaler_ && !autoscaler_->any_available()) {
        // No replica serves (scaled to zero, or all starting): the request waits at the front door.
        signals_.arrived.emit(*s);
        front_door_.push_back(s);
        autoscaler_->wake_from_zero();
        return;
    }
    Replica& r = route(entry, req);
    // A request stays on an aggregated replica to its end; a prefill replica sends its KV away.
    signals_.arrived.emit(*s);
    r.routed();
    r.enqueue(s);
}

void ServingSystem::arrive_with_kv(Sequence* s) {
    // Its prompt's KV is in place (an unlimited prefill pool): the decode pool generates all of its
    // output tokens, the first one with its first decode step.
    Replica& to = route(pools_.front(), s->req);
    check_capacity(to, s->req, "a decode replica's");
    signals_.arrived.emit(*s);
    to.routed();
    s->computed = s->prefill_target = s->req.prompt_tokens;
    s->decode_replica = to.id();
    to.receive(s);
}

void ServingSystem::prefilled(Replica& from, Sequence* s) {
    // The KV cache moves from the prefill replica's TP ranks to the decode replica's (kv_transfer.h).
    FATHOM_CHECK(decode_ && kv_transfers_, "a prefilled request without a decode pool");
    Replica& to = route(*decode_, s->req);
    to.routed();
    const double bytes = static_cast<double>(s->computed) * pools_.front().memory.kv_bytes_per_token;
    s->kv_sent = sim_.now();
    auto arrived = [this, &from, &to, s] {
        from.release_sent(s);
        s->kv_received = sim_.now();
        signals_.kv_received.emit(*s);
        s->replica = from.id();
        s->decode_replica = to.id();
        s->phase = Phase::Waiting;
        s->prefill_target = s->computed;
        to.receive(s);
    };
    kv_transfers_->start(from.id(), to.id(), bytes, std::move(arrived));
}

void ServingSystem::finished(Sequence* s) {
    signals_.finished.emit(*s, sim_.now());
    if (autoscaler_) {
        last_finish_ = sim_.now();
        const double first = s->first_token.seconds();
        autoscaler_->finished(s->replica, first - s->arrival.seconds(),
                              tpot_seconds(s->req.output_tokens, first, sim_.now().seconds()));
    }
    if (s->phase == Phase::Done) free_.push_back(s);
}

// A cold start ended: a replica that served before is a fresh engine (empty caches), and the
// requests at the front door go through the router.
void ServingSystem::ready(int replica) {
    PoolState& pool = pools_.front();
    const auto i = static_cast<size_t>(replica);
    if (warm_[i]) {
        Replica& old = *pool.replicas[i];
        const ReplicaPlace place{pool.pool.role, old.id(), old.index(), old.first_rank()};
        retired_.push_back(std::move(pool.replicas[i]));
        pool.replicas[i] =
            std::make_unique<Replica>(sim_, signals_, *this, place, *pool.pool.layout, pool.memory, in_, *pool.costs);
        if (store_) pool.replicas[i]->share_store(&*store_);  // the store outlives a replica's restart
    }
    warm_[i] = true;
    while (!front_door_.empty()) {
        Sequence* s = front_door_.front();
        front_door_.pop_front();
        Replica& r = route(pool, s->req);
        r.routed();
        r.enqueue(s);
    }
}

sim::Time ServingSystem::end_time() const { return autoscaler_ ? last_finish_ : sim_.now(); }

std::optional<AutoscaleReport> ServingSystem::autoscale_report() const {
    if (!autoscaler_) return std::nullopt;
    return autoscaler_->report(end_time());
}

void ServingSystem::run() {
    if (kv_transfers_) kv_transfers_->run();
    else sim_.run();
}

}  // namespace fathom::workloads::serving
