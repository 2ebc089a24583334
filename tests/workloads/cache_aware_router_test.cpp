// The cache-aware router (workloads/serving/routers/cache_aware.cpp, SGLang's router): its three
// rules on hand-built loads and requests, each decision derived in the comments.
#include "workloads/serving/router.h"

#include <catch2/catch.hpp>

#include <vector>

using namespace fathom::workloads::serving;

namespace {

Request turn(uint64_t session, int64_t history, int64_t prompt) {
    Request r;
    r.session = session;
    r.session_tokens = history;
    r.prompt_tokens = prompt;
    return r;
}

}  // namespace

TEST_CASE("the cache-aware router follows the longest routed prefix above its threshold", "[serving]") {
    auto router = router_registry().get("cache-aware").factory();
    const std::vector<ReplicaLoad> idle(4);
    // Session 1's first turn matches nothing: to the replica with the most room (all empty: the
    // first), whose tree then holds its 600 tokens. Session 2's first turn: the roomiest is now
    // replica 1.
    CHECK(router->route(turn(1, 0, 600), idle) == 0);
    CHECK(router->route(turn(2, 0, 600), idle) == 1);
    // Session 1's second turn (history 700: 600 in, 100 out; prompt 1,300): replica 0 matches the
    // 600 tokens routed there, 600 / 1,300 = 0.46 > 0.3: replica 0, whose session prefix becomes 1,300.
    CHECK(router->route(turn(1, 700, 1300), idle) == 0);
    // A third turn of 5,000 tokens (history 1,400) matches 1,300 there: 0.26, under the threshold:
    // to the roomiest replica, 2 (replicas 2 and 3 hold nothing, 2 comes first).
    CHECK(router->route(turn(1, 1400, 5000), idle) == 2);
}

TEST_CASE("the cache-aware router sends to the least loaded replica when the load is imbalanced", "[serving]") {
    auto router = router_registry().get("cache-aware").factory();
    std::vector<ReplicaLoad> loads(3);
    CHECK(router->route(turn(1, 0, 1000), loads) == 0);  // session 1's 1,000 tokens now on replica 0
    // Imbalanced: the most loaded has more than 64 requests beyond the least loaded and over 1.5
    // times its count (100 against 20: 80 > 64, 100 > 30): the least loaded, replica 2, though
    // replica 0 matches 1,000 of the 1,200 tokens. Replica 2's tree records the 1,200.
    loads[0].outstanding = 100;
    loads[1].outstanding = 30;
    loads[2].outstanding = 20;
    CHECK(router->route(turn(1, 1100, 1200), loads) == 2);
    // 60 beyond (80 against 20) is within the absolute slack: the longest match decides, replica
    // 2's 1,200 over replica 0's 1,000 (of 1,500 tokens: 0.8).
    loads[0].outstanding = 80;
    CHECK(router->route(turn(1, 1300, 1500), loads) == 2);
    // 70 beyond (220 against 150) but not over 1.5 x 150 = 225: balanced; the match decides again.
    loads[0].outstanding = 220;
    loads[1].outstanding = 150;
    loads[2].outstanding = 150;
    CHECK(router->route(turn(1, 1600, 1800), loads) == 2);
    // Replica 2 taken out (autoscaling drains it): never chosen; replica 0 keeps the longest match
    // among the others (1,000 of 2,000 tokens: 0.5).
    loads[2].available = false;
    CHECK(router->route(turn(1, 1900, 2000), loads) == 0);
}
