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
// Driving the flows: a pool of sender and receiver actor pairs, each pair with its own mailbox,
// reused from flow to flow (the pool grows to the most flows running at once). A flow wakes an
// idle pair: the sender moves to the path's source host and puts the flow's bytes; the receiver,
// waiting on the sink, records the end and wakes the serving actor through one semaphore, so an
// end costs a few context switches whatever the number of flows running. Creating two actors per
// flow (stacks allocated and cleared each time) cost most of a step's time; Comm::sendto_async
// files every comm under maestro, whose list SimGrid 3.32 searches linearly when a comm ends, and
// Comm::wait_any costs the number of flows at each end: both are quadratic in the flows running.
//
// Protocol (native byte order, one process pair, buffered: the parent sends its starts with the
// next advance in one write): 'S' u64 tag, i32 path, f64 bytes -> nothing; 'A' f64 until ->
// f64 time, u32 n, n x u64 tags; 'Q' -> the child exits.
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
#include <deque>
#include <iostream>
#include <stdexcept>
#include <string>

namespace fathom::hardware {
namespace {

namespace sg4 = simgrid::s4u;

// Bytes to one end of a pipe, written when flushed.
class PipeWriter {
public:
    explicit PipeWriter(int fd = -1) : fd_(fd) {}
    template <typename T>
    void put(T v) {
        const auto* p = reinterpret_cast<const char*>(&v);
        buf_.insert(buf_.end(), p, p + sizeof v);
    }
    void flush() {
        const char* p = buf_.data();
        size_t n = buf_.size();
        while (n > 0) {
            const ssize_t w = ::write(fd_, p, n);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) throw std::runtime_error("SimGrid solver: the other process is gone (write failed)");
            p += w;
            n -= static_cast<size_t>(w);
        }
        buf_.clear();
    }

private:
    int fd_;
    std::vector<char> buf_;
};

// Bytes from one end of a pipe, read in large chunks.
class PipeReader {
public:
    explicit PipeReader(int fd = -1) : fd_(fd), buf_(1 << 16) {}
    // False at the end of the input.
    bool read(void* data, size_t n) {
        char* out = static_cast<char*>(data);
        while (n > 0) {
            if (pos_ == end_ && !fill()) return false;
            const size_t k = std::min(n, end_ - pos_);
            std::memcpy(out, buf_.data() + pos_, k);
            pos_ += k;
            out += k;
            n -= k;
        }
        return true;
    }
    template <typename T>
    T get() {
        T v{};
        if (!read(&v, sizeof v)) throw std::runtime_error("SimGrid solver: the other process is gone (read failed)");
        return v;
    }

private:
    bool fill() {
        for (;;) {
            const ssize_t r = ::read(fd_, buf_.data(), buf_.size());
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) return false;
            pos_ = 0;
            end_ = static_cast<size_t>(r);
            return true;
        }
    }
    int fd_;
    std::vector<char> buf_;
    size_t pos_ = 0, end_ = 0;
};

void configure(sg4::Engine& engine) {
    engine.set_config("network/model:CM02");
    engine.set_config("network/TCP-gamma:0");
    engine.set_config("network/crosstraffic:0");
    engine.set_config("maxmin/precision:1e-9");
    engine.set_config("surf/precision:1e-9");
    engine.set_config("contexts/stack-size:16");  // KiB (SimGrid clears each stack): the pool's actors only wait
    engine.set_config("contexts/guard-size:0");
}

struct Platform {
    sg4::Host* sink = nullptr;
    std::vector<sg4::Host*> sources;  // per path
};

Platform build_platform(const std::vector<double>& links, const std::vector<std::vector<int>>& paths) {
    auto* zone = sg4::create_star_zone("fathom");
    Platform p;
    p.sink = zone->create_host("sink", 1e9);
    std::vector<sg4::Link*> sg_links;
    sg_links.reserve(links.size());
    for (size_t i = 0; i < links.size(); ++i)
        sg_links.push_back(zone->create_link("l" + std::to_string(i), links[i])
                               ->set_latency(0)
                               ->set_sharing_policy(sg4::Link::SharingPolicy::SHARED)
                               ->seal());
    p.sources.reserve(paths.size());
    for (size_t k = 0; k < paths.size(); ++k) {
        p.sources.push_back(zone->create_host("p" + std::to_string(k), 1e9));
        std::vector<sg4::LinkInRoute> route;
        for (int l : paths[k]) route.emplace_back(sg_links[static_cast<size_t>(l)]);
        zone->add_route(p.sources.back()->get_netpoint(), nullptr, nullptr, nullptr, route, false);
    }
    zone->add_route(nullptr, p.sink->get_netpoint(), nullptr, nullptr, {}, false);
    zone->seal();
    return p;
}

// Runs in the child, as the serving actor: starts flows on the pool, reports their ends.
class FlowServer {
public:
    FlowServer(Platform platform, int in, int out) : platform_(std::move(platform)), in_(in), out_(out) {}

    void serve() {
        for (;;) {
            char cmd = 0;
            if (!in_.read(&cmd, 1) || cmd == 'Q') ::_exit(0);  // nothing to clean up in a child
            if (cmd == 'S') {
                const auto tag = in_.get<uint64_t>();
                const auto path = in_.get<int32_t>();
                const auto bytes = in_.get<double>();
                start(platform_.sources.at(static_cast<size_t>(path)), bytes, tag);
            } else {
                advance(in_.get<double>());  // 'A'
            }
        }
    }

private:
    // A sender and a receiver meeting on their own mailbox; idle between flows.
    struct Slot {
        sg4::Mailbox* box = nullptr;
        sg4::SemaphorePtr go;
        sg4::Host* from = nullptr;
        uint64_t size = 0;
        uint64_t tag = 0;
    };

    void start(sg4::Host* from, double bytes, uint64_t tag) {
        Slot* s = idle_slot();
        s->from = from;
        s->size = static_cast<uint64_t>(std::max(1.0, std::ceil(bytes)));
        s->tag = tag;
        ++running_;
        s->go->release();
    }

    Slot* idle_slot() {
        if (!idle_.empty()) {
            Slot* s = idle_.back();
            idle_.pop_back();
            return s;
        }
        Slot* s = &slots_.emplace_back();
        s->box = sg4::Mailbox::by_name("m" + std::to_string(slots_.size()));
        s->go = sg4::Semaphore::create(0);
        sg4::Actor::create("send", platform_.sink, [s] {
            for (;;) {
                s->go->acquire();
                sg4::this_actor::set_host(s->from);
                s->box->put(s, s->size);
            }
        })->daemonize();
        sg4::Actor::create("recv", platform_.sink, [this, s] {
            for (;;) {
                s->box->get<Slot>();
                finished_.push_back(s->tag);  // before the slot can be reused
                idle_.push_back(s);
                --running_;
                ended_->release();
            }
        })->daemonize();
        return s;
    }

    // Runs to `until` or to the next end, whichever is first. Flows that ended at this date but
    // whose receivers have not run yet are reported by the next advance, at the same date.
    void advance(double until) {
        while (finished_.empty()) {
            const double t = sg4::Engine::get_clock();
            if (running_ == 0) {
                if (std::isfinite(until) && until > t) sg4::this_actor::sleep_until(until);
                break;
            }
            if (std::isfinite(until) && until <= t) break;
            if (!std::isfinite(until)) ended_->acquire();
            else if (ended_->acquire_timeout(until - t)) break;  // true: timed out
        }
        PipeWriter& w = out_;
        w.put<double>(sg4::Engine::get_clock());
        w.put<uint32_t>(static_cast<uint32_t>(finished_.size()));
        for (uint64_t tag : finished_) w.put<uint64_t>(tag);
        w.flush();
        finished_.clear();
    }

    Platform platform_;
    PipeReader in_;
    PipeWriter out_;
    std::deque<Slot> slots_;  // stable addresses
    std::vector<Slot*> idle_;
    std::vector<uint64_t> finished_;
    size_t running_ = 0;
    sg4::SemaphorePtr ended_ = sg4::Semaphore::create(0);
};

// The child: builds the platform, serves commands until 'Q' or the end of input.
[[noreturn]] void run_child(const std::vector<double>& links, const std::vector<std::vector<int>>& paths, int in,
                            int out) {
    int rc = 0;
    try {
        xbt_log_control_set("root.thresh:critical");
        int argc = 1;
        char arg0[] = "fathom-simgrid";
        char* argv[] = {arg0, nullptr};
        sg4::Engine engine(&argc, argv);
        configure(engine);
        FlowServer server(build_platform(links, paths), in, out);
        sg4::Actor::create("fathom", engine.host_by_name("sink"), [&server] { server.serve(); });
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
        out_.put<char>('S');
        out_.put<uint64_t>(tag);
        out_.put<int32_t>(path);
        out_.put<double>(bytes);
    }
    double advance(double until, std::vector<uint64_t>& done) override {
        done.clear();
        if (pid_ <= 0) {  // nothing ever started
            if (std::isfinite(until)) now_ = std::max(now_, until);
            return now_;
        }
        out_.put<char>('A');
        out_.put<double>(until);
        out_.flush();
        now_ = in_.get<double>();
        const auto n = in_.get<uint32_t>();
        for (uint32_t i = 0; i < n; ++i) done.push_back(in_.get<uint64_t>());
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
            run_child(links_, paths_, down[0], up[1]);
        }
        ::close(down[0]);
        ::close(up[1]);
        pid_ = pid;
        to_child_ = down[1];
        from_child_ = up[0];
        out_ = PipeWriter(to_child_);
        in_ = PipeReader(from_child_);
        std::signal(SIGPIPE, SIG_IGN);  // a dead child shows as a failed write, not a signal
        if (now_ > 0) {                 // the engine starts at 0: bring it to the time reached without flows
            std::vector<uint64_t> none;
            const double until = now_;
            advance(until, none);
        }
    }

    std::vector<double> links_;
    std::vector<std::vector<int>> paths_;
    pid_t pid_ = -1;
    int to_child_ = -1, from_child_ = -1;
    PipeWriter out_;
    PipeReader in_;
    double now_ = 0;
};

}  // namespace

std::unique_ptr<FlowSolver> make_simgrid_solver() { return std::make_unique<SimgridSolver>(); }

}  // namespace fathom::hardware
