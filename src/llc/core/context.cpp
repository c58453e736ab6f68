// context.cpp - context setup, sending, progress and finalize.
#include "core/context.hpp"

#include "core/api_checks.hpp"
#include "core/clock.hpp"
#include "core/errors.hpp"
#include "core/finalize_drain.hpp"
#include "kvs/kvs.hpp"
#include "core/open_transports.hpp"
#include "rma/rma.hpp"
#include "tagged/tagged.hpp"

#include <algorithm>
#include <sched.h>
#include <unistd.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <random>

namespace llc {

namespace {

// Sets a flag for the lifetime of the guard (re-entrancy detection).
class FlagGuard {
public:
    explicit FlagGuard(bool &flag) : flag_(flag) { flag_ = true; }
    ~FlagGuard() { flag_ = false; }

private:
    bool &flag_;
};

} // namespace

Context::Context(const llc_init_params_t &params, llc_context_t *handle)
    : handle_(handle), boot_(params.boot, params.endpoint), backoff_(0, 0)
{
    check_init_params(params);
    config_ = Config::from_environment();
    rank_ = params.rank;
    size_ = params.size;
    endpoint_ = params.endpoint;
    job_id_ = params.job_id;
    if (endpoint_ > 0)
        job_id_ += "/endpoint" + std::to_string(endpoint_);
    // Leader: creates the node's shared table now; the others map it in create_transports.
    node_map_ = NodeMap(params.node_of_rank, size_, rank_, job_id_, config_.node_shared);
    idle_ = idle_policy(config_, node_map_.processes_on_node(), online_cpus());
    backoff_ = ProgressBackoff(idle_.spin_count, idle_.idle_sleep_us, config_.idle_away_us);
    next_send_seq_.assign(size_, 0);
    next_recv_seq_.assign(size_, 0);
    create_transports();
    if (auto &node = transports_[size_t(Route::Node)])
        fast_poll_ = node->fast_poll();
    tagged_ = std::make_unique<Tagged>(*this);
    std::random_device entropy;
    const uint64_t nonce = (uint64_t(entropy()) << 32) ^ entropy() ^ (uint64_t(::getpid()) << 16);
    rma_ = std::make_unique<Rma>(*this, nonce);
}

Context::~Context() = default;

void Context::create_transports()
{
    std::vector<int> local_ranks;
    bool any_remote = false;
    for (int r = 0; r < size_; r++) {
        if (node_map_.node_of(r) == node_map_.my_node())
            local_ranks.push_back(r);
        else
            any_remote = true;
    }
    std::unique_ptr<Transport> &self = transports_[size_t(Route::Self)];
    std::unique_ptr<Transport> &node = transports_[size_t(Route::Node)];
    std::unique_ptr<Transport> &net = transports_[size_t(Route::Network)];
    self = open_self_transport(*this);
    // Local setup may fail on one process only; keep fencing so the others
    // are not left hanging, and report the failure afterwards.
    std::optional<Error> failure;
    auto attempt = [&](auto &&step) {
        if (failure)
            return;
        try {
            step();
        } catch (const Error &e) {
            failure = e;
        }
    };
    attempt([&] {
        const NetChoice choice = choose_inter_node(config_, rank_); // before any transport: it decides the network's
        if (local_ranks.size() > 1)
            node = open_node_transport(*this, job_id_, local_ranks);
        if (any_remote) {
            kvs_ = std::make_unique<AddressBook>(config_, boot_, rank_, node_map_, job_id_);
            kvs_->start(); // dist: a node leader's KVS server, its address through the bootstrap
            net = open_inter_node(*this, config_, choice, local_ranks);
        }
    });
    boot_.fence();
    if (net)
        attempt([&] { net->attach(); }); // e.g. LLC_UDP_SHARED_RECV=1: the node leader's socket
    if (kvs_)
        attempt([&] { kvs_->commit(); }); // dist: this process's entry, at its owner (the servers are known now)
    attempt([&] { node_map_.attach(); }); // the leader's table (created before the first fence)
    if (node)
        attempt([&] { node->attach(); });
    boot_.fence();
    node_map_.release_name();
    for (auto &t : transports_)
        if (t) {
            t->release_names();
            attempt([&] { require_in_order_delivery(*t); }); // take_sequence relies on it
            live_.push_back(t.get());
            if (!idle_waiter_ && t->caps().has(CapWakesOnArrival))
                idle_waiter_ = t.get();
        }
    if (failure)
        throw *failure;
}

bool Context::wrap_network_transport(const std::function<std::unique_ptr<Transport>(std::unique_ptr<Transport>)> &wrap)
{
    std::unique_ptr<Transport> &net = transports_[size_t(Route::Network)];
    if (!net)
        return false;
    Transport *old = net.get();
    net = wrap(std::move(net));
    for (Transport *&t : live_)
        if (t == old)
            t = net.get();
    if (idle_waiter_ == old)
        idle_waiter_ = net.get();
    return true;
}

void Context::register_handler(unsigned id, llc_am_handler_t handler, void *arg)
{
    if (id >= LLC_AM_MAX_HANDLERS)
        throw Error(LLC_ERR_INVALID, "llc_am_register: handler id " + std::to_string(id) +
                                         " is out of range: valid ids are 0.." +
                                         std::to_string(LLC_AM_MAX_HANDLERS - 1));
    handlers_[id] = HandlerSlot{handler, arg};
}

void Context::register_internal_handler(unsigned id, llc_am_handler_t handler, void *arg)
{
    if (id < LLC_AM_MAX_HANDLERS || id >= kHandlerSlots)
        throw Error(LLC_ERR_INVALID, "internal error: handler id " + std::to_string(id) + " is not an internal one");
    handlers_[id] = HandlerSlot{handler, arg};
}

int Context::am_send(int dest, unsigned id, const void *hdr, size_t hdr_len, const llc_iov_t *iov,
                     int iovcnt, llc_completion_t cb, void *cb_arg)
{
    check_am_send_args(size_, dest, id, hdr, hdr_len, iov, iovcnt);
    size_t len = 0;
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].len;
    if (tagged_->am_by_rendezvous(dest, len))
        return tagged_->send_am(dest, id, hdr, hdr_len, iov, iovcnt, cb, cb_arg); // read where it is (tagged_am.cpp)
    return send_am(dest, id, hdr, hdr_len, iov, iovcnt, cb, cb_arg);
}

int Context::send_am(int dest, unsigned id, const void *hdr, size_t hdr_len, const llc_iov_t *iov, int iovcnt,
                     llc_completion_t cb, void *cb_arg)
{
    Transport &t = transport_to(dest);
    if (t.caps().inline_max > 0) {
        // fast path: a small record goes whole into the peer's ring, without a message object
        WireHeader w = make_wire_header(Kind::Am, rank_, id, next_send_seq_[dest]);
        w.hdr_len = uint32_t(hdr_len);
        for (int i = 0; i < iovcnt; i++)
            w.payload_len += iov[i].len;
        if (w.payload_len <= t.caps().inline_max && t.try_send_inline(dest, w, hdr, iov, iovcnt)) {
            next_send_seq_[dest]++;
            count_sent(w.payload_len);
            return LLC_OK;
        }
    }
    auto msg = OutgoingMessage::make_am(rank_, id, next_send_seq_[dest], hdr, hdr_len, iov, iovcnt, cb, cb_arg);
    uint64_t bytes = msg->payload_len();
    int rc = t.send(dest, std::move(msg));
    next_send_seq_[dest]++;
    count_sent(bytes);
    return rc;
}

bool Context::try_send_tagged_inline(int dest, uint64_t tag, uint32_t source, const void *buf, size_t len)
{
    Transport &t = transport_to(dest);
    if (len > t.caps().inline_max)
        return false;
    TagChunkHeader h{tag, source, uint32_t(next_send_seq_[dest])};
    if (!t.try_send_tagged(dest, h, buf, len))
        return false;
    next_send_seq_[dest]++;
    count_sent(len);
    return true;
}

llc_fast_peer_t *Context::fast_peer(int dest)
{
    return dest >= 0 && dest < size_ && dest != rank_ ? transport_to(dest).fast_peer(dest) : nullptr;
}

void Context::count_sent(uint64_t bytes)
{
    // each transport counts its own messages (self_msgs, shm_msgs, tcp_msgs, ...)
    stats_.msgs_sent++;
    stats_.bytes_sent += bytes;
}

llc_stats_t Context::stats() const
{
    llc_stats_t st = stats_;
    for (const Transport *t : live_)
        t->add_stats(st);
    st.kvs_auth_rejected = kvs_ && kvs_->server() ? kvs_->server()->auth_rejected() : 0;
    return st;
}

void Context::queue_completion(llc_completion_t cb, void *arg, int status)
{
    completions_.push_back(Completion{cb, arg, status});
}

void Context::deliver(int src, const WireHeader &wire, const void *hdr, const void *data, size_t data_len)
{
    skip_message(src, wire);
    stats_.msgs_received++;
    stats_.bytes_received += data_len;
    if (wire.handler >= handlers_.size())
        throw Error(LLC_ERR_PEER, "protocol error: handler id " + std::to_string(wire.handler) + " from rank " +
                                      std::to_string(src) + " is out of range");
    if (!held_.empty() && held_.keep(src, wire, hdr, data, data_len))
        return;
    run_handler(src, wire.handler, hdr, wire.hdr_len, data, data_len);
}

void Context::run_handler(int src, unsigned id, const void *hdr, size_t hdr_len, const void *data, size_t data_len)
{
    const HandlerSlot &h = handlers_[id];
    if (!h.fn) {
        report_error(LLC_ERR_INVALID, "dropped a message from rank " + std::to_string(src) + " for handler id " +
                                          std::to_string(id) + " (" + std::to_string(data_len) +
                                          " payload bytes): no handler is registered for that id on rank " +
                                          std::to_string(rank_) + "; register handlers before peers can send");
        return;
    }
    h.fn(handle_, h.arg, src, hdr, hdr_len, data, data_len);
}

void Context::release_records_from(int src)
{
    held_.stop_waiting(src);
    HeldRecord rec;
    while (held_.next(src, rec)) {
        if (rec.wire.kind == 0)
            tagged_->arrived_eager(src, rec.chunk_tag, rec.chunk_source, rec.data.data(), rec.data.size());
        else
            run_handler(src, rec.wire.handler, rec.hdr.data(), rec.wire.hdr_len, rec.data.data(), rec.data.size());
    }
}

char *Context::payload_destination(int src, const WireHeader &wire, const void *hdr)
{
    if (Kind(wire.kind) != Kind::Am)
        return nullptr;
    if (wire.handler == kTagData && tagged_)
        return tagged_->data_destination(src, hdr, wire.hdr_len, wire.payload_len);
    if (wire.handler == kTagPut && tagged_)
        return tagged_->put_destination(src, hdr, wire.hdr_len, wire.payload_len);
    if ((wire.handler == kRmaGetReply || wire.handler == kRmaPut) && rma_)
        return rma_->payload_destination(src, wire.handler, hdr, wire.hdr_len, wire.payload_len);
    return nullptr;
}

void Context::deliver_tagged_chunk(int src, const char *chunk, size_t len)
{
    TagChunkHeader h;
    if (len < sizeof(h))
        fail_with(LLC_ERR_PEER, [&] {
            return "protocol error: a tagged message chunk of " + std::to_string(len) + " bytes from rank " +
                   std::to_string(src);
        });
    std::memcpy(&h, chunk, sizeof(h));
    take_sequence(src, h.seq, 0xffffffffu); // the chunk carries the low 32 bits
    size_t data_len = len - sizeof(h);
    stats_.msgs_received++;
    stats_.bytes_received += data_len;
    if (!held_.empty() && held_.keep_chunk(src, h.tag, h.source, chunk + sizeof(h), data_len))
        return;
    tagged_->arrived_eager(src, h.tag, h.source, chunk + sizeof(h), data_len);
}

void Context::skip_message(int src, const WireHeader &wire) { take_sequence(src, wire.seq, ~uint64_t(0)); }

void Context::take_sequence(int src, uint64_t got, uint64_t bits)
{
    uint64_t &expected = next_recv_seq_[src];
    if (((got ^ expected) & bits) != 0)
        fail_with(LLC_ERR_PEER, [&] {
            return "message order violated on the stream from rank " + std::to_string(src) +
                   ": expected sequence number " + std::to_string(expected) +
                   (bits == ~uint64_t(0) ? "" : " (compared in its low bits)") + ", got " + std::to_string(got) +
                   " (libllc bug)";
        });
    expected++;
}

void Context::report_error(int status, const std::string &message)
{
    if (progress_status_ == LLC_OK) {
        progress_status_ = status;
        progress_message_ = message;
    }
}

void Context::report_peer_failure(int peer, int status, const std::string &message)
{
    report_error(status, message);
    if (peer >= 0 && peer < size_)
        failed_peers_.push_back(peer);
}

void Context::hand_over_failed_peers()
{
    std::vector<int> peers;
    peers.swap(failed_peers_);
    for (int p : peers) {
        if (rma_)
            rma_->peer_failed(p);
        if (tagged_)
            tagged_->peer_failed(p);
    }
}

void Context::defer_completion(OutgoingMessage &msg, int status)
{
    if (!msg.owes_callback)
        return;
    msg.owes_callback = false;
    if (msg.cb)
        completions_.push_back(Completion{msg.cb, msg.cb_arg, status});
}

bool Context::run_completions()
{
    bool any = false;
    while (!completions_.empty()) {
        std::vector<Completion> batch;
        batch.swap(completions_);
        for (const Completion &c : batch)
            c.cb(c.arg, c.status);
        any = true;
    }
    return any;
}

int Context::progress(int *progressed)
{
    auto idle = ProgressBackoff::Action::Spin;
    int status;
    {
        if (in_progress_)
            throw Error(LLC_ERR_STATE, "llc_progress called from inside a handler or completion callback");
        FlagGuard guard(in_progress_);
        progress_status_ = LLC_OK;
        progress_message_.clear();

        // Polls the caller left out since the last call (llc_fast_poll_skip)
        // were idle calls too.
        uint64_t skipped = 0;
        bool caller_busy = false; // (llc_fast.h: work of its own, not a wait)
        if (fast_poll_) {
            skipped = fast_poll_->skipped;
            fast_poll_->skipped = 0;
            caller_busy = fast_poll_->busy != 0;
            fast_poll_->busy = 0;
        }
        bool did = false;
        for (Transport *t : live_)
            did |= t->progress();
        if (!completions_.empty())
            did |= run_completions();
        if (!failed_peers_.empty()) {
            hand_over_failed_peers();
            did = true;
        }

        if (did || caller_busy)
            backoff_.on_activity();
        else
            idle = backoff_.on_idle(1 + skipped);
        if (progressed)
            *progressed = did ? 1 : 0;
        if (progress_status_ != LLC_OK)
            last_error_ = progress_message_;
        status = progress_status_;
        // The caller's hook takes the wait once the context is left: while
        // it sleeps with its lock released, another thread may come in.
        if (idle != ProgressBackoff::Action::Spin && !idle_hook_) {
            idle_action(idle);
            backoff_.wait_ended();
        }
    }
    if (idle != ProgressBackoff::Action::Spin && idle_hook_) {
        const bool sleep = idle == ProgressBackoff::Action::Sleep;
        if (idle_hook_(idle_hook_arg_, sleep ? unsigned(std::max<uint64_t>(config_.sleep_us, 1)) : 0u)) {
            (sleep ? stats_.idle_sleeps : stats_.idle_yields)++;
        } else {
            FlagGuard guard(in_progress_);
            idle_action(idle);
        }
        backoff_.wait_ended();
    }
    return status;
}

// An idle llc_progress call's yield or sleep, inside the context: the sleep
// may wait on the transports' descriptors (idle_wait).
void Context::idle_action(ProgressBackoff::Action action)
{
    if (action == ProgressBackoff::Action::Yield) {
        sched_yield();
        stats_.idle_yields++;
    } else if (action == ProgressBackoff::Action::Sleep) {
        if (idle_waiter_)
            idle_waiter_->idle_wait(config_.sleep_us);
        else
            sleep_us(config_.sleep_us);
        stats_.idle_sleeps++;
    }
}

bool Context::sends_pending() const
{
    return !completions_.empty() ||
           std::any_of(live_.begin(), live_.end(), [](const Transport *t) { return t->has_pending_sends(); });
}

void Context::note_finalize_error(int status, const std::string &message)
{
    if (finalize_status_ == LLC_OK) {
        finalize_status_ = status;
        finalize_message_ = message;
    }
}

void Context::finalize_begin()
{
    if (in_progress_)
        throw Error(LLC_ERR_STATE, "llc_finalize called from inside a handler or completion callback");
    if (drain_)
        return;
    // Finalize's own progress keeps the caller's lock (llc_set_idle_hook:
    // the hook is for llc_progress calls).
    idle_hook_ = nullptr;
    auto note = [this](int status, const std::string &message) { note_finalize_error(status, message); };
    // one round of progress (its error is noted, finalize goes on): are sends still pending?
    auto round = [this, note] {
        try {
            int rc = progress(nullptr);
            if (rc < 0)
                note(rc, last_error_);
        } catch (const Error &e) {
            note(e.status(), e.what());
        }
        return sends_pending();
    };
    drain_ = std::make_unique<FinalizeDrain>(live_, config_.finalize_timeout_ms, rank_, round, note);
}

bool Context::finalize_step()
{
    if (!drain_)
        return true;
    try {
        return drain_->step();
    } catch (const Error &e) { // a transport's flush or report failed: no more draining, the fence still
        note_finalize_error(e.status(), e.what());
        drain_.reset();
        return true;
    }
}

void Context::finalize_end()
{
    drain_.reset();
    try {
        boot_.fence();
    } catch (const Error &e) {
        note_finalize_error(e.status(), e.what());
    }
    if (finalize_status_ != LLC_OK)
        throw Error(finalize_status_, finalize_message_);
}

} // namespace llc
