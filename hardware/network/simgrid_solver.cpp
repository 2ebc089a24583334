// The SimGrid adapter: the only file that includes SimGrid (its platform API changes between
// versions). SimGrid 3.32 allows one engine per process and cannot be re-initialised, so each
// solver forks a child process that builds the platform, runs the engine and serves the parent's
// commands over two pipes; the parent never creates an engine itself.
//
// Platform: a star zone with one sink host and one source host per path; a source's up-route is
// its path's links, the sink's down-route is empty, so a transfer from a path's source to the sink
// crosses exactly that path. Links have latency 0 (see flow_solver.h) and are not shared between
// directions (fathom builds one link per direction).
//
// Protocol (native byte order, one process pair): 'S' u64 tag, i32 path, f64 bytes -> nothing;
// 'A' f64 until -> f64 time, u32 n, n x u64 tags; 'Q' -> the child exits.
#include "hardware/network/flow_solver.h"

#include <simgrid/s4u.hpp>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xbt/log.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>

namespace fathom::hardware {
namespace {

namespace sg4 = simgrid::s4u;

void write_all(int fd, const void* data, size_t n) {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
        const ssize_t w = ::write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) throw std::runtime_error("SimGrid solver: the child process is gone (write failed)");
        p += w;
        n -= static_cast<size_t>(w);
    }
}

bool read_all(int fd, void* data, size_t n) {
    char* p = static_cast<char*>(data);
    while (n > 0) {
        const ssize_t r = ::read(fd, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        p += r;
        n -= static_cast<size_t>(r);
    }
    return true;
}

template <typename T>
void put(int fd, T v) {
    write_all(fd, &v, sizeof v);
}
template <typename T>
T get(int fd) {
    T v{};
    if (!read_all(fd, &v, sizeof v))
        throw std::runtime_error("SimGrid solver: the child process is gone (read failed)");
    return v;
}

// Runs in the child: build the platform, serve commands until 'Q' or end of input.
[[noreturn]] void serve(const std::vector<double>& links, const std::vector<std::vector<int>>& paths, int in, int out) {
    int rc = 0;
    try {
        xbt_log_control_set("root.thresh:critical");
        int argc = 1;
        char arg0[] = "fathom-simgrid";
        char* argv[] = {arg0, nullptr};
        sg4::Engine engine(&argc, argv);
        engine.set_config("network/model:CM02");
        engine.set_config("network/TCP-gamma:0");
        engine.set_config("network/crosstraffic:0");
        engine.set_config("maxmin/precision:1e-9");
        engine.set_config("surf/precision:1e-9");
        engine.set_config("contexts/stack-size:16");  // KiB (SimGrid clears each stack): the flow actors only wait
        engine.set_config("contexts/guard-size:0");
        auto* zone = sg4::create_star_zone("fathom");
        sg4::Host* sink = zone->create_host("sink", 1e9);
        std::vector<sg4::Link*> sg_links;
        sg_links.reserve(links.size());
        for (size_t i = 0; i < links.size(); ++i)
            sg_links.push_back(zone->create_link("l" + std::to_string(i), links[i])
                                   ->set_latency(0)
                                   ->set_sharing_policy(sg4::Link::SharingPolicy::SHARED)
                                   ->seal());
        std::vector<sg4::Host*> sources;
        sources.reserve(paths.size());
        for (size_t p = 0; p < paths.size(); ++p) {
            sources.push_back(zone->create_host("p" + std::to_string(p), 1e9));
            std::vector<sg4::LinkInRoute> route;
            for (int l : paths[p]) route.emplace_back(sg_links[static_cast<size_t>(l)]);
            zone->add_route(sources.back()->get_netpoint(), nullptr, nullptr, nullptr, route, false);
        }
        zone->add_route(nullptr, sink->get_netpoint(), nullptr, nullptr, {}, false);
        zone->seal();

        // Each flow has a small actor that waits for it, records its end and releases a semaphore;
        // the serving actor waits on that semaphore, so one end costs one wake-up whatever the
        // number of flows running (Comm::wait_any over all of them costs their number each time).
        std::vector<uint64_t> finished;
        size_t running = 0;
        const sg4::SemaphorePtr ended = sg4::Semaphore::create(0);
        sg4::Actor::create("fathom", sink, [&]() {
            for (;;) {
                char cmd = 0;
                if (!read_all(in, &cmd, 1) || cmd == 'Q') return;
                if (cmd == 'S') {
                    const auto tag = get<uint64_t>(in);
                    const auto path = get<int32_t>(in);
                    const auto bytes = get<double>(in);
                    const auto size = static_cast<uint64_t>(std::max(1.0, std::ceil(bytes)));
                    ++running;
                    // A sender on the path's source host and a receiver on the sink meet on the
                    // flow's own mailbox. (Comm::sendto_async files every comm under one issuer whose
                    // list SimGrid searches linearly when a comm ends: quadratic in the flows.)
                    sg4::Host* from = sources[static_cast<size_t>(path)];
                    sg4::Mailbox* box = sg4::Mailbox::by_name("f" + std::to_string(tag));
                    sg4::Actor::create("send", from, [box, size]() { box->put(box, size); });
                    sg4::Actor::create("recv", sink, [box, tag, &finished, &running, ended]() {
                        box->get<sg4::Mailbox>();
                        finished.push_back(tag);
                        --running;
                        ended->release();
                    });
                    continue;
                }
                const auto until = get<double>(in);  // 'A'
                while (finished.empty()) {
                    const double t = sg4::Engine::get_clock();
                    if (running == 0) {
                        if (std::isfinite(until) && until > t) sg4::this_actor::sleep_until(until);
                        break;
                    }
                    if (std::isfinite(until) && until <= t) break;
                    if (!std::isfinite(until)) ended->acquire();
                    else if (ended->acquire_timeout(until - t)) break;  // true: timed out
                }
                // Flows that ended at this date but whose actors have not run yet are reported by
                // the next advance, at the same date.
                put<double>(out, sg4::Engine::get_clock());
                put<uint32_t>(out, static_cast<uint32_t>(finished.size()));
                for (uint64_t t : finished) put<uint64_t>(out, t);
                finished.clear();
            }
        });
        engine.run();
    } catch (...) {
        rc = 3;
    }
    ::_exit(rc);
}

class SimgridSolver final : public FlowSolver {
public:
    ~SimgridSolver() override {
        if (pid_ <= 0) return;
        const char q = 'Q';
        (void)::write(to_child_, &q, 1);
        ::close(to_child_);
        ::close(from_child_);
        int status = 0;
        while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {}
    }

    int add_link(double capacity) override {
        if (pid_ > 0) throw std::logic_error("SimGrid solver: link added after the first flow started");
        if (!(capacity > 0)) throw std::logic_error("SimGrid solver: a link needs a positive capacity");
        links_.push_back(capacity);
        return static_cast<int>(links_.size()) - 1;
    }
    int add_path(const std::vector<int>& links) override {
        if (pid_ > 0) throw std::logic_error("SimGrid solver: path added after the first flow started");
        for (int l : links)
            if (l < 0 || static_cast<size_t>(l) >= links_.size())
                throw std::logic_error("SimGrid solver: unknown link");
        paths_.push_back(links);
        return static_cast<int>(paths_.size()) - 1;
    }
    void start(int path, double bytes, uint64_t tag) override {
        if (path < 0 || static_cast<size_t>(path) >= paths_.size())
            throw std::logic_error("SimGrid solver: unknown path");
        launch();
        const char c = 'S';
        write_all(to_child_, &c, 1);
        put<uint64_t>(to_child_, tag);
        put<int32_t>(to_child_, path);
        put<double>(to_child_, bytes);
    }
    double advance(double until, std::vector<uint64_t>& done) override {
        done.clear();
        if (pid_ <= 0) {  // nothing ever started
            if (std::isfinite(until)) now_ = std::max(now_, until);
            return now_;
        }
        const char c = 'A';
        write_all(to_child_, &c, 1);
        put<double>(to_child_, until);
        now_ = get<double>(from_child_);
        const auto n = get<uint32_t>(from_child_);
        for (uint32_t i = 0; i < n; ++i) done.push_back(get<uint64_t>(from_child_));
        return now_;
    }
    double now() const override { return now_; }

private:
    void launch() {
        if (pid_ > 0) return;
        int down[2], up[2];
        if (::pipe(down) != 0 || ::pipe(up) != 0) throw std::runtime_error("SimGrid solver: pipe() failed");
        std::fflush(nullptr);  // the child must not write the parent's buffered output again
        std::cout.flush();
        std::cerr.flush();
        const pid_t pid = ::fork();
        if (pid < 0) throw std::runtime_error(std::string("SimGrid solver: fork() failed: ") + std::strerror(errno));
        if (pid == 0) {
            ::close(down[1]);
            ::close(up[0]);
            serve(links_, paths_, down[0], up[1]);
        }
        ::close(down[0]);
        ::close(up[1]);
        pid_ = pid;
        to_child_ = down[1];
        from_child_ = up[0];
        std::signal(SIGPIPE, SIG_IGN);  // a dead child shows as a failed write, not a signal
    }

    std::vector<double> links_;
    std::vector<std::vector<int>> paths_;
    pid_t pid_ = -1;
    int to_child_ = -1, from_child_ = -1;
    double now_ = 0;
};

}  // namespace

std::unique_ptr<FlowSolver> make_simgrid_solver() { return std::make_unique<SimgridSolver>(); }

}  // namespace fathom::hardware
