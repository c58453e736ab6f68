// tagged.cpp - the tagged protocol: eager, request-to-send, pull, acknowledge.
#include "tagged/tagged.hpp"
#include "tagged/tagged_util.hpp"

#include "core/context.hpp"
#include "core/errors.hpp"
#include "support/cma_copy.hpp"
#include "transport/transport.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace llc {

void Tagged::reject(int src, const std::string &why)
{
    ctx_.counters().tag_rejected++;
    rejects_.note(ctx_.rank(), "rank " + std::to_string(src), why);
}

void Tagged::await(TreqState &r, TreqState::Await what)
{
    r.token = tokens_.issue(&r);
    r.awaiting = what;
}

void Tagged::stop_awaiting(TreqState &r)
{
    tokens_.release(r.token);
    r.token = 0;
    r.awaiting = TreqState::AwaitNone;
}

Tagged::Tagged(Context &ctx) : ctx_(ctx), pid_(int32_t(::getpid()))
{
    ctx_.register_internal_handler(kTagEager, on_eager, this);
    ctx_.register_internal_handler(kTagRts, on_rts, this);
    ctx_.register_internal_handler(kTagCts, on_cts, this);
    ctx_.register_internal_handler(kTagData, on_data, this);
    ctx_.register_internal_handler(kTagFin, on_fin, this);
    ctx_.register_internal_handler(kTagFail, on_fail, this);
    ctx_.register_internal_handler(kTagOffer, on_offer, this);
    ctx_.register_internal_handler(kTagPut, on_put, this);
    ctx_.register_internal_handler(kTagDecline, on_decline, this);
    ctx_.register_internal_handler(kTagRevoke, on_revoke, this);
    ctx_.register_internal_handler(kTagAmRts, on_am_rts, this);
    ctx_.register_internal_handler(kTagSplit, on_split, this);
    ctx_.register_internal_handler(kTagPutSplit, on_put_split, this);
    ctx_.register_internal_handler(kTagWritten, on_written, this);
}

int Tagged::send(int dest, uint32_t source, uint64_t tag, const void *buf, size_t len, unsigned flags,
                 llc_treq_t *req)
{
    if (!req)
        throw Error(LLC_ERR_INVALID, "llc_tsend: req is NULL");
    if (dest < 0 || dest >= ctx_.size())
        throw Error(LLC_ERR_INVALID, "llc_tsend: destination rank " + std::to_string(dest) +
                                         " is out of range: valid ranks are 0.." + std::to_string(ctx_.size() - 1));
    if (!buf && len > 0)
        throw Error(LLC_ERR_INVALID, "llc_tsend: buf is NULL with a length of " + std::to_string(len));
    if (flags & ~unsigned(LLC_TSEND_SYNC))
        throw Error(LLC_ERR_INVALID, "llc_tsend: unknown flags " + std::to_string(flags));
    start_request(req, TreqState::Send, const_cast<void *>(buf), len);
    TreqState &r = state_of(req);
    r.peer = dest;
    Offer o;
    if (offers_.size() && offers_.take_match(dest, tag, source, o)) {
        offers_changed(dest);
        return send_offered(dest, source, tag, buf, len, o, req); // matched already: synchronous too
    }
    bool sync = flags & LLC_TSEND_SYNC;
    TagWire w{};
    w.tag = tag;
    w.source = source;
    w.length = len;
    if (len <= ctx_.config().tag_eager_bytes) {
        if (!sync && ctx_.try_send_tagged_inline(dest, tag, source, buf, len)) {
            ctx_.counters().tag_eager_sends++;
            r.magic = 0;
            return LLC_OK;
        }
        w.flags = sync ? kWireSync : 0;
        if (sync) {
            await(r, TreqState::AwaitFin);
            w.sreq = r.token;
        }
        llc_iov_t iov{buf, len};
        int rc = ctx_.send_am(dest, kTagEager, &w, sizeof(w), &iov, 1, on_send_done, req);
        ctx_.counters().tag_eager_sends++;
        r.pending = (rc == LLC_INPROGRESS ? 1 : 0) + (sync ? 1 : 0);
    } else {
        // Request-to-send: the receiver pulls the payload once a receive
        // matches (which also makes it synchronous).
        await(r, TreqState::AwaitReply);
        w.sreq = r.token;
        w.pid = pid_;
        w.addr = uint64_t(uintptr_t(buf));
        ctx_.send_am(dest, kTagRts, &w, sizeof(w), nullptr, 0, nullptr, nullptr);
        ctx_.counters().tag_rndv_sends++;
        r.pending = 1;
    }
    if (r.pending == 0) {
        r.magic = 0;
        return LLC_OK;
    }
    return LLC_INPROGRESS;
}

int Tagged::recv(int source, int src_rank, uint64_t tag, uint64_t ignore, void *buf, size_t len, llc_treq_t *req)
{
    if (!req || (!buf && len > 0) || source < LLC_ANY_SOURCE)
        fail_with(LLC_ERR_INVALID, [&] {
            return std::string("llc_trecv: ") +
                   (!req ? "req is NULL"
                    : source < LLC_ANY_SOURCE
                        ? "source label " + std::to_string(source) + " is negative (LLC_ANY_SOURCE is -1)"
                        : "buf is NULL with a length of " + std::to_string(len));
        });
    start_request(req, TreqState::Recv, buf, len);
    TreqState &r = state_of(req);
    r.tag = tag;
    r.ignore = ignore;
    r.source = source;
    r.peer = source == LLC_ANY_SOURCE ? -1 : src_rank;
    if (Unexpected *u = matcher_.find_unexpected(tag, ignore, source, true)) {
        auto owned = matcher_.own(u);
        if (deliver(r, u->env, u->flags, u->sreq, u->data, u->rndv, u->pid, u->addr)) {
            r.magic = 0;
            return LLC_OK;
        }
        return LLC_INPROGRESS;
    }
    if (r.peer >= 0 && !failed_peers_.empty() && failed_peers_.count(r.peer)) {
        r.magic = 0;
        refuse_receive_from_failed(r.peer);
    }
    // (an eager-sized receive is never offered: no call to ask)
    bool offered = len > ctx_.config().tag_eager_bytes && may_offer(r, src_rank);
    matcher_.post(r);
    if (offered)
        offer(r, src_rank);
    return LLC_INPROGRESS;
}

bool Tagged::probe(int source, uint64_t tag, uint64_t ignore, llc_treq_t *info)
{
    Unexpected *u = matcher_.find_unexpected(tag, ignore, source, false);
    if (u && info)
        set_results(info, u->env, 0);
    return u != nullptr;
}

llc_tmsg_t *Tagged::mprobe(int source, uint64_t tag, uint64_t ignore, llc_treq_t *info)
{
    Unexpected *u = matcher_.find_unexpected(tag, ignore, source, true);
    if (u && info)
        set_results(info, u->env, 0);
    return reinterpret_cast<llc_tmsg_t *>(u);
}

int Tagged::mrecv(llc_tmsg_t *msg, void *buf, size_t len, llc_treq_t *req)
{
    if (!msg || !req)
        throw Error(LLC_ERR_INVALID, "llc_tmrecv: msg or req is NULL");
    if (!buf && len > 0)
        throw Error(LLC_ERR_INVALID, "llc_tmrecv: buf is NULL with a length of " + std::to_string(len));
    auto u = matcher_.own(reinterpret_cast<Unexpected *>(msg));
    start_request(req, TreqState::Recv, buf, len);
    TreqState &r = state_of(req);
    if (deliver(r, u->env, u->flags, u->sreq, u->data, u->rndv, u->pid, u->addr)) {
        r.magic = 0;
        return LLC_OK;
    }
    return LLC_INPROGRESS;
}

Tagged::Cancel Tagged::cancel(llc_treq_t *req)
{
    if (!req)
        throw Error(LLC_ERR_INVALID, "llc_tcancel: req is NULL");
    TreqState &r = state_of(req);
    if (r.magic != TreqState::kMagic || r.kind != TreqState::Recv || !r.posted)
        return Cancel::NotCancelled;
    if (r.awaiting == TreqState::AwaitOffer) {
        // The sender may be writing into the buffer now: ask for the offer
        // back; its Decline cancels the receive (on_decline), its Put fills it.
        if (!r.revoking) {
            r.revoking = 1;
            send_reply(r.peer, kTagRevoke, 0, r.token);
        }
        return Cancel::Pending;
    }
    matcher_.unpost(r);
    r.magic = 0;
    req->status = LLC_ERR_CANCELED;
    ctx_.counters().tag_cancelled++;
    return Cancel::Done;
}

void Tagged::set_results(llc_treq_t *req, const TagEnvelope &env, size_t received)
{
    req->src_rank = env.src_rank;
    req->source = env.source;
    req->tag = env.tag;
    req->length = size_t(env.length);
    req->received = received;
}

size_t Tagged::place_results(TreqState &r, const TagEnvelope &env)
{
    llc_treq_t *req = request_of(&r);
    size_t n = size_t(std::min<uint64_t>(env.length, r.capacity));
    set_results(req, env, n);
    if (env.length > r.capacity) [[unlikely]] {
        req->status = LLC_ERR_TRUNCATE;
        ctx_.counters().tag_truncated++;
    }
    return n;
}

void Tagged::deliver_eager(TreqState &r, const TagEnvelope &env, uint32_t flags, uint64_t sreq, const char *data)
{
    if (size_t n = place_results(r, env))
        std::memcpy(r.buf, data, n);
    if (flags & kWireSync)
        send_reply(env.src_rank, kTagFin, sreq, 0);
}

bool Tagged::deliver_rendezvous(TreqState &r, const TagEnvelope &env, uint64_t sreq, int32_t pid, uint64_t addr)
{
    llc_treq_t *req = request_of(&r);
    const size_t n = place_results(r, env);
    // within a node (and from itself) the payload can be read where it is
    const bool readable = ctx_.transport_to(env.src_rank).caps().has(CapRemoteRead);
    if (readable && split_wanted(env.src_rank, n, true)) {
        start_split_pull(r, env.src_rank, sreq, pid, addr, n); // both copy (tagged_split.cpp)
        return false;
    }
    int err = 0;
    switch (readable ? copy_by_cma(CmaDirection::ReadFromPeer, pid, addr, r.buf, n, &err) : CmaCopy::NotPermitted) {
    case CmaCopy::Done:
        ctx_.counters().tag_cma_reads++;
        send_reply(env.src_rank, kTagFin, sreq, 0);
        return true;
    case CmaCopy::Failed:
        // The sender named memory (or a process) we cannot read: this
        // receive and that send fail, nothing else does.
        req->status = LLC_ERR_PEER;
        req->received = 0;
        ctx_.counters().tag_read_failed++;
        reject(env.src_rank, "its request-to-send named " + std::to_string(env.length) + " bytes at " + hex(addr) +
                                 " in process " + std::to_string(pid) + " that could not be read (" +
                                 std::strerror(err) + "): the receive completes with LLC_ERR_PEER");
        send_reply(env.src_rank, kTagFail, sreq, 0);
        return true;
    case CmaCopy::NotPermitted:
    case CmaCopy::Pending:
        break;
    }
    await(r, TreqState::AwaitData);
    send_reply(env.src_rank, kTagCts, sreq, r.token); // the sender streams it (on_data)
    return false;
}

CmaCopy Tagged::copy_by_cma(CmaDirection dir, int32_t pid, uint64_t addr, void *local, size_t n, int *errno_out) const
{
    const Config &cfg = ctx_.config();
    if (!cfg.cma_enabled || cfg.cma_simulate_eperm)
        return CmaCopy::NotPermitted;
    switch (dir == CmaDirection::WriteToPeer ? cma_write(pid, addr, local, n, errno_out)
                                             : cma_read(pid, addr, local, n, errno_out)) {
    case CmaResult::Done:
        return CmaCopy::Done;
    case CmaResult::NotPermitted:
        return CmaCopy::NotPermitted;
    case CmaResult::NoProcess:
    case CmaResult::BadAddress:
        break; // an address or length the peer does not have, no such process, a copy that stopped part-way
    }
    return CmaCopy::Failed;
}

void Tagged::send_reply(int dest, unsigned id, uint64_t sreq, uint64_t rreq)
{
    TagReply reply{sreq, rreq};
    ctx_.send_am(dest, id, &reply, sizeof(reply), nullptr, 0, nullptr, nullptr);
}

TreqState *Tagged::request_awaiting(int src, uint64_t token, unsigned accepted)
{
    TreqState *r = tokens_.find(token);
    if (!r)
        return nullptr;
    // (an offered receive knows its sender; another receive, the sender of
    // the message it matched)
    int peer = r->kind == TreqState::Send || r->awaiting == TreqState::AwaitOffer ? r->peer : request_of(r)->src_rank;
    return (accepted & bit(TreqState::Await(r->awaiting))) && peer == src ? r : nullptr;
}

TreqState *Tagged::awaiting_request(int src, uint64_t token, unsigned accepted, const char *what)
{
    if (TreqState *r = request_awaiting(src, token, accepted))
        return r;
    if (!tokens_.find(token))
        reject(src, std::string("a tagged ") + what + " naming token " + hex(token) +
                        ", no request of ours (forged, or the request has completed)");
    else
        reject(src, std::string("a tagged ") + what + " for a request of ours that does not wait for one from rank " +
                        std::to_string(src));
    return nullptr;
}

void Tagged::finish(TreqState &r, int status, bool call_back)
{
    // (A request holding a token cannot complete: each await ends in stop_awaiting first.)
    llc_treq_t *req = request_of(&r);
    r.magic = 0;
    r.kind = TreqState::Free;
    req->status = status;
    if (call_back && req->cb)
        req->cb(req);
}

void Tagged::send_event_done(TreqState &r, int status)
{
    llc_treq_t *req = request_of(&r);
    if (status != LLC_OK && req->status == LLC_OK)
        req->status = status;
    if (--r.pending == 0)
        finish(r, req->status, true);
}

void Tagged::on_send_done(void *req, int status)
{
    TreqState &r = state_of(static_cast<llc_treq_t *>(req));
    if (r.magic == TreqState::kMagic && r.kind == TreqState::Send && r.pending > 0)
        send_event_done(r, status);
}

void Tagged::arrived(int src, const TagWire &w, const void *data, size_t data_len, bool rndv)
{
    if (!rndv && data_len != w.length) {
        reject_with(src, [&] {
            return "a tagged message that declares " + std::to_string(w.length) + " bytes and carries " +
                   std::to_string(data_len);
        });
        return;
    }
    TagEnvelope env{w.tag, w.source, src, w.length};
    if (TreqState *r = matcher_.take_posted(env)) {
        if (r->awaiting == TreqState::AwaitOffer) {
            // It crossed the offer: the sender declines the offer (it had
            // sent more than the offer had seen), and the Decline finds
            // the token released (on_decline ignores it).
            stop_awaiting(*r);
            r->revoking = 0;
        }
        if (deliver(*r, env, w.flags, w.sreq, static_cast<const char *>(data), rndv, w.pid, w.addr))
            finish(*r, request_of(r)->status, true);
        return;
    }
    Unexpected *u = matcher_.new_unexpected(rndv ? 0 : data_len);
    u->env = env;
    u->flags = w.flags;
    u->sreq = w.sreq;
    u->rndv = rndv;
    u->pid = w.pid;
    u->addr = w.addr;
    if (!rndv && data_len)
        std::memcpy(u->data, data, data_len);
    matcher_.add_unexpected(u);
    ctx_.counters().tag_unexpected++;
}

void Tagged::on_eager(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *data,
                      size_t data_len)
{
    auto *t = static_cast<Tagged *>(self);
    TagWire w;
    if (t->header_ok(hdr, hdr_len, src, "eager", w))
        t->arrived(src, w, data, data_len, false);
}

void Tagged::on_rts(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *, size_t)
{
    auto *t = static_cast<Tagged *>(self);
    TagWire w;
    if (t->header_ok(hdr, hdr_len, src, "request-to-send", w))
        t->arrived(src, w, nullptr, 0, true);
}

void Tagged::on_cts(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *, size_t)
{
    auto *t = static_cast<Tagged *>(self);
    TagReply in;
    if (!t->header_ok(hdr, hdr_len, src, "clear-to-send", in))
        return;
    TreqState *r = t->awaiting_request(src, in.sreq, bit(TreqState::AwaitReply), "clear-to-send");
    if (!r)
        return;
    t->stop_awaiting(*r);
    if (AmSend *s = t->am_send_of(*r)) {
        t->stream_am(src, *r, *s, in.rreq); // a large active message the receiver may not read
        return;
    }
    TagReply out{0, in.rreq};
    llc_iov_t iov{r->buf, size_t(r->capacity)};
    int rc = t->ctx_.send_am(src, kTagData, &out, sizeof(out), &iov, 1, on_send_done, request_of(r));
    if (rc == LLC_OK)
        t->send_event_done(*r, LLC_OK); // copied out already: the send is complete
}

void Tagged::on_data(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *data,
                     size_t data_len)
{
    auto *t = static_cast<Tagged *>(self);
    TagReply in;
    if (!t->header_ok(hdr, hdr_len, src, "data", in))
        return;
    TreqState *r = t->awaiting_request(src, in.rreq, bit(TreqState::AwaitData), "data");
    if (!r)
        return;
    llc_treq_t *req = request_of(r);
    if (data_len != req->length) {
        t->reject(src, "tagged data of " + std::to_string(data_len) + " bytes for a message of " +
                           std::to_string(req->length));
        return; // the receive keeps waiting for the right data
    }
    t->stop_awaiting(*r);
    if (req->received && data != r->buf) // (else received in place: data_destination)
        std::memcpy(r->buf, data, req->received);
    else if (req->received)
        t->ctx_.counters().tag_data_in_place++;
    t->finish(*r, req->status, true);
}

char *Tagged::data_destination(int src, const void *hdr, size_t hdr_len, uint64_t len)
{
    TagReply in;
    if (hdr_len != sizeof(in))
        return nullptr;
    std::memcpy(&in, hdr, sizeof(in));
    TreqState *r = request_awaiting(src, in.rreq, bit(TreqState::AwaitData));
    if (!r || r->kind != TreqState::Recv)
        return nullptr;
    const llc_treq_t *req = request_of(r);
    if (req->length != len || req->received != len || len == 0)
        return nullptr; // on_data rejects it or copies a truncated prefix
    return static_cast<char *>(r->buf);
}

void Tagged::on_fin(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *, size_t)
{
    auto *t = static_cast<Tagged *>(self);
    TagReply in;
    if (!t->header_ok(hdr, hdr_len, src, "acknowledgement", in))
        return;
    TreqState *r = t->awaiting_request(src, in.sreq, bit(TreqState::AwaitReply) | bit(TreqState::AwaitFin),
                                       "acknowledgement");
    if (!r)
        return;
    t->uncount_answer(*r);
    t->stop_awaiting(*r);
    t->send_event_done(*r, LLC_OK);
}

void Tagged::on_fail(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *, size_t)
{
    auto *t = static_cast<Tagged *>(self);
    TagReply in;
    if (!t->header_ok(hdr, hdr_len, src, "read failure", in))
        return;
    TreqState *r = t->awaiting_request(src, in.sreq, bit(TreqState::AwaitReply), "read failure");
    if (!r)
        return;
    t->uncount_answer(*r);
    t->stop_awaiting(*r);
    t->send_event_done(*r, LLC_ERR_PEER);
}


} // namespace llc
