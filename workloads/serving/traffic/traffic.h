#pragma once
// Serving traffic: seeded generators and streaming trace readers, both behind RequestSource, which
// yields requests one at a time in arrival order (a million-request trace never sits in memory).
//
// Generators (SyntheticTraffic): arrivals from an ArrivalProcess (Poisson, Gamma with a given
// coefficient of variation, bursty on/off, constant rate, or all at time 0), prompt and output
// lengths from LengthDistributions (fixed, uniform, normal, lognormal, Zipf, empirical histogram),
// optional shared-prefix groups and multi-turn sessions. Draws come from named streams of
// sim::RandomStreams ("serving.arrival", "serving.prompt", "serving.output", "serving.prefix",
// "serving.session"), so the same seed gives bit-identical traffic on every platform.
//
// Closed-loop traffic (a fixed concurrency of clients) uses a generator with ArrivalKind::Offline:
// the simulator ignores arrival_s and sets it when a client's previous request completes.
//
// Prompt composition of a generated request (Request's order: prefix, session history, the rest):
//   prompt_tokens = prefix_tokens + session_tokens + a fresh draw from `prompt`
// so `prompt` describes the part unique to the request (a single-turn request without a shared
// prefix: the whole prompt). `output` is the number of tokens generated. Both draws are >= 1.
#include "sim/enum_names.h"
#include "sim/random.h"
#include "workloads/lengths/length_distribution.h"
#include "workloads/serving/request.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fathom::workloads::serving {

class RequestSource {
public:
    virtual ~RequestSource() = default;
    // The next request in arrival order (ids 0, 1, 2, ...), or nullopt at the end.
    virtual std::optional<Request> next() = 0;
    // The next request of closed-loop client `client` (0 .. clients - 1), sent after its previous
    // reply: a generator with sessions gives the client's own conversation its next turn; other
    // sources give next().
    virtual std::optional<Request> next_for(int64_t /*client*/) { return next(); }
    // Names of the SLO classes (index = Request::slo_class); {"default"} when the source has none.
    virtual const std::vector<std::string>& slo_classes() const = 0;
};

enum class ArrivalKind { Offline, Poisson, Gamma, Bursty, Constant, Diurnal };
constexpr auto enum_names(ArrivalKind) {
    return sim::name_table<ArrivalKind>({{ArrivalKind::Offline, "offline"},
                                         {ArrivalKind::Poisson, "poisson"},
                                         {ArrivalKind::Gamma, "gamma"},
                                         {ArrivalKind::Bursty, "bursty"},
                                         {ArrivalKind::Constant, "constant"},
                                         {ArrivalKind::Diurnal, "diurnal"}});
}

// Arrival times of consecutive requests. Offline: all at 0. Poisson: exponential gaps of mean
// 1/rate. Gamma: gaps Gamma(shape 1/cv^2, scale cv^2/rate), mean 1/rate and coefficient of
// variation cv. Constant: request i at exactly i/rate. Bursty: starts in an on period at t = 0;
// on and off periods alternate with exponential lengths of means on_s and off_s, and arrivals are
// Poisson at `rate` during on periods only (long-run rate: rate x on_s / (on_s + off_s)).
// Diurnal: Poisson with a rate that follows the day, rate x (1 + a cos(2 pi (t - peak_s) / period_s))
// with a = (peak_to_trough - 1) / (peak_to_trough + 1): mean `rate` over a period, highest at
// peak_s (and every period after), peak_to_trough times higher than half a period later. Drawn by
// thinning (Lewis and Shedler): candidates at the peak rate, each kept with probability rate(t) /
// peak rate.
struct ArrivalProcess {
    ArrivalKind kind = ArrivalKind::Poisson;
    double rate = 0;            // requests/s (Poisson, Gamma, Constant; Bursty: the rate while on)
    double cv = 1;              // Gamma: coefficient of variation of the inter-arrival gaps (1 = Poisson)
    double on_s = 0;            // Bursty: mean length of an on period (exponential) ...
    double off_s = 0;           // ... and of an off period (exponential), Poisson arrivals while on
    double period_s = 86400;    // Diurnal: the length of a day
    double peak_s = -1;         // Diurnal: when the rate peaks (-1: half a period in)
    double peak_to_trough = 0;  // Diurnal: the highest rate over the lowest (>= 1)
    double amplitude() const { return (peak_to_trough - 1) / (peak_to_trough + 1); }
    double peak_time() const { return peak_s >= 0 ? peak_s : period_s / 2; }
    std::string check() const;
};

// Each request (with sessions: each conversation, for all its turns) picks a group uniformly from
// 1..groups; prefix_group is that group (never 0), prefix_tokens = this prefix_tokens.
struct SharedPrefix {
    int64_t groups = 0;         // 0: no shared prefixes
    int64_t prefix_tokens = 0;  // tokens of each group's prefix (part of the prompt; >= 1 with groups)
};

// Multi-turn conversations. Open loop: `concurrent` conversations are open at a time; request i
// goes to open conversation i % concurrent. Closed loop (next_for): each client holds one
// conversation and sends its next turn after the reply to the previous one, as vLLM's multi-turn
// benchmark does (benchmarks/multi_turn, --max-active-conversations = --num-clients). A
// conversation's first turn has session_tokens 0 and its own tokens drawn from `first_prompt`
// (the `prompt` draw when first_prompt.value is 0 and kind Fixed); turn t > 1 has session_tokens =
// the previous turn's (prompt_tokens - prefix_tokens) + output_tokens (the whole history after the
// prefix) and a newly drawn user message (`prompt`) on top. A conversation has `turns` turns, or a
// number uniform on [turns, turns_max] drawn when it opens (stream "serving.session"). After its
// last turn a new conversation, with a new session key (1, 2, 3, ... never 0), takes its slot;
// with `conversations` > 0 no more than that many open, and the traffic ends when one more would
// (vLLM's multi-turn benchmark stops when its first client finds no conversation left).
// Session keys are assigned in order.
struct Sessions {
    int64_t turns = 0;                // 0 or 1: no sessions; else requests come in conversations of `turns` turns
    int64_t concurrent = 1;           // open loop: conversations open at a time; consecutive requests rotate over them
    int64_t turns_max = 0;            // > turns: turns uniform on [turns, turns_max] per conversation
    LengthDistribution first_prompt;  // the first turn's own tokens (value 0, kind Fixed: `prompt`)
    int64_t conversations = 0;        // > 0: conversations in all
    // With conversations: all first turns drawn up front and scaled so that their mean is
    // first_prompt's mean, then clamped to its [min, max] (vLLM's multi-turn generator,
    // benchmarks/multi_turn/bench_dataset.py: samples *= average / samples.mean()).
    bool first_prompt_scaled = false;
    bool first_prompt_set() const { return first_prompt.kind != LengthKind::Fixed || first_prompt.value > 0; }
};

struct SyntheticTraffic {
    ArrivalProcess arrival;
    LengthDistribution prompt, output;
    int64_t num_requests = 0;
    SharedPrefix shared_prefix;
    Sessions sessions;
    // Empty when everything (arrival, prompt, output, shared_prefix, sessions, num_requests) makes
    // sense, else why not (names the field, e.g. "prompt: min must be >= 1").
    std::string check() const;
};

// Generates the requests lazily, one per next(); slo_classes() is {"default"}. The traffic should
// pass check(); the source does not validate it again.
std::unique_ptr<RequestSource> make_synthetic_source(const SyntheticTraffic& traffic, uint64_t seed);

// A CSV (header row required) or JSONL trace, chosen by the file's extension (.csv, .jsonl).
// Columns / fields: arrival_s (or arrival_ms), prompt_tokens, output_tokens, and optional
// prefix_group, prefix_tokens, session, session_tokens, slo_class (a name), adapter (multi-LoRA:
// the adapter id, 0 the base model; serving.lora). Read lazily; any bad
// row (non-numeric, negative or decreasing times, missing field, prefix longer than the prompt)
// throws sim::InputError naming the file, the row (line) and the field.
//
// Details: the CSV header names columns in any order (unknown or repeated names, both or neither
// of arrival_s / arrival_ms, or a missing prompt_tokens / output_tokens are errors on line 1);
// cells may be double-quoted; an empty optional cell means "none". JSONL has one object per line,
// unknown fields are errors, null means absent, and slo_class must be a string. Blank lines are
// skipped. Integers are parsed strictly ("16abc", "1.5" and overflow are errors; JSON numbers
// such as 100.0 with an integral value are accepted): token counts must fit int64, prefix_group
// and session uint64 (0 = none), and prefix_tokens / session_tokens need their key to be non-zero.
// Times must be finite, >= 0 and non-decreasing. Request ids count rows from 0.
// slo_classes() starts as {"default"} (index 0, also for rows without slo_class) and grows with
// each new name in order of first appearance, so read it after the last next(). A file with no
// requests is an error. Token counts are at most kMaxRequestTokens (2^53); a row past
// `max_requests` requests is an error (a simulation's memory follows its requests). Each request
// carries its line (Request::line), which refusals of it name.
std::unique_ptr<RequestSource> open_trace(const std::string& path,
                                          int64_t max_requests = std::numeric_limits<int64_t>::max());

}  // namespace fathom::workloads::serving
