// context.cpp - context setup, sending, progress and finalize.
#include "core/context.hpp"

#include "core/clock.hpp"
#include "core/errors.hpp"
#include "kvs/kvs.hpp"
#include "core/net_selection.hpp"
#include "core/open_inter_node.hpp"
#include "transport/self/self_transport.hpp"
#include "transport/shm/shm_transport.hpp"
#include "tagged/tagged.hpp"

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <optional>

namespace llc {

namespace {

std::string range_text(int size) { return "0.." + std::to_string(size - 1); }

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
    : handle_(handle), boot_(params.boot), backoff_(0, 0)
{
    validate(params);
    config_ = Config::from_environment();
    backoff_ = ProgressBackoff(config_.spin_count, config_.idle_sleep_us);
    rank_ = params.rank;
    size_ = params.size;
    job_id_ = params.job_id;
    // Leader: creates the node's shared table now; the others map it in create_transports.
    node_map_ = NodeMap(params.node_of_rank, size_, rank_, job_id_, config_.node_shared);
    next_send_seq_.assign(size_, 0);
    next_recv_seq_.assign(size_, 0);
    self_ = std::make_unique<SelfTransport>(*this);
    create_transports();
    tagged_ = std::make_unique<Tagged>(*this);
}

Context::~Context() = default;

void Context::validate(const llc_init_params_t &p)
{
    auto invalid = [](const std::string &what) { throw Error(LLC_ERR_INVALID, "llc_init: " + what); };
    if (p.api_version != LLC_API_VERSION)
        invalid("api_version is " + std::to_string(p.api_version) + " but this libllc implements " +
                std::to_string(LLC_API_VERSION));
    if (p.size < 1)
        invalid("size must be at least 1 (got " + std::to_string(p.size) + ")");
    if (p.rank < 0 || p.rank >= p.size)
        invalid("rank " + std::to_string(p.rank) + " is out of range: valid ranks are " + range_text(p.size));
    if (!p.node_of_rank)
        invalid("node_of_rank is NULL (it must hold `size` node indices)");
    for (int r = 0; r < p.size; r++)
        if (p.node_of_rank[r] < 0)
            invalid("node_of_rank[" + std::to_string(r) + "] is negative (" +
                    std::to_string(p.node_of_rank[r]) + ")");
    if (!p.job_id || !*p.job_id)
        invalid("job_id is NULL or empty");
    size_t job_len = 0;
    while (job_len <= 64 && p.job_id[job_len])
        job_len++;
    if (job_len > 64)
        invalid("job_id is longer than 64 bytes");
    if (!p.boot.put || !p.boot.get || !p.boot.fence)
        invalid("the bootstrap's put, get and fence callbacks are required");
}

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
    // Local setup may fail on one process only; keep fencing so the others
    // are not left hanging, and report the failure afterwards.
    std::optional<Error> failure;
    try {
        const NetChoice net = choose_inter_node(config_, rank_); // before any transport: it decides the inter-node one
        if (local_ranks.size() > 1)
            shm_ = std::make_unique<ShmTransport>(*this, job_id_, local_ranks);
        if (any_remote) {
            kvs_ = std::make_unique<AddressBook>(config_, boot_, rank_, node_map_, job_id_);
            kvs_->start(); // dist: a node leader's KVS server, its address through the bootstrap
            net_ = open_inter_node(*this, config_, net, local_ranks);
        }
    } catch (const Error &e) {
        failure = e;
    }
    boot_.fence();
    if (!failure && net_) {
        try {
            net_->attach(); // e.g. LLC_UDP_SHARED_RECV=1: the node leader's socket, passed to the others
        } catch (const Error &e) {
            failure = e;
        }
    }
    if (!failure && kvs_) {
        try {
            kvs_->commit(); // dist: this process's entry, at its owner (the servers are known now)
        } catch (const Error &e) {
            failure = e;
        }
    }
    if (!failure) {
        try {
            node_map_.attach(); // the leader's table (created before the first fence)
        } catch (const Error &e) {
            failure = e;
        }
    }
    if (!failure && shm_) {
        try {
            shm_->attach_peers();
        } catch (const Error &e) {
            failure = e;
        }
    }
    boot_.fence();
    node_map_.release_name();
    if (net_)
        net_->release_names();
    if (shm_)
        shm_->unlink_own_segment();
    if (failure)
        throw *failure;
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
    auto invalid = [](const std::string &what) { throw Error(LLC_ERR_INVALID, "llc_am_send: " + what); };
    if (dest < 0 || dest >= size_)
        invalid("destination rank " + std::to_string(dest) + " is out of range: valid ranks are " +
                range_text(size_));
    if (id >= LLC_AM_MAX_HANDLERS)
        invalid("handler id " + std::to_string(id) + " is out of range: valid ids are 0.." +
                std::to_string(LLC_AM_MAX_HANDLERS - 1));
    if (hdr_len > LLC_AM_HDR_MAX)
        invalid("header of " + std::to_string(hdr_len) + " bytes exceeds LLC_AM_HDR_MAX (" +
                std::to_string(LLC_AM_HDR_MAX) + ")");
    if (hdr_len > 0 && !hdr)
        invalid("hdr is NULL but hdr_len is " + std::to_string(hdr_len));
    if (iovcnt < 0 || (iovcnt > 0 && !iov))
        invalid("iov is NULL or iovcnt is negative");
    for (int i = 0; i < iovcnt; i++)
        if (!iov[i].base && iov[i].len > 0)
            invalid("iov[" + std::to_string(i) + "].base is NULL with a non-zero length");
    return send_am(dest, id, hdr, hdr_len, iov, iovcnt, cb, cb_arg);
}

int Context::send_am(int dest, unsigned id, const void *hdr, size_t hdr_len, const llc_iov_t *iov, int iovcnt,
                     llc_completion_t cb, void *cb_arg)
{
    if (dest != rank_ && shm_ && node_map_.node_of(dest) == node_map_.my_node()) {
        // fast path: small records go straight into the peer's ring
        WireHeader w = make_wire_header(Kind::Am, rank_, id, next_send_seq_[dest]);
        w.hdr_len = uint32_t(hdr_len);
        for (int i = 0; i < iovcnt; i++)
            w.payload_len += iov[i].len;
        if (shm_->try_send_inline(dest, w, hdr, iov, iovcnt)) {
            next_send_seq_[dest]++;
            stats_.shm_msgs++;
            stats_.msgs_sent++;
            stats_.bytes_sent += w.payload_len;
            return LLC_OK;
        }
    }
    auto msg = OutgoingMessage::make_am(rank_, id, next_send_seq_[dest], hdr, hdr_len, iov, iovcnt, cb, cb_arg);
    uint64_t bytes = msg->payload_len();
    int rc;
    if (dest == rank_) {
        rc = self_->send(std::move(msg));
        stats_.self_msgs++;
    } else if (node_map_.node_of(dest) == node_map_.my_node()) {
        rc = shm_->send(dest, std::move(msg));
        stats_.shm_msgs++;
    } else {
        rc = send_remote(dest, std::move(msg));
    }
    next_send_seq_[dest]++;
    stats_.msgs_sent++;
    stats_.bytes_sent += bytes;
    return rc;
}

bool Context::try_send_tagged_inline(int dest, uint64_t tag, uint32_t source, const void *buf, size_t len)
{
    if (dest == rank_ || !shm_ || node_map_.node_of(dest) != node_map_.my_node())
        return false;
    ShmTagHeader h{tag, source, uint32_t(next_send_seq_[dest])};
    if (!shm_->try_send_tagged(dest, h, buf, len))
        return false;
    next_send_seq_[dest]++;
    stats_.shm_msgs++;
    stats_.msgs_sent++;
    stats_.bytes_sent += len;
    return true;
}

int Context::send_remote(int dest, std::unique_ptr<OutgoingMessage> msg)
{
    return net_->send(dest, std::move(msg));
}


llc_stats_t Context::stats() const
{
    llc_stats_t st = stats_;
    if (net_)
        net_->add_stats(st);
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
    const HandlerSlot &h = handlers_[wire.handler];
    if (!h.fn) {
        report_error(LLC_ERR_INVALID,
                     "dropped a message from rank " + std::to_string(src) + " for handler id " +
                         std::to_string(wire.handler) + " (" + std::to_string(data_len) +
                         " payload bytes): no handler is registered for that id on rank " +
                         std::to_string(rank_) + "; register handlers before peers can send");
        return;
    }
    h.fn(handle_, h.arg, src, hdr, wire.hdr_len, data, data_len);
}

char *Context::payload_destination(int src, const WireHeader &wire, const void *hdr)
{
    if (Kind(wire.kind) != Kind::Am || wire.handler != kTagData || !tagged_)
        return nullptr;
    return tagged_->data_destination(src, hdr, wire.hdr_len, wire.payload_len);
}

void Context::deliver_tagged_chunk(int src, const char *chunk, size_t len)
{
    ShmTagHeader h;
    if (len < sizeof(h))
        throw Error(LLC_ERR_PEER, "protocol error: a tagged message chunk of " + std::to_string(len) +
                                      " bytes from rank " + std::to_string(src));
    std::memcpy(&h, chunk, sizeof(h));
    take_sequence(src, h.seq, 0xffffffffu); // the chunk carries the low 32 bits
    size_t data_len = len - sizeof(h);
    stats_.msgs_received++;
    stats_.bytes_received += data_len;
    tagged_->arrived_eager(src, h.tag, h.source, chunk + sizeof(h), data_len);
}

void Context::skip_message(int src, const WireHeader &wire) { take_sequence(src, wire.seq, ~uint64_t(0)); }

void Context::take_sequence(int src, uint64_t got, uint64_t bits)
{
    uint64_t &expected = next_recv_seq_[src];
    if (((got ^ expected) & bits) != 0)
        throw Error(LLC_ERR_PEER, "message order violated on the stream from rank " + std::to_string(src) +
                                      ": expected sequence number " + std::to_string(expected) +
                                      (bits == ~uint64_t(0) ? "" : " (compared in its low bits)") + ", got " +
                                      std::to_string(got) + " (libllc bug)");
    expected++;
}

void Context::report_error(int status, const std::string &message)
{
    if (progress_status_ == LLC_OK) {
        progress_status_ = status;
        progress_message_ = message;
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
    if (in_progress_)
        throw Error(LLC_ERR_STATE, "llc_progress called from inside a handler or completion callback");
    FlagGuard guard(in_progress_);
    progress_status_ = LLC_OK;
    progress_message_.clear();

    bool did = self_->progress();
    if (shm_)
        did |= shm_->progress();
    if (net_)
        did |= net_->progress();
    if (!completions_.empty())
        did |= run_completions();

    if (did) {
        backoff_.on_activity();
    } else {
        switch (backoff_.on_idle()) {
        case ProgressBackoff::Action::Spin:
            break;
        case ProgressBackoff::Action::Yield:
            sched_yield();
            stats_.idle_yields++;
            break;
        case ProgressBackoff::Action::Sleep:
            idle_sleep();
            stats_.idle_sleeps++;
            break;
        }
    }
    if (progressed)
        *progressed = did ? 1 : 0;
    if (progress_status_ != LLC_OK)
        last_error_ = progress_message_;
    return progress_status_;
}

void Context::idle_sleep()
{
    if (net_) {
        net_->idle_wait(config_.sleep_us);
        return;
    }
    sleep_us(config_.sleep_us);
}

bool Context::sends_pending() const
{
    return self_->has_pending() || (shm_ && shm_->has_pending_sends()) ||
           (net_ && net_->has_pending_sends()) ||
           !completions_.empty();
}

bool Context::incoming_quiet() const
{
    return (!shm_ || shm_->incoming_quiet()) && (!net_ || net_->incoming_quiet());
}

void Context::finalize()
{
    if (in_progress_)
        throw Error(LLC_ERR_STATE, "llc_finalize called from inside a handler or completion callback");
    int first_status = LLC_OK;
    std::string first_message;
    auto note = [&](int status, const std::string &message) {
        if (first_status == LLC_OK) {
            first_status = status;
            first_message = message;
        }
    };

    // one progress call; its error is noted, finalize goes on
    auto progress_noting = [&] {
        try {
            int rc = progress(nullptr);
            if (rc < 0)
                note(rc, last_error_);
        } catch (const Error &e) {
            note(e.status(), e.what());
        }
    };

    uint64_t deadline = monotonic_us() + config_.finalize_timeout_ms * 1000;
    // Hybrid: finish the switches in flight (no new ones), so that nothing is
    // sent on a path after its goodbye.
    if (net_) {
        net_->freeze();
        while (net_->switching() && monotonic_us() <= deadline)
            progress_noting();
    }
    if (shm_)
        shm_->announce_finalizing();
    if (net_)
        net_->say_goodbye(); // queued behind any data still pending
    for (;;) {
        progress_noting();
        bool pending = sends_pending();
        if (shm_)
            shm_->mark_drained_where_idle();
        if (!pending && incoming_quiet())
            break;
        if (monotonic_us() > deadline && !pending && shm_ && shm_->awaits_a_peer_not_finalizing()) {
            // A local peer that is still running (computing, writing its
            // output) has not begun to finalize: not a failure, however long
            // it takes; the time limit counts from when it does.
            deadline = monotonic_us() + config_.finalize_timeout_ms * 1000;
            continue;
        }
        if (monotonic_us() > deadline) {
            std::string peers = net_ ? net_->pending_report() : std::string();
            std::string msg = std::string("llc_finalize: gave up after ") +
                              std::to_string(config_.finalize_timeout_ms) + " ms (LLC_FINALIZE_TIMEOUT_MS) with " +
                              (pending ? "sends still pending (a peer is not progressing or is gone)"
                                       : "peers still sending to this process") +
                              (peers.empty() ? std::string() : " [" + peers + "]");
            // The caller may truncate the message (MPICH keeps about 256
            // characters): the whole of it, with the state of each peer, on stderr.
            std::fprintf(stderr, "llc rank %d: %s\n", rank_, msg.c_str());
            note(LLC_ERR_TIMEOUT, msg);
            break;
        }
    }
    try {
        boot_.fence();
    } catch (const Error &e) {
        note(e.status(), e.what());
    }
    if (first_status != LLC_OK)
        throw Error(first_status, first_message);
}

} // namespace llc
