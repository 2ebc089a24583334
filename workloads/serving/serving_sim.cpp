#include "workloads/serving/serving_sim.h"

#include "sim/error.h"
#include "sim/simulator.h"
#include "workloads/serving/batching/policy.h"
#include "workloads/serving/iteration_cost.h"
#include "workloads/serving/kv_transfer.h"
#include "workloads/serving/replica_state.h"
#include "workloads/serving/request_metrics.h"
#include "workloads/serving/router.h"
#include "workloads/serving/serving_memory.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <ostream>

namespace fathom::workloads::serving {
namespace {

enum class Role { Aggregated, Prefill, Decode };

class Cluster;

// Shared-prefix attention (Hydragen): the batch's decodes grouped by the shared-prefix group blocks
// they reference in the prefix cache, identified by the last such block (equal identities mean
// equal prefixes). A group of two or more decodes reads its prefix once; each member's own
// attention keeps the keys after the prefix. A prefix shorter than one full block, or a request
// whose prefix blocks are private copies (admitted before the prefix was cached), is not shared.
void group_shared_prefixes(const Batch& b, int64_t block_size, IterationShape& shape) {
    std::vector<std::pair<uint64_t, int64_t>> members;  // (identity of the last shared block, blocks)
    auto add = [&](const Sequence* s) {
        const int64_t blocks = std::min(s->cached_blocks, s->req.prefix_tokens / block_size);
        if (blocks > 0) members.emplace_back(s->block_ids[static_cast<size_t>(blocks - 1)], blocks);
    };
    for (const Sequence* s : b.decode) add(s);
    for (const Sequence* s : b.padding) add(s);
    std::sort(members.begin(), members.end());
    for (size_t i = 0; i < members.size();) {
        size_t j = i;
        while (j < members.size() && members[j].first == members[i].first) ++j;
        const int64_t n = static_cast<int64_t>(j - i);
        if (n >= 2) {
            const int64_t keys = members[i].second * block_size;
            ++shape.shared_groups;
            shape.shared_queries += n;
            shape.shared_keys += keys;
            shape.shared_work += n * keys;
            shape.decode_kv -= n * keys;
        }
        i = j;
    }
}

// One engine instance: its scheduling state, policy, iteration costs and pipeline.
class Replica {
public:
    Replica(Cluster& cluster, int id, Role role, const PoolLayout& pool, const ReplicaMemory& mem,
            const ServingInputs& in, const models::CostModel& cost);

    void enqueue(Sequence* s);
    void receive(Sequence* s);       // decode pool: a sequence whose KV arrived
    void release_sent(Sequence* s);  // prefill pool: its KV has been sent
    void try_launch();
    void wake();  // try_launch at the end of the current instant
    ReplicaLoad load() const;
    int id() const { return id_; }
    int first_rank = 0;
    int64_t outstanding = 0;
    ReplicaState state;
    IterationCoster coster;

    // Statistics.
    int64_t iterations = 0;
    double batch_sequences = 0, batch_tokens = 0;
    double kv_area = 0, kv_last_t = 0, kv_last_used = 0, kv_max = 0;

private:
    void complete(size_t slot);
    void emit(Sequence* s);
    void note_kv(double now);

    Cluster& cluster_;
    int id_;
    Role role_;
    PoolLayout pool_;
    std::unique_ptr<BatchingPolicy> policy_;
    std::deque<Sequence*> received_;
    std::vector<double> stage_free_;
    std::vector<Batch> slots_;
    std::vector<size_t> free_slots_;
    bool wake_pending_ = false;
    double pcie_bandwidth_;
};

class Cluster {
public:
    Cluster(const ServingInputs& in, RequestSource& source, const ServingOptions& options);
    ServingReport run();

    sim::Simulator sim;
    double now() const { return sim.now().seconds(); }
    // Whether `t` (seconds) lies after the current picosecond (the clock's resolution).
    bool later(double t) const { return sim::Time::from_seconds(std::max(0.0, t)) > sim.now(); }
    void at(double t, sim::Simulator::Handler h) {
        sim.schedule_at(sim::Time::from_seconds(std::max(t, now())), std::move(h));
    }
    void at_end_of_instant(sim::Simulator::Handler h) { sim.schedule_at(sim.now(), std::move(h)); }
    void token(Sequence* s, double gap) {
        if (s->req.id >= warmup_) metrics_.token_gap(gap);
    }
    void prefilled(Replica& from, Sequence* s);  // disaggregated: first token out of the prefill pool
    void finished(Sequence* s);
    void trace_iteration(const Replica& r, double start, double end, const Batch& b) const;
    void trace_kv(const Replica& r, double t, int64_t used) const;
    const ServingInputs& in;

private:
    void arrive(const Request& r);
    Replica& route_decode(const Request& req);  // the decode replica the router picks
    void next_arrival();
    void client_next(double t);

    RequestSource& source_;
    std::optional<Request> lookahead_;  // the first request after the group being delivered
    const ServingOptions& options_;
    const ServingPlan& plan_;
    ReplicaMemory memory_, decode_memory_;
    std::vector<std::unique_ptr<Replica>> entry_, decode_;
    std::unique_ptr<Router> router_, decode_router_;
    std::deque<Sequence> sequences_;  // stable addresses; recycled through free_
    std::vector<Sequence*> free_;
    std::vector<ReplicaLoad> loads_;
    int64_t warmup_ = 0;
    int64_t expected_ = 0;
    int64_t issued_ = 0, done_ = 0;
    bool closed_ = false;
    bool source_done_ = false;
    int64_t max_len_ = 0;
    std::unique_ptr<KvTransfers> kv_transfers_;                 // disaggregated, both pools: prefill to decode
    RequestMetrics metrics_;                                    // of the measured requests (ids from warmup_ on)
    double start_ = -1, in_system_area_ = 0, in_system_t_ = 0;  // Little's law: requests in the system over time
    int64_t in_system_ = 0;
    void count_in_system(int delta) {
        const double t = now();
        if (start_ < 0) start_ = t;
        in_system_area_ += static_cast<double>(in_system_) * (t - in_system_t_);
        in_system_t_ = t;
        in_system_ += delta;
    }
};

// ---- Replica -------------------------------------------------------------------------------------

Replica::Replica(Cluster& cluster, int id, Role role, const PoolLayout& pool, const ReplicaMemory& mem,
                 const ServingInputs& in, const models::CostModel& cost)
    : state(id, in.plan.batching, in.plan.kv, mem.kv_blocks, mem.block_bytes),
      coster(in.model, pool, in.plan.kernels, in.plan.engine, cost, in.network, in.plan.expert_load),
      cluster_(cluster),
      id_(id),
      role_(role),
      pool_(pool),
      policy_(policy_registry().get(in.plan.batching.policy).factory(in.plan.batching)),
      stage_free_(static_cast<size_t>(pool.pp), 0.0),
      slots_(static_cast<size_t>(pool.pp)),
      pcie_bandwidth_(in.cluster.pcie.achievable_bandwidth()) {
    for (size_t i = slots_.size(); i-- > 0;) free_slots_.push_back(i);
}

ReplicaLoad Replica::load() const {
    ReplicaLoad l;
    l.outstanding = outstanding;
    l.kv_used = state.kv().capacity()
                    ? static_cast<double>(state.kv().referenced()) / static_cast<double>(state.kv().capacity())
                    : 0;
    return l;
}

void Replica::enqueue(Sequence* s) {
    s->replica = id_;
    s->phase = Phase::Waiting;
    state.waiting.push_back(s);
    wake();
}

void Replica::receive(Sequence* s) {
    received_.push_back(s);
    wake();
}

void Replica::wake() {
    // Launch at the end of this instant, once every request arriving at it is queued (a batch
    // formed at the first of several simultaneous arrivals would hold that one alone).
    if (wake_pending_) return;
    wake_pending_ = true;
    cluster_.at_end_of_instant([this] {
        wake_pending_ = false;
        try_launch();
    });
}

void Replica::release_sent(Sequence* s) {
    state.release(*s);
    s->phase = Phase::Done;
    note_kv(cluster_.now());
    try_launch();
}

void Replica::note_kv(double now) {
    kv_area += kv_last_used * (now - kv_last_t);
    kv_last_t = now;
    kv_last_used = static_cast<double>(state.kv().referenced());
    kv_max = std::max(kv_max, kv_last_used);
}

void Replica::try_launch() {
    if (free_slots_.empty()) return;
    const double now = cluster_.now();
    if (cluster_.later(stage_free_[0])) {
        if (!wake_pending_) {
            wake_pending_ = true;
            cluster_.at(stage_free_[0], [this] {
                wake_pending_ = false;
                try_launch();
            });
        }
        return;
    }
    state.now = now;
    // Decode pool: sequences whose KV arrived join the running batch while blocks and slots allow.
    while (!received_.empty() && state.running_count() < state.batching().max_num_seqs) {
        Sequence* s = received_.front();
        const int64_t need = KvCache::blocks_for(s->computed + 1, state.kv().block_size());
        if (!state.kv().allocate(need)) break;
        s->kv_blocks = need;
        s->phase = Phase::Running;
        state.running.push_back(s);
        received_.pop_front();
    }
    const size_t slot = free_slots_.back();
    Batch& b = slots_[slot];
    b.clear();
    policy_->form(state, b);
    if (b.empty()) {
        state.compact_running();  // a policy may have released sequences (static batching)
        note_kv(now);
        return;
    }
    free_slots_.pop_back();
    IterationShape shape;
    for (const auto& [s, c] : b.prefill) {
        shape.prefills.push_back({c, s->computed});
        if (s->computed + c >= s->prefill_target) ++shape.samples;
        s->in_flight = true;
        if (s->scheduled < 0) s->scheduled = now;
    }
    for (Sequence* s : b.decode) {
        shape.decode_kv += s->computed + 1;
        s->in_flight = true;
    }
    for (Sequence* s : b.padding) {
        shape.decode_kv += s->computed + 1;
        s->in_flight = true;
    }
    shape.decodes = static_cast<int64_t>(b.decode.size() + b.padding.size());
    if (state.kv_settings().shared_prefix_attention) group_shared_prefixes(b, state.kv().block_size(), shape);
    shape.samples += shape.decodes;
    shape.sequences = static_cast<int64_t>(b.prefill.size()) + shape.decodes;
    const IterationCost& cost = coster.seconds(shape);
    // Pipeline: stage s starts when the batch left stage s-1 and stage s is free. Swapping blocks
    // over PCIe delays the first stage (vLLM swaps before the forward pass).
    double t = now + (b.swap_bytes > 0 ? b.swap_bytes / pcie_bandwidth_ : 0.0);
    for (size_t s = 0; s < stage_free_.size(); ++s) {
        if (s > 0) t += cost.p2p_s;
        t = std::max(t, stage_free_[s]) + cost.stage_s[s];
        stage_free_[s] = t;
    }
    ++iterations;
    batch_sequences += static_cast<double>(shape.sequences);
    batch_tokens += static_cast<double>(shape.tokens());
    note_kv(now);
    cluster_.trace_iteration(*this, now, t, b);
    cluster_.at(t, [this, slot] { complete(slot); });
    if (!free_slots_.empty()) try_launch();  // pipeline: the next batch enters stage 0 when it frees
}

void Replica::emit(Sequence* s) {
    const double now = cluster_.now();
    ++s->generated;
    if (s->first_token < 0) {
        s->first_token = now;
    } else {
        const double gap = now - s->last_token;
        s->max_gap = std::max(s->max_gap, gap);
        cluster_.token(s, gap);
    }
    s->last_token = now;
}

void Replica::complete(size_t slot) {
    Batch& b = slots_[slot];
    const double now = cluster_.now();
    for (const auto& [s, c] : b.prefill) {
        s->in_flight = false;
        s->computed += c;
        state.publish(*s);
        if (!s->prefilling()) emit(s);
    }
    for (Sequence* s : b.decode) {
        s->in_flight = false;
        ++s->computed;
        emit(s);
    }
    for (Sequence* s : b.padding) s->in_flight = false;
    auto settle = [&](Sequence* s) {
        if (s->phase != Phase::Running || s->prefilling() || s->generated == 0) return;
        if (s->done()) {
            --outstanding;
            if (!policy_->keeps_finished()) {
                state.release(*s);
                s->phase = Phase::Done;
            }
            policy_->finished(*s);
            cluster_.finished(s);
        } else if (role_ == Role::Prefill) {
            s->phase = Phase::Transferring;  // keeps its blocks until the KV is sent
            --outstanding;
            cluster_.prefilled(*this, s);
        }
    };
    for (const auto& [s, c] : b.prefill) settle(s);
    for (Sequence* s : b.decode)
        if (s->generated == s->req.output_tokens) settle(s);
    b.clear();
    free_slots_.push_back(slot);
    state.compact_running();
    note_kv(now);
    cluster_.trace_kv(*this, now, state.kv().referenced());
    try_launch();
}

// ---- Cluster -------------------------------------------------------------------------------------

std::unique_ptr<Router> make_router(const std::string& name) { return router_registry().get(name).factory(); }

Cluster::Cluster(const ServingInputs& inputs, RequestSource& source, const ServingOptions& options)
    : in(inputs),
      source_(source),
      options_(options),
      plan_(inputs.plan),
      metrics_(inputs.plan.slo, source.slo_classes(), options.keep_records) {
    const ServingPlan& p = plan_;
    warmup_ = p.traffic.warmup_requests;
    closed_ = p.traffic.mode == ArrivalMode::Closed;
    expected_ = p.traffic.trace.empty() ? p.traffic.synthetic.num_requests : 0;
    max_len_ = p.batching.max_model_len > 0 ? p.batching.max_model_len : in.model.max_seq_len;
    router_ = make_router(p.router);
    int rank = 0;
    auto build = [&](const PoolLayout& pool, Role role, const models::CostModel& cost, ReplicaMemory& mem,
                     std::vector<std::unique_ptr<Replica>>& out) {
        mem = replica_memory(in.model, pool, p.kernels, p.kv, p.batching, p.engine);
        if (!mem.fits()) throw sim::InputError(mem.why_not());
        for (int i = 0; i < pool.replicas; ++i) {
            out.push_back(std::make_unique<Replica>(*this, static_cast<int>(out.size()), role, pool, mem, in, cost));
            out.back()->first_rank = rank;
            rank += pool.tp * pool.pp;
        }
    };
    if (p.disaggregated() && p.isolate == PoolIsolation::Prefill) {
        // The prefill pool alone: a request ends with its first token (Cluster::arrive).
        build(*p.prefill, Role::Aggregated, in.cost, memory_, entry_);
    } else if (p.disaggregated() && p.isolate == PoolIsolation::Decode) {
        // The decode pool alone: requests arrive with their prompt's KV (Cluster::arrive).
        build(*p.decode, Role::Decode, in.decode_cost ? *in.decode_cost : in.cost, decode_memory_, decode_);
        decode_router_ = make_router(p.router);
    } else if (p.disaggregated()) {
        build(*p.prefill, Role::Prefill, in.cost, memory_, entry_);
        build(*p.decode, Role::Decode, in.decode_cost ? *in.decode_cost : in.cost, decode_memory_, decode_);
        decode_router_ = make_router(p.router);
        std::vector<int> prefill_ranks, decode_ranks;
        for (const auto& r : entry_) prefill_ranks.push_back(r->first_rank);
        for (const auto& r : decode_) decode_ranks.push_back(r->first_rank);
        kv_transfers_ = std::make_unique<KvTransfers>(sim, in.network, std::move(prefill_ranks),
                                                      std::move(decode_ranks), std::min(p.prefill->tp, p.decode->tp));
    } else {
        build(p.replica, Role::Aggregated, in.cost, memory_, entry_);
    }
    loads_.resize(std::max(entry_.size(), decode_.size()));
}

void Cluster::trace_iteration(const Replica& r, double start, double end, const Batch& b) const {
    if (!options_.trace) return;
    int64_t prefill = 0;
    for (const auto& [s, c] : b.prefill) prefill += c;
    const int pid = r.first_rank;
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  ",\n{\"name\":\"iteration\",\"ph\":\"X\",\"pid\":%d,\"tid\":0,\"ts\":%.3f,\"dur\":%.3f,"
                  "\"args\":{\"prefill_tokens\":%lld,\"prefills\":%zu,\"decodes\":%zu}}",
                  pid, start * 1e6, (end - start) * 1e6, static_cast<long long>(prefill), b.prefill.size(),
                  b.decode.size());
    *options_.trace << buf;
}

void Cluster::trace_kv(const Replica& r, double t, int64_t used) const {
    if (!options_.trace) return;
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  ",\n{\"name\":\"kv_blocks\",\"ph\":\"C\",\"pid\":%d,\"ts\":%.3f,\"args\":{\"used\":%lld}}",
                  r.first_rank, t * 1e6, static_cast<long long>(used));
    *options_.trace << buf;
}

void Cluster::arrive(const Request& req) {
    if (req.prompt_tokens + req.output_tokens > max_len_ && max_len_ > 0)
        throw sim::InputError("request " + std::to_string(req.id) + " has " + std::to_string(req.prompt_tokens) +
                              " prompt + " + std::to_string(req.output_tokens) +
                              " output tokens, more than max_model_len " + std::to_string(max_len_) +
                              " (serving.max_model_len, or the model's context)");
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
    s->arrival = now();
    s->prefill_target = req.prompt_tokens;
    if (req.id >= warmup_) metrics_.arrived(now());
    if (plan_.isolate == PoolIsolation::Prefill) s->req.output_tokens = 1;  // the first token ends it here
    if (plan_.isolate == PoolIsolation::Decode) {
        // Its prompt's KV is in place (an unlimited prefill pool): the decode pool generates all of
        // its output tokens, the first one with its first decode step.
        Replica& to = route_decode(req);
        const int64_t whole = KvCache::blocks_for(req.prompt_tokens + req.output_tokens, plan_.kv.block_size);
        if (whole > to.state.kv().capacity())
            throw sim::KvCapacityError("request " + std::to_string(req.id) + " needs " + std::to_string(whole) +
                                       " KV blocks, more than a decode replica's whole KV cache (" +
                                       std::to_string(to.state.kv().capacity()) + " blocks)");
        ++issued_;
        count_in_system(+1);
        ++to.outstanding;
        s->computed = s->prefill_target = req.prompt_tokens;
        s->decode_replica = to.id();
        to.receive(s);
        return;
    }
    const int64_t whole = KvCache::blocks_for(req.prompt_tokens + req.output_tokens, plan_.kv.block_size);
    for (size_t i = 0; i < entry_.size(); ++i) loads_[i] = entry_[i]->load();
    std::vector<ReplicaLoad> loads(loads_.begin(), loads_.begin() + static_cast<std::ptrdiff_t>(entry_.size()));
    Replica& r = *entry_[static_cast<size_t>(router_->route(req, loads))];
    if (whole > r.state.kv().capacity() && !plan_.disaggregated())
        throw sim::KvCapacityError("request " + std::to_string(req.id) + " needs " + std::to_string(whole) +
                                   " KV blocks, more than a replica's whole KV cache (" +
                                   std::to_string(r.state.kv().capacity()) + " blocks)");
    ++issued_;
    count_in_system(+1);
    ++r.outstanding;
    r.enqueue(s);
}

void Cluster::next_arrival() {
    if (source_done_ || closed_) return;
    std::optional<Request> r = lookahead_ ? std::move(lookahead_) : source_.next();
    lookahead_.reset();
    if (!r) {
        source_done_ = true;
        return;
    }
    // Requests arriving at the same instant arrive together (offline traffic: all at 0).
    std::vector<Request> group{*r};
    while ((lookahead_ = source_.next()) && lookahead_->arrival_s == r->arrival_s) group.push_back(*lookahead_);
    at(r->arrival_s, [this, group = std::move(group)] {
        for (const Request& req : group) arrive(req);
        next_arrival();
    });
}

void Cluster::client_next(double t) {
    if (source_done_) return;
    std::optional<Request> r = source_.next();
    if (!r) {
        source_done_ = true;
        return;
    }
    Request req = *r;
    at(t, [this, req]() mutable {
        req.arrival_s = now();
        arrive(req);
    });
}

Replica& Cluster::route_decode(const Request& req) {
    for (size_t i = 0; i < decode_.size(); ++i) loads_[i] = decode_[i]->load();
    std::vector<ReplicaLoad> loads(loads_.begin(), loads_.begin() + static_cast<std::ptrdiff_t>(decode_.size()));
    return *decode_[static_cast<size_t>(decode_router_->route(req, loads))];
}

void Cluster::prefilled(Replica& from, Sequence* s) {
    // The KV cache moves from the prefill replica's TP ranks to the decode replica's (kv_transfer.h).
    Replica& to = route_decode(s->req);
    ++to.outstanding;
    const double bytes = static_cast<double>(s->computed) * memory_.kv_bytes_per_token;
    const double start = now();
    auto arrived = [this, &from, &to, s, start] {
        from.release_sent(s);
        s->kv_transfer = now() - start;
        if (s->req.id >= warmup_) metrics_.kv_transfer(s->kv_transfer);
        s->replica = from.id();
        s->decode_replica = to.id();
        s->phase = Phase::Waiting;
        s->prefill_target = s->computed;
        to.receive(s);
    };
    kv_transfers_->start(from.id(), to.id(), bytes, std::move(arrived));
}

void Cluster::finished(Sequence* s) {
    ++done_;
    count_in_system(-1);
    const double t = now();
    if (s->req.id >= warmup_) metrics_.finished(*s, t);
    if (s->phase == Phase::Done) free_.push_back(s);
    if (options_.progress && (done_ & 1023) == 0) options_.progress(done_, expected_);
    if (closed_) client_next(t + plan_.traffic.think_time_s);
}

ServingReport Cluster::run() {
    if (closed_) {
        for (int64_t c = 0; c < plan_.traffic.concurrency; ++c) client_next(0.0);
    } else {
        next_arrival();
    }
    if (kv_transfers_) kv_transfers_->run();
    else sim.run();
    ServingReport rep;
    rep.gpus = plan_.gpus();
    rep.warmup_requests = std::min<int64_t>(warmup_, issued_);
    metrics_.report(rep);
    const double end = now();
    double util = 0, util_max = 0, seqs = 0, toks = 0, its = 0;
    int n = 0;
    for (auto* pool : {&entry_, &decode_})
        for (auto& r : *pool) {
            r->kv_area += r->kv_last_used * (end - r->kv_last_t);
            const double cap = static_cast<double>(std::max<int64_t>(1, r->state.kv().capacity()));
            util += end > 0 ? r->kv_area / end / cap : 0;
            util_max = std::max(util_max, r->kv_max / cap);
            seqs += r->batch_sequences;
            toks += r->batch_tokens;
            its += static_cast<double>(r->iterations);
            rep.cost_cache_entries += static_cast<int64_t>(r->coster.cache_size());
            ++n;
        }
    rep.kv_utilization_mean = n ? util / n : 0;
    rep.kv_utilization_max = util_max;
    rep.iterations = static_cast<int64_t>(its);
    rep.batch_size_mean = its > 0 ? seqs / its : 0;
    rep.batch_tokens_mean = its > 0 ? toks / its : 0;
    rep.events = sim.events_processed();
    rep.mean_in_system = in_system_t_ > start_ ? in_system_area_ / (in_system_t_ - start_) : 0;
    rep.all_requests = done_;
    rep.all_duration_s = in_system_t_ - std::max(0.0, start_);
    const ReplicaMemory& m =
        plan_.disaggregated() && plan_.isolate != PoolIsolation::Prefill ? decode_memory_ : memory_;
    rep.kv_blocks_per_replica = m.kv_blocks;
    rep.kv_tokens_per_replica = static_cast<double>(m.kv_blocks * plan_.kv.block_size);
    rep.weight_bytes_per_gpu = m.weight_bytes;
    if (options_.progress) options_.progress(done_, expected_);
    return rep;
}

}  // namespace

ServingReport simulate_serving(const ServingInputs& in, RequestSource& source, const ServingOptions& options) {
    if (options.trace)
        *options.trace
            << "{\"traceEvents\":[\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"args\":{\"name\":\"serving\"}}";
    Cluster c(in, source, options);
    ServingReport r = c.run();
    if (options.trace) *options.trace << "\n]}\n";
    return r;
}

}  // namespace fathom::workloads::serving
