#pragma once
// Internal to plans/: the keys of one token-length distribution
// (workloads/serving/traffic/traffic.h LengthDistribution) under a section, shared by serving's
// traffic.prompt / traffic.output and training's training.documents. Not included outside plans/.
#include "plans/key_decl.h"
#include "workloads/lengths/length_distribution.h"

// Appends to the key vector K (of Key<PLAN>) the SECTION.distribution, .value, .min, .max, .mean,
// .stddev, .s, .bins and .weights keys of the distribution FIELD (an expression of `p`).
#define FATHOM_LENGTH_KEYS(K, PLAN, SECTION, FIELD)                                                                   \
    K.push_back(                                                                                                      \
        {Decl(SECTION ".distribution", KeyType::Choice, "fixed, uniform, normal, lognormal, zipf or histogram")       \
             .choices({"fixed", "uniform", "normal", "lognormal", "zipf", "histogram"})                               \
             .by_default("fixed"),                                                                                    \
         [](PLAN& p, const KeyValue& v) {                                                                             \
             const std::string& d = to_str(v);                                                                        \
             FIELD.kind = d == "uniform"     ? workloads::LengthKind::Uniform                                         \
                          : d == "normal"    ? workloads::LengthKind::Normal                                          \
                          : d == "lognormal" ? workloads::LengthKind::Lognormal                                       \
                          : d == "zipf"      ? workloads::LengthKind::Zipf                                            \
                          : d == "histogram" ? workloads::LengthKind::Histogram                                       \
                                             : workloads::LengthKind::Fixed;                                          \
         },                                                                                                           \
         [](const PLAN& p) -> KeyValue { return std::string(workloads::length_kind_name(FIELD.kind)); }});            \
    K.push_back({Decl(SECTION ".value", KeyType::Integer, "fixed: tokens").range(1).by_default("required for fixed"), \
                 [](PLAN& p, const KeyValue& v) { FIELD.value = to_int(v); },                                         \
                 [](const PLAN& p) -> KeyValue { return FIELD.value; }});                                             \
    K.push_back({Decl(SECTION ".min", KeyType::Integer, "fewest tokens (uniform, zipf: the range; others: a clamp)")  \
                     .range(1)                                                                                        \
                     .by_default("1"),                                                                                \
                 [](PLAN& p, const KeyValue& v) { FIELD.min = to_int(v); },                                           \
                 [](const PLAN& p) -> KeyValue { return FIELD.min; }});                                               \
    K.push_back({Decl(SECTION ".max", KeyType::Integer, "most tokens (uniform, zipf: the range; others: a clamp)")    \
                     .range(1)                                                                                        \
                     .by_default("none"),                                                                             \
                 [](PLAN& p, const KeyValue& v) { FIELD.max = to_int(v); },                                           \
                 [](const PLAN& p) -> KeyValue { return FIELD.max; }});                                               \
    K.push_back({Decl(SECTION ".mean", KeyType::Number, "normal, lognormal: mean tokens").range(1),                   \
                 [](PLAN& p, const KeyValue& v) { FIELD.mean = to_double(v); },                                       \
                 [](const PLAN& p) -> KeyValue { return FIELD.mean; }});                                              \
    K.push_back(                                                                                                      \
        {Decl(SECTION ".stddev", KeyType::Number, "normal, lognormal: standard deviation of the tokens").range(0),    \
         [](PLAN& p, const KeyValue& v) { FIELD.stddev = to_double(v); },                                             \
         [](const PLAN& p) -> KeyValue { return FIELD.stddev; }});                                                    \
    K.push_back({Decl(SECTION ".s", KeyType::Number, "zipf: exponent").range(1e-6, 100),                              \
                 [](PLAN& p, const KeyValue& v) { FIELD.zipf_s = to_double(v); },                                     \
                 [](const PLAN& p) -> KeyValue { return FIELD.zipf_s; }});                                            \
    K.push_back({Decl(SECTION ".bins", KeyType::IntegerList, "histogram: token counts").range(1).by_default("none"),  \
                 [](PLAN& p, const KeyValue& v) { FIELD.bins = std::get<std::vector<int64_t>>(v); },                  \
                 [](const PLAN& p) -> KeyValue { return FIELD.bins; }});                                              \
    K.push_back({Decl(SECTION ".weights", KeyType::IntegerList, "histogram: relative frequency of each bin")          \
                     .range(0)                                                                                        \
                     .by_default("none"),                                                                             \
                 [](PLAN& p, const KeyValue& v) {                                                                     \
                     auto& w = FIELD.weights;                                                                         \
                     w.clear();                                                                                       \
                     for (int64_t x : std::get<std::vector<int64_t>>(v)) w.push_back(static_cast<double>(x));         \
                 },                                                                                                   \
                 [](const PLAN& p) -> KeyValue {                                                                      \
                     std::vector<int64_t> out;                                                                        \
                     for (double x : FIELD.weights) out.push_back(static_cast<int64_t>(x));                           \
                     return out;                                                                                      \
                 }});
