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
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/random.h"
#include "workloads/serving/request.h"

namespace fathom::workloads::serving {

class RequestSource {
public:
    virtual ~RequestSource() = default;
    // The next request in arrival order (ids 0, 1, 2, ...), or nullopt at the end.
    virtual std::optional<Request> next() = 0;
    // Names of the SLO classes (index = Request::slo_class); {"default"} when the source has none.
    virtual const std::vector<std::string>& slo_classes() const = 0;
};

enum class LengthKind { Fixed, Uniform, Normal, Lognormal, Zipf, Histogram };
const char* length_kind_name(LengthKind k);

// Token counts, always integers in [min, max] (draws outside are clamped; min >= 1).
struct LengthDistribution {
    LengthKind kind = LengthKind::Fixed;
    int64_t value = 0;           // Fixed
    int64_t min = 1, max = 0;    // Uniform: inclusive bounds; all kinds: clamp (max 0 = no upper clamp)
    double mean = 0, stddev = 0; // Normal (of the tokens), Lognormal (mean and stddev of the tokens,
                                 // not of their logarithm)
    double zipf_s = 1.1;         // Zipf: P(k) ~ k^-s on [min, max] (max required)
    std::vector<int64_t> bins;   // Histogram: bin values (tokens)...
    std::vector<double> weights; // ...and their relative weights (>= 0, sum > 0)

    int64_t sample(sim::RandomStream& r) const;
    double expected() const;     // mean of the (clamped) distribution, exact or by numeric sum
    // Empty when the parameters make sense, else why not (names the field).
    std::string check() const;
};

enum class ArrivalKind { Offline, Poisson, Gamma, Bursty, Constant };
const char* arrival_kind_name(ArrivalKind k);

struct ArrivalProcess {
    ArrivalKind kind = ArrivalKind::Poisson;
    double rate = 0;    // requests/s (Poisson, Gamma, Constant; Bursty: the rate while on)
    double cv = 1;      // Gamma: coefficient of variation of the inter-arrival gaps (1 = Poisson)
    double on_s = 0;    // Bursty: mean length of an on period (exponential) ...
    double off_s = 0;   // ... and of an off period (exponential), Poisson arrivals while on
    std::string check() const;
};

struct SharedPrefix {
    int64_t groups = 0;         // 0: no shared prefixes
    int64_t prefix_tokens = 0;  // tokens of each group's prefix (part of the prompt)
};

struct Sessions {
    int64_t turns = 0;          // 0 or 1: no sessions; else requests come in conversations of `turns` turns
    int64_t concurrent = 1;     // conversations open at a time; consecutive requests rotate over them
};

struct SyntheticTraffic {
    ArrivalProcess arrival;
    LengthDistribution prompt, output;
    int64_t num_requests = 0;
    SharedPrefix shared_prefix;
    Sessions sessions;
    std::string check() const;
};

std::unique_ptr<RequestSource> make_synthetic_source(const SyntheticTraffic& traffic, uint64_t seed);

// A CSV (header row required) or JSONL trace, chosen by the file's extension (.csv, .jsonl).
// Columns / fields: arrival_s (or arrival_ms), prompt_tokens, output_tokens, and optional
// prefix_group, prefix_tokens, session, session_tokens, slo_class (a name). Read lazily; any bad
// row (non-numeric, negative or decreasing times, missing field, prefix longer than the prompt)
// throws sim::InputError naming the file, the row (line) and the field.
std::unique_ptr<RequestSource> open_trace(const std::string& path);

}  // namespace fathom::workloads::serving
