// tagged.cpp - the tagged protocol: eager, request-to-send, pull, acknowledge.
#include "tagged.hpp"

#include "context.hpp"
#include "errors.hpp"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

namespace llc {

namespace {

uint64_t token_of(TreqState &r) { return uint64_t(uintptr_t(request_of(&r))); }

void start(llc_treq_t *req, TreqState::Kind kind, void *buf, uint64_t capacity)
{
    TreqState &r = state_of(req);
    std::memset(&r, 0, sizeof(r));
    r.kind = kind;
    r.buf = buf;
    r.capacity = capacity;
    r.magic = TreqState::kMagic;
    req->status = LLC_OK;
}

template <class T> T header_as(const void *hdr, size_t hdr_len, int src, const char *what)
{
    if (hdr_len != sizeof(T))
        throw Error(LLC_ERR_PEER, std::string("protocol error: tagged ") + what + " record of " +
                                      std::to_string(hdr_len) + " header bytes from rank " + std::to_string(src));
    T t;
    std::memcpy(&t, hdr, sizeof(T));
    return t;
}

} // namespace

Tagged::Tagged(Context &ctx) : ctx_(ctx)
{
    ctx_.register_internal_handler(kTagEager, on_eager, this);
    ctx_.register_internal_handler(kTagRts, on_rts, this);
    ctx_.register_internal_handler(kTagCts, on_cts, this);
    ctx_.register_internal_handler(kTagData, on_data, this);
    ctx_.register_internal_handler(kTagFin, on_fin, this);
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
    start(req, TreqState::Send, const_cast<void *>(buf), len);
    TreqState &r = state_of(req);
    r.peer = dest;
    bool sync = flags & LLC_TSEND_SYNC;
    TagWire w{};
    w.tag = tag;
    w.source = source;
    w.length = len;
    if (len <= ctx_.config().tag_eager_bytes) {
        w.flags = sync ? kWireSync : 0;
        w.sreq = sync ? token_of(r) : 0;
        llc_iov_t iov{buf, len};
        int rc = ctx_.send_am(dest, kTagEager, &w, sizeof(w), &iov, 1, on_send_done, req);
        ctx_.counters().tag_eager_sends++;
        r.pending = (rc == LLC_INPROGRESS ? 1 : 0) + (sync ? 1 : 0);
    } else {
        // Request-to-send: the receiver pulls the payload once a receive
        // matches (which also makes it synchronous).
        w.sreq = token_of(r);
        w.pid = int32_t(::getpid());
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

int Tagged::recv(int source, uint64_t tag, uint64_t ignore, void *buf, size_t len, llc_treq_t *req)
{
    if (!req)
        throw Error(LLC_ERR_INVALID, "llc_trecv: req is NULL");
    if (!buf && len > 0)
        throw Error(LLC_ERR_INVALID, "llc_trecv: buf is NULL with a length of " + std::to_string(len));
    if (source < LLC_ANY_SOURCE)
        throw Error(LLC_ERR_INVALID, "llc_trecv: source label " + std::to_string(source) +
                                         " is negative (LLC_ANY_SOURCE is -1)");
    start(req, TreqState::Recv, buf, len);
    TreqState &r = state_of(req);
    r.tag = tag;
    r.ignore = ignore;
    r.source = source;
    if (Unexpected *u = matcher_.find_unexpected(tag, ignore, source, true)) {
        std::unique_ptr<Unexpected> owned(u);
        if (deliver(r, u->env, u->flags, u->sreq, u->data.get(), u->rndv, u->pid, u->addr)) {
            r.magic = 0;
            return LLC_OK;
        }
        return LLC_INPROGRESS;
    }
    matcher_.post(r);
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
    std::unique_ptr<Unexpected> u(reinterpret_cast<Unexpected *>(msg));
    start(req, TreqState::Recv, buf, len);
    TreqState &r = state_of(req);
    if (deliver(r, u->env, u->flags, u->sreq, u->data.get(), u->rndv, u->pid, u->addr)) {
        r.magic = 0;
        return LLC_OK;
    }
    return LLC_INPROGRESS;
}

bool Tagged::cancel(llc_treq_t *req)
{
    if (!req)
        throw Error(LLC_ERR_INVALID, "llc_tcancel: req is NULL");
    TreqState &r = state_of(req);
    if (r.magic != TreqState::kMagic || r.kind != TreqState::Recv || !matcher_.unpost(r))
        return false;
    r.magic = 0;
    req->status = LLC_ERR_CANCELED;
    ctx_.counters().tag_cancelled++;
    return true;
}

void Tagged::set_results(llc_treq_t *req, const TagEnvelope &env, size_t received)
{
    req->src_rank = env.src_rank;
    req->source = env.source;
    req->tag = env.tag;
    req->length = size_t(env.length);
    req->received = received;
}

bool Tagged::deliver(TreqState &r, const TagEnvelope &env, uint32_t flags, uint64_t sreq, const char *data, bool rndv,
                     int32_t pid, uint64_t addr)
{
    llc_treq_t *req = request_of(&r);
    size_t n = size_t(std::min<uint64_t>(env.length, r.capacity));
    set_results(req, env, n);
    if (env.length > r.capacity) {
        req->status = LLC_ERR_TRUNCATE;
        ctx_.counters().tag_truncated++;
    }
    if (!rndv) {
        if (n)
            std::memcpy(r.buf, data, n);
        if (flags & kWireSync)
            send_reply(env.src_rank, kTagFin, sreq, 0);
        return true;
    }
    bool same_node = ctx_.node_of(env.src_rank) == ctx_.node_of(ctx_.rank());
    if (same_node && pull_by_cma(r, n, pid, addr)) {
        ctx_.counters().tag_cma_reads++;
        send_reply(env.src_rank, kTagFin, sreq, 0);
        return true;
    }
    send_reply(env.src_rank, kTagCts, sreq, token_of(r)); // the sender streams it (on_data)
    return false;
}

bool Tagged::pull_by_cma(TreqState &r, size_t n, int32_t pid, uint64_t addr)
{
    const Config &cfg = ctx_.config();
    if (!cfg.cma_enabled || cfg.cma_simulate_eperm)
        return false;
#ifdef HAVE_PROCESS_VM_READV
    size_t done = 0;
    while (done < n) {
        struct iovec local = {static_cast<char *>(r.buf) + done, n - done};
        struct iovec remote = {reinterpret_cast<void *>(uintptr_t(addr + done)), n - done};
        ssize_t got = ::process_vm_readv(pid_t(pid), &local, 1, &remote, 1, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0 && done == 0)
            return false; // not permitted (ptrace rules) or gone: the sender streams it instead
        if (got <= 0)
            throw Error(LLC_ERR_PEER, "tagged rendezvous: reading the payload from process " + std::to_string(pid) +
                                          " failed part-way: " + std::strerror(errno));
        done += size_t(got);
    }
    return true;
#else
    (void)r, (void)n, (void)pid, (void)addr;
    return false;
#endif
}

void Tagged::send_reply(int dest, unsigned id, uint64_t sreq, uint64_t rreq)
{
    TagReply reply{sreq, rreq};
    ctx_.send_am(dest, id, &reply, sizeof(reply), nullptr, 0, nullptr, nullptr);
}

TreqState &Tagged::sender_state(int src, uint64_t sreq, const char *what)
{
    TreqState &r = state_of(reinterpret_cast<llc_treq_t *>(uintptr_t(sreq)));
    if (sreq == 0 || r.magic != TreqState::kMagic || r.kind != TreqState::Send || r.peer != src || r.pending == 0)
        throw Error(LLC_ERR_PEER, std::string("protocol error: tagged ") + what + " from rank " +
                                      std::to_string(src) + " names no send of ours in progress");
    return r;
}

void Tagged::finish(TreqState &r, int status, bool call_back)
{
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
    if (!rndv && data_len != w.length)
        throw Error(LLC_ERR_PEER, "protocol error: tagged message from rank " + std::to_string(src) + " declares " +
                                      std::to_string(w.length) + " bytes and carries " + std::to_string(data_len));
    TagEnvelope env{w.tag, w.source, src, w.length};
    if (TreqState *r = matcher_.take_posted(env)) {
        if (deliver(*r, env, w.flags, w.sreq, static_cast<const char *>(data), rndv, w.pid, w.addr))
            finish(*r, request_of(r)->status, true);
        return;
    }
    auto u = std::make_unique<Unexpected>();
    u->env = env;
    u->flags = w.flags;
    u->sreq = w.sreq;
    u->rndv = rndv;
    u->pid = w.pid;
    u->addr = w.addr;
    if (!rndv && data_len) {
        u->data.reset(new char[data_len]);
        std::memcpy(u->data.get(), data, data_len);
    }
    matcher_.add_unexpected(std::move(u));
    ctx_.counters().tag_unexpected++;
}

void Tagged::on_eager(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *data,
                      size_t data_len)
{
    static_cast<Tagged *>(self)->arrived(src, header_as<TagWire>(hdr, hdr_len, src, "eager"), data, data_len, false);
}

void Tagged::on_rts(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *, size_t)
{
    static_cast<Tagged *>(self)->arrived(src, header_as<TagWire>(hdr, hdr_len, src, "request-to-send"), nullptr, 0,
                                         true);
}

void Tagged::on_cts(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *, size_t)
{
    auto *t = static_cast<Tagged *>(self);
    TagReply in = header_as<TagReply>(hdr, hdr_len, src, "clear-to-send");
    TreqState &r = t->sender_state(src, in.sreq, "clear-to-send");
    TagReply out{0, in.rreq};
    llc_iov_t iov{r.buf, size_t(r.capacity)};
    int rc = t->ctx_.send_am(src, kTagData, &out, sizeof(out), &iov, 1, on_send_done, request_of(&r));
    if (rc == LLC_OK)
        t->send_event_done(r, LLC_OK); // copied out already: the send is complete
}

void Tagged::on_data(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *data,
                     size_t data_len)
{
    auto *t = static_cast<Tagged *>(self);
    TagReply in = header_as<TagReply>(hdr, hdr_len, src, "data");
    TreqState &r = state_of(reinterpret_cast<llc_treq_t *>(uintptr_t(in.rreq)));
    llc_treq_t *req = request_of(&r);
    if (in.rreq == 0 || r.magic != TreqState::kMagic || r.kind != TreqState::Recv || r.posted ||
        req->src_rank != src || data_len != req->length)
        throw Error(LLC_ERR_PEER, "protocol error: tagged data from rank " + std::to_string(src) +
                                      " names no receive of ours waiting for it");
    if (req->received)
        std::memcpy(r.buf, data, req->received);
    t->finish(r, req->status, true);
}

void Tagged::on_fin(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *, size_t)
{
    auto *t = static_cast<Tagged *>(self);
    TagReply in = header_as<TagReply>(hdr, hdr_len, src, "acknowledgement");
    t->send_event_done(t->sender_state(src, in.sreq, "acknowledgement"), LLC_OK);
}

} // namespace llc
