#pragma once
// Internal to plans/: the keys of one token-length distribution (workloads/lengths/
// length_distribution.h) under a section, shared by serving's traffic.prompt / traffic.output and
// training's training.documents. Not included outside plans/.
#include "plans/key_decl.h"
#include "workloads/lengths/length_distribution.h"

#include <string>
#include <vector>

namespace fathom::plans::key_decl {

// Appends the SECTION.distribution, .value, .min, .max, .mean, .stddev, .s, .bins and .weights
// keys of the distribution at the member path `Path` (&ServingPlan::traffic, ..., &SyntheticTraffic::prompt).
template <auto First, auto... Rest>
void add_length_keys(std::vector<Key<typename detail::MemberOf<decltype(First)>::Class>>& k,
                     const std::string& section) {
    using D = workloads::LengthDistribution;
    k.push_back(
        {Decl(section + ".distribution", KeyType::Choice, "fixed, uniform, normal, lognormal, zipf or histogram")
             .choices_of<workloads::LengthKind>()
             .by_default("fixed"),
         member<First, Rest..., &D::kind>()});
    k.push_back({Decl(section + ".value", KeyType::Integer, "fixed: tokens").range(1).by_default("required for fixed"),
                 member<First, Rest..., &D::value>()});
    k.push_back({Decl(section + ".min", KeyType::Integer, "fewest tokens (uniform, zipf: the range; others: a clamp)")
                     .range(1)
                     .by_default("1"),
                 member<First, Rest..., &D::min>()});
    k.push_back({Decl(section + ".max", KeyType::Integer, "most tokens (uniform, zipf: the range; others: a clamp)")
                     .range(1)
                     .by_default("none"),
                 member<First, Rest..., &D::max>()});
    k.push_back({Decl(section + ".mean", KeyType::Number, "normal, lognormal: mean tokens").range(1),
                 member<First, Rest..., &D::mean>()});
    k.push_back(
        {Decl(section + ".stddev", KeyType::Number, "normal, lognormal: standard deviation of the tokens").range(0),
         member<First, Rest..., &D::stddev>()});
    k.push_back({Decl(section + ".s", KeyType::Number, "zipf: exponent").range(1e-6, 100),
                 member<First, Rest..., &D::zipf_s>()});
    k.push_back({Decl(section + ".bins", KeyType::IntegerList, "histogram: token counts").range(1).by_default("none"),
                 member<First, Rest..., &D::bins>()});
    k.push_back({Decl(section + ".weights", KeyType::IntegerList, "histogram: relative frequency of each bin")
                     .range(0)
                     .by_default("none"),
                 member<First, Rest..., &D::weights>()});
}

}  // namespace fathom::plans::key_decl
