// rma.cpp - one-sided put and get: the origin's three paths and the owner's
// service of records (rma.hpp).
#include "rma/rma.hpp"

#include "core/context.hpp"
#include "core/errors.hpp"
#include "support/cma_copy.hpp"
#include "transport/transport.hpp"

#include <unistd.h>

#include <cstring>

namespace llc {

namespace {

const char *op_name(bool is_get) { return is_get ? "llc_get" : "llc_put"; }

std::string where(bool is_get, int dest, uint64_t offset, uint64_t len)
{
    return std::string(op_name(is_get)) + (is_get ? " from rank " : " to rank ") + std::to_string(dest) + " (offset " +
           std::to_string(offset) + ", " + std::to_string(len) + " bytes)";
}

} // namespace

Rma::Rma(Context &ctx, uint64_t nonce)
    : ctx_(ctx), regions_(nonce, ctx.rank(), int32_t(::getpid())), cma_refused_(size_t(ctx.size()), 0),
      failed_(size_t(ctx.size()), 0)
{
    ctx_.register_internal_handler(kRmaPut, on_put, this);
    ctx_.register_internal_handler(kRmaGet, on_get, this);
    ctx_.register_internal_handler(kRmaAck, on_ack, this);
    ctx_.register_internal_handler(kRmaNack, on_nack, this);
    ctx_.register_internal_handler(kRmaGetReply, on_get_reply, this);
}

// ------------------------------------------------------------------ regions

llc_region *Rma::register_region(void *addr, size_t len, unsigned flags)
{
    if (!addr && len > 0)
        throw Error(LLC_ERR_INVALID, "llc_mem_register: addr is NULL with a length of " + std::to_string(len));
    if (flags & ~unsigned(LLC_REGION_REMOTE_READ | LLC_REGION_REMOTE_WRITE))
        throw Error(LLC_ERR_INVALID, "llc_mem_register: unknown flags " + std::to_string(flags));
    llc_region *r = regions_.add(addr, len, flags);
    ctx_.counters().rma_regions = regions_.size();
    return r;
}

void Rma::deregister_region(llc_region *region)
{
    if (!regions_.remove(region))
        throw Error(LLC_ERR_INVALID, "llc_mem_deregister: not a region registered on this context (or deregistered "
                                     "already)");
    ctx_.counters().rma_regions = regions_.size();
}

void Rma::pack_key(const llc_region *region, void *buf, size_t cap)
{
    if (!region || !region->table || !region->table->owns(region))
        throw Error(LLC_ERR_INVALID, "llc_region_key: not a live region");
    if (!buf || cap < LLC_REGION_KEY_BYTES)
        throw Error(LLC_ERR_INVALID, "llc_region_key: the buffer holds " + std::to_string(buf ? cap : 0) +
                                         " bytes, a key takes " + std::to_string(LLC_REGION_KEY_BYTES));
    RegionKey k = region->table->key_of(*region);
    std::memcpy(buf, &k, sizeof(k));
}

// ------------------------------------------------------------------ origin

RegionKey Rma::checked_key(bool is_get, int dest, const void *buf, size_t len, const void *key, uint64_t offset,
                           llc_treq_t *req) const
{
    const char *fn = op_name(is_get);
    if (!req)
        throw Error(LLC_ERR_INVALID, std::string(fn) + ": req is NULL");
    if (dest < 0 || dest >= ctx_.size())
        throw Error(LLC_ERR_INVALID, std::string(fn) + ": rank " + std::to_string(dest) +
                                         " is out of range: valid ranks are 0.." + std::to_string(ctx_.size() - 1));
    if (!buf && len > 0)
        throw Error(LLC_ERR_INVALID, std::string(fn) + ": buffer is NULL with a length of " + std::to_string(len));
    if (!key)
        throw Error(LLC_ERR_INVALID, std::string(fn) + ": key is NULL");
    RegionKey k;
    std::memcpy(&k, key, sizeof(k));
    if (k.magic != kRegionKeyMagic)
        throw Error(LLC_ERR_KEY, where(is_get, dest, offset, len) + ": the key is not a region key (llc_region_key)");
    if (k.owner != dest)
        throw Error(LLC_ERR_KEY, where(is_get, dest, offset, len) + ": the key is rank " + std::to_string(k.owner) +
                                     "'s, not rank " + std::to_string(dest) + "'s");
    if (!within(offset, len, k.length))
        throw Error(LLC_ERR_RANGE, where(is_get, dest, offset, len) + ": lies outside the region of " +
                                       std::to_string(k.length) + " bytes");
    if (failed_[size_t(dest)])
        throw Error(LLC_ERR_PEER, where(is_get, dest, offset, len) + ": rank " + std::to_string(dest) +
                                      " has failed (its connection broke or its process died)");
    return k;
}

Rma::Path Rma::path_to(int dest, const RegionKey &k) const
{
    if (dest == ctx_.rank())
        return Path::Self;
    const Config &cfg = ctx_.config();
    if (cfg.cma_enabled && !cfg.cma_simulate_eperm && !cma_refused_[size_t(dest)] && k.pid > 0 && k.live_addr != 0 &&
        ctx_.transport_to(dest).caps().has(CapRemoteRead))
        return Path::Cma;
    return Path::Record;
}

int Rma::put(int dest, const void *src, size_t len, const void *key, uint64_t offset, llc_treq_t *req)
{
    return access(false, dest, const_cast<void *>(src), len, key, offset, req);
}

int Rma::get(int dest, void *dst, size_t len, const void *key, uint64_t offset, llc_treq_t *req)
{
    return access(true, dest, dst, len, key, offset, req);
}

int Rma::access(bool is_get, int dest, void *local, size_t len, const void *key, uint64_t offset, llc_treq_t *req)
{
    if (req) {
        std::memset(&rma_state_of(req), 0, sizeof(RmaOpState));
        req->status = LLC_OK;
    }
    try {
        const RegionKey k = checked_key(is_get, dest, local, len, key, offset, req);
        (is_get ? ctx_.counters().rma_gets : ctx_.counters().rma_puts)++;
        Path path = path_to(dest, k);
        int rc = -1;
        if (path == Path::Self) {
            rc = self_access(is_get, local, len, k, offset);
            ctx_.counters().rma_self_ops++;
        } else if (path == Path::Cma) {
            rc = cma_access(is_get, dest, local, len, k, offset);
            if (rc == LLC_OK)
                ctx_.counters().rma_cma_ops++;
        }
        if (rc == LLC_OK) {
            (is_get ? ctx_.counters().rma_bytes_got : ctx_.counters().rma_bytes_put) += len;
            return LLC_OK;
        }
        return send_record(is_get, dest, local, len, k, offset, req);
    } catch (const Error &e) {
        if (req)
            req->status = e.status();
        if (e.status() != LLC_ERR_INVALID)
            ctx_.counters().rma_failed++; // (not a call with bad arguments)
        throw;
    }
}

int Rma::self_access(bool is_get, void *local, size_t len, const RegionKey &k, uint64_t offset)
{
    llc_region *r = nullptr;
    std::string why;
    int status = regions_.check(k.region, k.nonce, offset, len, !is_get, &r, &why);
    if (status != LLC_OK)
        throw Error(status, where(is_get, ctx_.rank(), offset, len) + ": " + why);
    if (len)
        std::memmove(is_get ? local : r->base + offset, is_get ? r->base + offset : local, len);
    return LLC_OK;
}

int Rma::cma_access(bool is_get, int dest, void *local, size_t len, const RegionKey &k, uint64_t offset)
{
    auto fail = [&](CmaResult res, int err, const char *what) {
        if (res == CmaResult::NoProcess)
            throw Error(LLC_ERR_PEER, where(is_get, dest, offset, len) + ": process " + std::to_string(k.pid) +
                                          " of rank " + std::to_string(dest) + " is gone");
        throw Error(LLC_ERR_KEY, where(is_get, dest, offset, len) + ": " + what + " in process " +
                                     std::to_string(k.pid) + " could not be reached (" + std::strerror(err) +
                                     "): the key does not describe that process's memory");
    };
    // The owner's own record of the region (its live word and what follows
    // it), not the key, says whether it is registered, where and how long.
    PublishedRegion pub{};
    int err = 0;
    CmaResult res = cma_read(k.pid, k.live_addr, &pub, sizeof(pub), &err);
    if (res == CmaResult::NotPermitted) {
        cma_refused_[size_t(dest)] = 1; // this peer's operations take the record path from now on
        return -1;
    }
    if (res != CmaResult::Done)
        fail(res, err, "the region table");
    if (pub.live == 0 || pub.live != k.region || pub.nonce != k.nonce)
        throw Error(LLC_ERR_KEY, where(is_get, dest, offset, len) +
                                     ": the key names no registered region there (deregistered, or forged)");
    const unsigned need = is_get ? LLC_REGION_REMOTE_READ : LLC_REGION_REMOTE_WRITE;
    if (!(pub.flags & need))
        throw Error(LLC_ERR_KEY, where(is_get, dest, offset, len) + ": the region was registered without " +
                                     (is_get ? "LLC_REGION_REMOTE_READ" : "LLC_REGION_REMOTE_WRITE"));
    if (!within(offset, len, pub.length))
        throw Error(LLC_ERR_RANGE, where(is_get, dest, offset, len) + ": lies outside the region of " +
                                       std::to_string(pub.length) + " bytes");
    if (len == 0)
        return LLC_OK;
    const uint64_t remote = pub.base + offset;
    res = is_get ? cma_read(k.pid, remote, local, len, &err) : cma_write(k.pid, remote, local, len, &err);
    if (res == CmaResult::NotPermitted) {
        cma_refused_[size_t(dest)] = 1;
        return -1;
    }
    if (res != CmaResult::Done)
        fail(res, err, "the region");
    return LLC_OK;
}

int Rma::send_record(bool is_get, int dest, void *local, size_t len, const RegionKey &k, uint64_t offset,
                     llc_treq_t *req)
{
    RmaOpState &op = rma_state_of(req);
    op.magic = RmaOpState::kMagic;
    op.owner = this;
    op.dst = is_get ? static_cast<char *>(local) : nullptr;
    op.length = len;
    op.offset = offset;
    op.peer = dest;
    op.is_get = is_get ? 1 : 0;
    op.token = ops_.issue(&op);
    op.awaiting_reply = 1;
    RmaAccess a{op.token, k.region, k.nonce, offset, len};
    llc_iov_t iov{local, len};
    int rc;
    try {
        rc = ctx_.send_am(dest, is_get ? kRmaGet : kRmaPut, &a, sizeof(a), is_get ? nullptr : &iov,
                          is_get || len == 0 ? 0 : 1, on_record_sent, req);
    } catch (...) {
        ops_.release(op.token);
        op.magic = 0;
        throw;
    }
    ctx_.counters().rma_record_ops++;
    op.awaiting_send = rc == LLC_INPROGRESS ? 1 : 0;
    return LLC_INPROGRESS;
}

void Rma::on_record_sent(void *req, int status)
{
    RmaOpState &op = rma_state_of(static_cast<llc_treq_t *>(req));
    if (op.magic != RmaOpState::kMagic || !op.awaiting_send)
        return;
    op.awaiting_send = 0;
    Rma &self = *op.owner;
    if (status != LLC_OK && op.awaiting_reply)
        self.reply_done(op, LLC_ERR_PEER, "the record could not be sent (" + std::string(llc_strerror(status)) + ")");
    else
        self.maybe_finish(op);
}

void Rma::reply_done(RmaOpState &op, int status, const std::string &why)
{
    llc_treq_t *req = rma_request_of(&op);
    ops_.release(op.token);
    op.token = 0;
    op.awaiting_reply = 0;
    if (status != LLC_OK && req->status == LLC_OK) {
        req->status = status;
        ctx_.counters().rma_failed++;
        ctx_.set_last_error(describe(op) + ": " + why);
    } else if (status == LLC_OK) {
        (op.is_get ? ctx_.counters().rma_bytes_got : ctx_.counters().rma_bytes_put) += op.length;
    }
    maybe_finish(op);
}

void Rma::maybe_finish(RmaOpState &op)
{
    if (op.awaiting_reply || op.awaiting_send)
        return;
    llc_treq_t *req = rma_request_of(&op);
    op.magic = 0;
    if (req->cb)
        req->cb(req);
}

std::string Rma::describe(const RmaOpState &op) const { return where(op.is_get, op.peer, op.offset, op.length); }

void Rma::peer_failed(int dest)
{
    if (dest < 0 || dest >= ctx_.size() || failed_[size_t(dest)])
        return;
    failed_[size_t(dest)] = 1;
    std::vector<RmaOpState *> doomed;
    ops_.for_each([&](RmaOpState *op) {
        if (op->peer == dest && op->awaiting_reply)
            doomed.push_back(op);
    });
    for (RmaOpState *op : doomed)
        reply_done(*op, LLC_ERR_PEER,
                   "rank " + std::to_string(dest) + " failed (its connection broke or its process died)");
}

// ------------------------------------------------------------------ records

void Rma::reject(int src, const std::string &why)
{
    ctx_.counters().rma_rejected++;
    rejects_.note(ctx_.rank(), "rank " + std::to_string(src), why);
}

bool Rma::header_ok(const void *hdr, size_t hdr_len, size_t want, int src, const char *what)
{
    if (hdr_len == want && hdr)
        return true;
    reject(src, std::string("a ") + what + " record with " + std::to_string(hdr_len) + " header bytes (not " +
                    std::to_string(want) + ")");
    return false;
}

void Rma::refuse(int src, uint64_t op, int status, uint64_t region_length)
{
    ctx_.counters().rma_refused++;
    RmaReply reply{op, int32_t(status), 0, region_length};
    ctx_.send_am(src, kRmaNack, &reply, sizeof(reply), nullptr, 0, nullptr, nullptr);
}

char *Rma::payload_destination(int src, unsigned handler, const void *hdr, size_t hdr_len, uint64_t len)
{
    if (len == 0 || !hdr)
        return nullptr;
    if (handler == kRmaGetReply && hdr_len == sizeof(RmaReply)) {
        RmaReply in;
        std::memcpy(&in, hdr, sizeof(in));
        RmaOpState *op = ops_.find(in.op);
        if (!op || op->peer != src || !op->is_get || op->length != len || in.status != LLC_OK)
            return nullptr; // on_get_reply rejects it
        return op->dst;
    }
    if (handler == kRmaPut && hdr_len == sizeof(RmaAccess)) {
        RmaAccess a;
        std::memcpy(&a, hdr, sizeof(a));
        llc_region *r = nullptr;
        std::string why;
        if (a.length != len || regions_.check(a.region, a.nonce, a.offset, a.length, true, &r, &why) != LLC_OK)
            return nullptr; // on_put refuses or rejects it
        return r->base + a.offset;
    }
    return nullptr;
}

void Rma::on_put(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *data,
                 size_t data_len)
{
    auto *t = static_cast<Rma *>(self);
    RmaAccess a;
    if (!t->header_ok(hdr, hdr_len, sizeof(a), src, "put"))
        return;
    std::memcpy(&a, hdr, sizeof(a));
    if (data_len != a.length) {
        t->reject(src, "a put record that declares " + std::to_string(a.length) + " bytes and carries " +
                           std::to_string(data_len));
        return;
    }
    llc_region *r = nullptr;
    std::string why;
    int status = t->regions_.check(a.region, a.nonce, a.offset, a.length, true, &r, &why);
    if (status != LLC_OK) {
        t->refuse(src, a.op, status, r ? r->length : 0);
        return;
    }
    if (data_len && data != r->base + a.offset)
        std::memcpy(r->base + a.offset, data, data_len);
    else if (data_len)
        t->ctx_.counters().rma_in_place++; // read into the region by payload_destination
    t->ctx_.counters().rma_served++;
    RmaReply reply{a.op, LLC_OK, 0, 0};
    t->ctx_.send_am(src, kRmaAck, &reply, sizeof(reply), nullptr, 0, nullptr, nullptr);
}

void Rma::on_get(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *, size_t)
{
    auto *t = static_cast<Rma *>(self);
    RmaAccess a;
    if (!t->header_ok(hdr, hdr_len, sizeof(a), src, "get"))
        return;
    std::memcpy(&a, hdr, sizeof(a));
    llc_region *r = nullptr;
    std::string why;
    int status = t->regions_.check(a.region, a.nonce, a.offset, a.length, false, &r, &why);
    if (status != LLC_OK) {
        t->refuse(src, a.op, status, r ? r->length : 0);
        return;
    }
    t->ctx_.counters().rma_served++;
    RmaReply reply{a.op, LLC_OK, 0, 0};
    llc_iov_t iov{r->base + a.offset, size_t(a.length)};
    t->ctx_.send_am(src, kRmaGetReply, &reply, sizeof(reply), &iov, a.length ? 1 : 0, nullptr, nullptr);
}

RmaOpState *Rma::awaiting_op(int src, uint64_t token, int is_get, const char *what)
{
    RmaOpState *op = ops_.find(token);
    if (!op) {
        reject(src, std::string("a ") + what + " naming token " + std::to_string(token) +
                        ", no put or get of ours (forged, or the request has completed)");
        return nullptr;
    }
    if (op->peer != src || (is_get >= 0 && op->is_get != is_get)) {
        reject(src, std::string("a ") + what + " for a " + (op->is_get ? "get" : "put") + " of ours to rank " +
                        std::to_string(op->peer));
        return nullptr;
    }
    return op;
}

void Rma::on_ack(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *, size_t)
{
    auto *t = static_cast<Rma *>(self);
    RmaReply in;
    if (!t->header_ok(hdr, hdr_len, sizeof(in), src, "put acknowledgement"))
        return;
    std::memcpy(&in, hdr, sizeof(in));
    if (RmaOpState *op = t->awaiting_op(src, in.op, 0, "put acknowledgement"))
        t->reply_done(*op, LLC_OK, "");
}

void Rma::on_nack(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *, size_t)
{
    auto *t = static_cast<Rma *>(self);
    RmaReply in;
    if (!t->header_ok(hdr, hdr_len, sizeof(in), src, "put/get refusal"))
        return;
    std::memcpy(&in, hdr, sizeof(in));
    RmaOpState *op = t->awaiting_op(src, in.op, -1, "put/get refusal");
    if (!op)
        return;
    if (in.status == LLC_ERR_RANGE)
        t->reply_done(*op, LLC_ERR_RANGE,
                      "lies outside the region of " + std::to_string(in.region_length) + " bytes (the target's check)");
    else if (in.status == LLC_ERR_KEY)
        t->reply_done(*op, LLC_ERR_KEY,
                      "the target knows no such region (deregistered, another job's or context's, or forged), or "
                      "the region forbids the access");
    else
        t->reply_done(*op, LLC_ERR_PEER, "the target refused it with status " + std::to_string(in.status));
}

void Rma::on_get_reply(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *data,
                       size_t data_len)
{
    auto *t = static_cast<Rma *>(self);
    RmaReply in;
    if (!t->header_ok(hdr, hdr_len, sizeof(in), src, "get reply"))
        return;
    std::memcpy(&in, hdr, sizeof(in));
    RmaOpState *op = t->awaiting_op(src, in.op, 1, "get reply");
    if (!op)
        return;
    if (data_len != op->length) {
        t->reject(src,
                  "a get reply of " + std::to_string(data_len) + " bytes for a get of " + std::to_string(op->length));
        return; // the get keeps waiting for the right reply
    }
    if (data_len && data != op->dst)
        std::memcpy(op->dst, data, data_len);
    else if (data_len)
        t->ctx_.counters().rma_in_place++; // read into dst by payload_destination
    t->reply_done(*op, LLC_OK, "");
}

} // namespace llc
