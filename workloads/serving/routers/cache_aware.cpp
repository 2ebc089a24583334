// Cache-aware routing as SGLang's router runs it (sgl-router's cache_aware policy): the router
// keeps, per replica, an approximate tree of the prompts it sent there, and for each request
//  1. when the load is imbalanced, the most loaded replica with more than kBalanceAbs outstanding
//     requests beyond the least loaded one and over kBalanceRel times its count, sends it to the
//     least loaded replica (shortest queue);
//  2. otherwise to the replica whose tree matches the longest share of the prompt, when that share
//     is above kCacheThreshold;
//  3. otherwise to the replica whose tree holds the fewest tokens (the most cache room);
// and records the prompt in the chosen replica's tree. Defaults of sgl-router's launcher
// (sgl-router/src/main.rs: --cache-threshold 0.3, --balance-abs-threshold 64,
// --balance-rel-threshold 1.5). fathom's requests carry no text: a replica's tree is the shared
// prefixes routed there, a session's history (session_tokens) and a prefix group's prefix
// (prefix_tokens), its longest one per session or group; the trees are never evicted (sgl-router
// prunes them to --max-tree-size, 2^26 characters, about 16M tokens, per replica).
#include "workloads/serving/router.h"

#include <algorithm>
#include <unordered_map>

namespace fathom::workloads::serving {
namespace {

constexpr double kCacheThreshold = 0.3;
constexpr int64_t kBalanceAbs = 64;
constexpr double kBalanceRel = 1.5;

class CacheAware final : public Router {
public:
    int route(const Request& r, const std::vector<ReplicaLoad>& replicas) override {
        if (trees_.size() < replicas.size()) trees_.resize(replicas.size());
        const int least = least_outstanding(replicas);
        int most = least;
        for (size_t i = 0; i < replicas.size(); ++i)
            if (replicas[i].available && replicas[i].outstanding > replicas[static_cast<size_t>(most)].outstanding)
                most = static_cast<int>(i);
        const int64_t lo = replicas[static_cast<size_t>(least)].outstanding;
        const int64_t hi = replicas[static_cast<size_t>(most)].outstanding;
        const RoutedPrefix prefix = routed_prefix(r);
        int pick = least;
        if (!(hi - lo > kBalanceAbs && static_cast<double>(hi) > kBalanceRel * static_cast<double>(lo))) {
            int best = -1, roomiest = -1;
            int64_t best_match = 0;
            for (size_t i = 0; i < replicas.size(); ++i) {
                if (!replicas[i].available) continue;
                const Tree& t = trees_[i];
                const auto it = prefix.key ? t.prefixes.find(prefix.key) : t.prefixes.end();
                const int64_t match = it == t.prefixes.end() ? 0 : std::min(it->second, prefix.tokens);
                if (best < 0 || match > best_match) {
                    best = static_cast<int>(i);
                    best_match = match;
                }
                if (roomiest < 0 || t.tokens < trees_[static_cast<size_t>(roomiest)].tokens)
                    roomiest = static_cast<int>(i);
            }
            const double ratio =
                r.prompt_tokens > 0 ? static_cast<double>(best_match) / static_cast<double>(r.prompt_tokens) : 0.0;
            pick = ratio > kCacheThreshold ? best : roomiest;
        }
        record(trees_[static_cast<size_t>(pick)], prefix, r.prompt_tokens);
        return pick;
    }

private:
    struct Tree {
        std::unordered_map<uint64_t, int64_t> prefixes;  // session or group -> longest prefix routed
        int64_t tokens = 0;                              // tokens the tree holds (shared and not)
    };

    static void record(Tree& t, const RoutedPrefix& prefix, int64_t prompt) {
        int64_t known = 0;
        if (prefix.key) {
            int64_t& p = t.prefixes[prefix.key];
            known = std::min(p, prefix.tokens);
            // A session's next prompt extends its history: the whole prompt becomes its prefix.
            p = std::max(p, prefix.session() ? prompt : prefix.tokens);
        }
        t.tokens += prompt - known;
    }

    std::vector<Tree> trees_;
};

}  // namespace

std::unique_ptr<Router> make_cache_aware_router() { return std::make_unique<CacheAware>(); }

}  // namespace fathom::workloads::serving
