#pragma once
// The small training search space the search tests share: around the quickstart (Llama 3 8B on 8
// H100, whose cp 2 the space sets to 1), tp {1, 2, 4, 8} x pp {1, 2} x micro-batch {1, 2} x ZeRO
// {1, 3} x recompute {none, full}.
#include "plans/search_keys.h"
#include "plans/search_space.h"
#include "scenarios/scenario.h"
#include "tests/support/fixtures.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fathom::testing {

inline plans::Scenario quickstart() {
    return scenarios::load_scenario(example("quickstart.yaml"), *source_context().catalog);
}

inline plans::SearchSpace small_space() {
    plans::SearchSpace s;
    plans::set_search_key(s, "search.tp", std::vector<int64_t>{1, 2, 4, 8});
    plans::set_search_key(s, "search.pp", std::vector<int64_t>{1, 2});
    plans::set_search_key(s, "search.vp", std::vector<int64_t>{1});
    plans::set_search_key(s, "search.cp", std::vector<int64_t>{1});
    plans::set_search_key(s, "search.micro_batch_size", std::vector<int64_t>{1, 2});
    plans::set_search_key(s, "search.zero_stage", std::vector<int64_t>{1, 3});
    plans::set_search_key(s, "search.recompute", std::string("none,full"));
    return s;
}

}  // namespace fathom::testing
