// context.cpp - context setup, sending, progress and finalize.
#include "context.hpp"

#include "clock.hpp"
#include "errors.hpp"
#include "self_transport.hpp"
#include "shm_transport.hpp"
#include "tcp_transport.hpp"

#include <sched.h>
#include <time.h>

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
    node_of_rank_.assign(params.node_of_rank, params.node_of_rank + params.size);
    job_id_ = params.job_id;
    next_send_seq_.assign(size_, 0);
    next_recv_seq_.assign(size_, 0);
    self_ = std::make_unique<SelfTransport>(*this);
    create_transports();
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
        if (node_of_rank_[r] == node_of_rank_[rank_])
            local_ranks.push_back(r);
        else
            any_remote = true;
    }
    // Local setup may fail on one process only; keep fencing so the others
    // are not left hanging, and report the failure afterwards.
    std::optional<Error> failure;
    try {
        if (local_ranks.size() > 1)
            shm_ = std::make_unique<ShmTransport>(*this, job_id_, local_ranks);
        if (any_remote) {
            tcp_ = std::make_unique<TcpTransport>(*this);
            tcp_->publish_address();
        }
    } catch (const Error &e) {
        failure = e;
    }
    boot_.fence();
    if (!failure && shm_) {
        try {
            shm_->attach_peers();
        } catch (const Error &e) {
            failure = e;
        }
    }
    boot_.fence();
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

    auto msg = OutgoingMessage::make_am(rank_, id, next_send_seq_[dest], hdr, hdr_len, iov, iovcnt, cb, cb_arg);
    uint64_t bytes = msg->payload_len();
    int rc;
    if (dest == rank_) {
        rc = self_->send(std::move(msg));
        stats_.self_msgs++;
    } else if (node_of_rank_[dest] == node_of_rank_[rank_]) {
        rc = shm_->send(dest, std::move(msg));
        stats_.shm_msgs++;
    } else {
        rc = tcp_->send(dest, std::move(msg));
        stats_.tcp_msgs++;
    }
    next_send_seq_[dest]++;
    stats_.msgs_sent++;
    stats_.bytes_sent += bytes;
    return rc;
}

void Context::deliver(int src, const WireHeader &wire, const void *hdr, const void *data, size_t data_len)
{
    if (wire.seq != next_recv_seq_[src])
        throw Error(LLC_ERR_PEER, "message order violated on the stream from rank " + std::to_string(src) +
                                      ": expected sequence number " + std::to_string(next_recv_seq_[src]) +
                                      ", got " + std::to_string(wire.seq) + " (libllc bug)");
    next_recv_seq_[src]++;
    stats_.msgs_received++;
    stats_.bytes_received += data_len;
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
    if (tcp_)
        did |= tcp_->progress();
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
    if (tcp_) {
        tcp_->wait_for_activity(config_.sleep_us);
        return;
    }
    timespec ts{time_t(config_.sleep_us / 1000000), long(config_.sleep_us % 1000000) * 1000};
    nanosleep(&ts, nullptr);
}

bool Context::sends_pending() const
{
    return self_->has_pending() || (shm_ && shm_->has_pending_sends()) ||
           (tcp_ && tcp_->has_pending_sends()) || !completions_.empty();
}

bool Context::incoming_quiet() const
{
    return (!shm_ || shm_->incoming_quiet()) && (!tcp_ || tcp_->incoming_quiet());
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

    if (tcp_)
        tcp_->say_goodbye(); // queued behind any data still pending
    uint64_t deadline = monotonic_us() + config_.finalize_timeout_ms * 1000;
    for (;;) {
        try {
            int rc = progress(nullptr);
            if (rc < 0)
                note(rc, last_error_);
        } catch (const Error &e) {
            note(e.status(), e.what());
        }
        bool pending = sends_pending();
        if (shm_)
            shm_->mark_drained_where_idle();
        if (!pending && incoming_quiet())
            break;
        if (monotonic_us() > deadline) {
            note(LLC_ERR_TIMEOUT,
                 std::string("llc_finalize: gave up after ") + std::to_string(config_.finalize_timeout_ms) +
                     " ms (LLC_FINALIZE_TIMEOUT_MS) with " +
                     (pending ? "sends still pending (a peer is not progressing or is gone)"
                              : "peers still sending to this process") );
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
