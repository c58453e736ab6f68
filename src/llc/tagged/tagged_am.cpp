// tagged_am.cpp - large active messages by the tagged layer's rendezvous
// (doc/libllc-tagged.md, "One large-message protocol"): the payload stays
// where the sender keeps it, announced by an AmRts record; the receiver
// reads it (CMA here; keyed reads, e.g. RDMA READ, in tagged_am_keyed.cpp),
// runs the handler and answers Fin, or Fail when it named memory that cannot
// be read; when reading is not permitted it answers Cts, the sender streams
// the payload in a Data record, and the receiver holds back the sender's
// later records until it has come (Context::hold_records_from), so active
// messages keep their order.
#include "tagged/tagged.hpp"
#include "tagged/am_spans.hpp"
#include "tagged/tagged_util.hpp"

#include "core/context.hpp"
#include "core/errors.hpp"
#include "support/cma_copy.hpp"
#include "transport/transport.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <string>

namespace llc {

namespace {
// The buffer large active messages are read into stays between messages up
// to this size (one per context): a stream of accumulates of a few MiB
// (MPIDIG's, for one-sided operations) then reads into memory already
// mapped, where a buffer made for each would cost a page fault per 4 KiB
// (10-15 us each on some virtual machines: 6-8 ms per 2 MiB).
constexpr size_t kKeepAmBufferBytes = size_t(8) << 20;
} // namespace

bool Tagged::am_by_rendezvous(int dest, size_t len) const
{
    const Config &cfg = ctx_.config();
    if (dest == ctx_.rank() || am_streamed_to_.count(dest) != 0)
        return false;
    const TransportCaps &caps = ctx_.transport_to(dest).caps();
    if (caps.has(CapKeyedRead))
        return cfg.verbs_rndv_bytes > 0 && len >= cfg.verbs_rndv_bytes;
    return cfg.cma_enabled && len >= cfg.cma_threshold && caps.has(CapRemoteRead);
}

int Tagged::send_am(int dest, unsigned handler, const void *hdr, size_t hdr_len, const llc_iov_t *iov, int iovcnt,
                    llc_completion_t cb, void *cb_arg)
{
    auto s = std::make_unique<AmSend>();
    s->owner = this;
    s->iov.assign(iov, iov + iovcnt);
    s->cb = cb;
    s->cb_arg = cb_arg;
    AmRtsWire w{};
    // The record's payload, the caller's header and then the spans, kept
    // with the send: a queued record refers to it until it is written.
    s->record.assign(static_cast<const char *>(hdr), static_cast<const char *>(hdr) + hdr_len);
    if (ctx_.transport_to(dest).caps().has(CapKeyedRead)) {
        if (!expose_am(dest, *s, w)) // (registration failed: copied as any message)
            return ctx_.send_am(dest, handler, hdr, hdr_len, iov, iovcnt, cb, cb_arg);
    } else {
        for (const llc_iov_t &v : s->iov) {
            RemoteSpan span{uint64_t(uintptr_t(v.base)), uint64_t(v.len)};
            const char *b = reinterpret_cast<const char *>(&span);
            s->record.insert(s->record.end(), b, b + sizeof(span));
            w.length += v.len;
        }
    }
    llc_treq_t *req = &s->req;
    start_request(req, TreqState::Send, nullptr, w.length);
    req->cb = on_am_send_done;
    req->user = s.get();
    TreqState &r = state_of(req);
    r.peer = dest;
    await(r, TreqState::AwaitReply);
    w.sreq = r.token;
    w.pid = pid_;
    w.handler = handler;
    w.hdr_len = uint32_t(hdr_len);
    w.spans = uint32_t(iovcnt);
    llc_iov_t rest{s->record.data(), s->record.size()};
    try {
        ctx_.send_am(dest, kTagAmRts, &w, sizeof(w), &rest, 1, nullptr, nullptr);
    } catch (...) {
        stop_awaiting(r);
        throw;
    }
    r.pending = 1;
    am_sends_.emplace(req, std::move(s));
    return LLC_INPROGRESS;
}

void Tagged::on_am_send_done(llc_treq_t *req)
{
    auto *s = static_cast<AmSend *>(req->user);
    Tagged *t = s->owner;
    if (req->status == LLC_OK && !s->streamed && !s->exposure)
        t->ctx_.counters().cma_msgs++;
    if (s->cb)
        s->cb(s->cb_arg, req->status);
    t->am_sends_.erase(req); // (destroys s)
}

Tagged::AmSend *Tagged::am_send_of(TreqState &r)
{
    if (am_sends_.empty())
        return nullptr;
    auto it = am_sends_.find(request_of(&r));
    return it == am_sends_.end() ? nullptr : it->second.get();
}

void Tagged::stream_am(int dest, TreqState &r, AmSend &s, uint64_t rreq)
{
    // The receiver may not read us (ptrace rules, a seccomp filter): later
    // large messages to it are streamed from the start.  (Keyed: it had no
    // landing buffer for this one; the next may find one.)
    s.streamed = true;
    if (!s.exposure)
        am_streamed_to_.insert(dest);
    ctx_.counters().msgs_received--; // (the Cts: see answer())
    TagReply out{0, rreq};
    int rc =
        ctx_.send_am(dest, kTagData, &out, sizeof(out), s.iov.data(), int(s.iov.size()), on_send_done, request_of(&r));
    ctx_.counters().msgs_sent--;
    if (rc == LLC_OK)
        send_event_done(r, LLC_OK);
}

void Tagged::answer(int dest, unsigned id, uint64_t sreq, uint64_t rreq)
{
    // A large active message counts as one message (msgs_sent and
    // msgs_received, llc.h) on each side: its answers, and the Data of one
    // streamed after all, are the protocol's own records (uncount_answer).
    send_reply(dest, id, sreq, rreq);
    ctx_.counters().msgs_sent--;
}

void Tagged::uncount_answer(TreqState &r)
{
    if (am_send_of(r))
        ctx_.counters().msgs_received--;
}

void Tagged::peer_failed(int dest)
{
    // Large active messages to it wait for a reply that will not come.
    std::vector<TreqState *> dead;
    for (auto &e : am_sends_) {
        TreqState &r = state_of(e.first);
        if (r.peer == dest && r.awaiting == TreqState::AwaitReply)
            dead.push_back(&r);
    }
    for (TreqState *r : dead) {
        stop_awaiting(*r);
        r->pending = 1;
        send_event_done(*r, LLC_ERR_PEER);
    }
    split_peer_failed(dest);
    fail_requests_for(dest);
}

void Tagged::on_am_rts(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *data,
                       size_t data_len)
{
    auto *t = static_cast<Tagged *>(self);
    AmRtsWire w;
    if (t->header_ok(hdr, hdr_len, src, "large active message", w))
        t->arrived_am(src, w, static_cast<const char *>(data), data_len);
}

void Tagged::arrived_am(int src, const AmRtsWire &w, const char *data, size_t data_len)
{
    if (w.flags & kAmKeyed) {
        arrived_am_keyed(src, w, data, data_len);
        return;
    }
    const std::vector<RemoteSpan> spans = am_spans<RemoteSpan>(w, data, data_len);
    const std::string bad = am_malformed(w, data_len, spans);
    if (!bad.empty()) {
        // A record no libllc sends: not delivered; its sender's send (if
        // the token names one) fails.
        reject(src, "a large active message with " + bad);
        answer(src, kTagFail, w.sreq, 0);
        return;
    }
    const Config &cfg = ctx_.config();
    const size_t len = size_t(w.length);
    const int32_t sender_pid = ctx_.transport_to(src).peer_pid(src);
    int err = 0;
    char *buf = nullptr;
    CmaResult got = CmaResult::NotPermitted;
    if (!cfg.cma_enabled || cfg.cma_simulate_eperm) {
        got = CmaResult::NotPermitted;
    } else if (w.pid != sender_pid) {
        got = CmaResult::NoProcess;
        err = ESRCH;
    } else {
        // (nested: a handler made progress, the buffer is in use below us)
        const bool nested = am_reading_;
        std::vector<char> own;
        try {
            buf = nested ? (own.resize(len), own.data()) : am_buffer_.reserve(len);
            got = cma_read_spans(w.pid, spans.data(), spans.size(), buf, len, &err);
        } catch (const std::bad_alloc &) {
            got = CmaResult::BadAddress; // no memory for what it claims
            err = ENOMEM;
        }
        if (got == CmaResult::Done && nested) {
            answer(src, kTagFin, w.sreq, 0);
            ctx_.run_handler(src, w.handler, data, w.hdr_len, buf, len);
            return;
        }
    }
    switch (got) {
    case CmaResult::Done: {
        answer(src, kTagFin, w.sreq, 0);
        am_reading_ = true;
        try {
            ctx_.run_handler(src, w.handler, data, w.hdr_len, buf, len);
        } catch (...) {
            am_reading_ = false;
            throw;
        }
        am_reading_ = false;
        am_buffer_.shrink_if_above(kKeepAmBufferBytes);
        return;
    }
    case CmaResult::NotPermitted:
        try {
            receive_am_streamed(src, w, data);
            return;
        } catch (const std::bad_alloc &) {
            err = ENOMEM; // no memory for what it claims
        }
        break;
    case CmaResult::NoProcess:
    case CmaResult::BadAddress:
        break;
    }
    // The sender named memory (or a process) we cannot read: this message
    // is not delivered and its send fails, nothing else does.
    ctx_.counters().cma_read_failed++;
    std::string why =
        w.pid != sender_pid
            ? "names process " + std::to_string(w.pid) + ", not the sender (pid " + std::to_string(sender_pid) + ")"
            : "names " + std::to_string(len) + " bytes in " + std::to_string(spans.size()) + " span(s) from " +
                  (spans.empty() ? std::string("nowhere") : hex(spans[0].addr)) + " that could not be read (" +
                  std::strerror(err) + ")";
    am_read_rejects_.note(ctx_.rank(), "rank " + std::to_string(src),
                          "its large active message " + why + ": not delivered, its send fails with LLC_ERR_PEER");
    answer(src, kTagFail, w.sreq, 0);
}

void Tagged::receive_am_streamed(int src, const AmRtsWire &w, const char *user_hdr)
{
    auto a = std::make_unique<AmRecv>();
    a->owner = this;
    a->handler = w.handler;
    a->hdr.assign(user_hdr, user_hdr + w.hdr_len);
    a->buf.resize(size_t(w.length));
    llc_treq_t *req = &a->req;
    start_request(req, TreqState::Recv, a->buf.data(), w.length);
    req->cb = on_am_recv_done;
    req->user = a.get();
    set_results(req, TagEnvelope{0, 0, src, w.length}, size_t(w.length));
    TreqState &r = state_of(req);
    await(r, TreqState::AwaitData);
    am_recvs_.emplace(req, std::move(a));
    ctx_.hold_records_from(src, r.token); // later records wait for this one's data
    answer(src, kTagCts, w.sreq, r.token);
}

void Tagged::on_am_recv_done(llc_treq_t *req)
{
    auto *a = static_cast<AmRecv *>(req->user);
    Tagged *t = a->owner;
    const int src = req->src_rank;
    auto owned = std::move(t->am_recvs_.at(req));
    t->am_recvs_.erase(req);
    t->ctx_.counters().msgs_received--; // (its Data: see answer())
    if (req->status == LLC_OK)
        t->ctx_.run_handler(src, a->handler, a->hdr.data(), a->hdr.size(), a->buf.data(), a->buf.size());
    t->ctx_.release_records_from(src);
}

} // namespace llc
