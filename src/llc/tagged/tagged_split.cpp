// tagged_split.cpp - the split copy within a node: a large message's bytes
// moved by both processes at once, the sender writing [0, split) into the
// receive buffer (process_vm_writev) while the receiver reads [split, n)
// from the send buffer (process_vm_readv) (doc/libllc-tagged.md, "Split
// copy").
//
// Who waits for what:
//  * the receive completes once its own read is done and the sender's
//    Written arrived (the sender has finished writing into its buffer);
//  * the send completes on the receiver's Fin, Fail or (a part not
//    permitted: stream it all) Cts + Data, which the receiver sends only
//    after its read (nothing reads the send buffer any more) and after the
//    sender's Written (the sender's part, done in its handler, is over).
#include "tagged/tagged.hpp"
#include "tagged/tagged_util.hpp"

#include "core/context.hpp"
#include "support/cma_copy.hpp"
#include "transport/transport.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace llc {

namespace {
constexpr size_t kSplitGrain = 4096; // parts are cut at whole pages of the message
} // namespace

bool Tagged::split_wanted(int peer, size_t n, bool after_rts) const
{
    const Config &cfg = ctx_.config();
    // Never where processes take turns on the CPUs: a split message is done
    // only when both processes have run their part (after a request-to-send
    // the receiver even waits for the sender to answer), where one copy needs
    // one of them.  With 8 ranks on 2 CPUs an Alltoall of 256 KiB blocks took
    // about a quarter less time without splits.
    if (ctx_.oversubscribed())
        return false;
    const size_t threshold = after_rts ? cfg.tag_split_rts_bytes : cfg.tag_split_bytes;
    return threshold && n >= threshold && n >= 2 * kSplitGrain && cfg.cma_enabled && peer != ctx_.rank() &&
           !split_refused_.count(peer);
}

size_t Tagged::split_point(size_t n) const
{
    const size_t share = size_t(uint64_t(n) * ctx_.config().tag_split_percent / 100);
    return std::clamp<size_t>(share / kSplitGrain * kSplitGrain, kSplitGrain, n - kSplitGrain);
}

void Tagged::start_split_pull(TreqState &r, int src, uint64_t sreq, int32_t pid, uint64_t addr, size_t n)
{
    const size_t split = split_point(n);
    r.peer_token = sreq;
    await(r, TreqState::AwaitSplit);
    split_recvs_.push_back(&r);
    SplitWire w{sreq, r.token, uint64_t(uintptr_t(r.buf)), split};
    ctx_.send_am(src, kTagSplit, &w, sizeof(w), nullptr, 0, nullptr, nullptr);
    r.split = uint8_t(
        copy_by_cma(CmaDirection::ReadFromPeer, pid, addr + split, static_cast<char *>(r.buf) + split, n - split));
}

int Tagged::send_offered_split(int dest, const PutWire &put, const void *buf, size_t n, const Offer &o, llc_treq_t *req)
{
    TreqState &r = state_of(req);
    const size_t split = split_point(n);
    await(r, TreqState::AwaitReply);
    r.split = 1;
    PutSplitWire w{put, r.token, uint64_t(uintptr_t(buf)), split};
    ctx_.send_am(dest, kTagPutSplit, &w, sizeof(w), nullptr, 0, nullptr, nullptr);
    const CmaCopy part = copy_by_cma(CmaDirection::WriteToPeer, o.pid, o.addr, const_cast<void *>(buf), split);
    if (part == CmaCopy::Done)
        ctx_.counters().tag_cma_writes++;
    WrittenWire done{put.rreq, uint32_t(part), 0};
    ctx_.send_am(dest, kTagWritten, &done, sizeof(done), nullptr, 0, nullptr, nullptr);
    r.pending = 1;
    if (part == CmaCopy::Failed) {
        split_write_failed(r, dest, o.addr, split);
        ctx_.queue_completion(on_send_done, req, LLC_ERR_PEER);
    }
    return LLC_INPROGRESS;
}

void Tagged::split_write_failed(TreqState &r, int dest, uint64_t addr, size_t n)
{
    // The receiver named memory (or is a process) we cannot write: this send
    // fails at once, and the receive, told so by Written, fails without an
    // answer.  (The receiver may still be reading our buffer: it only reads.)
    stop_awaiting(r);
    reject(dest, "its split copy named " + std::to_string(n) + " bytes at " + hex(addr) +
                     " that could not be written: the send completes with LLC_ERR_PEER");
}

void Tagged::on_split(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *, size_t)
{
    auto *t = static_cast<Tagged *>(self);
    SplitWire w;
    if (!t->header_ok(hdr, hdr_len, src, "split", w))
        return;
    if (src == t->ctx_.rank()) { // (never split with ourselves: it would write where the record says)
        t->reject(src, "a tagged split from this process");
        return;
    }
    TreqState *r = t->awaiting_request(src, w.sreq, bit(TreqState::AwaitReply), "split");
    if (!r)
        return;
    if (r->split || t->am_send_of(*r) || w.split == 0 || w.split >= r->capacity) {
        t->reject(src, "a tagged split asking for " + std::to_string(w.split) + " bytes of a message of " +
                           std::to_string(r->capacity) + (r->split ? " (asked already)" : ""));
        return; // the send keeps waiting for its answer
    }
    const int32_t pid = t->ctx_.transport_to(src).peer_pid(src);
    if (pid <= 0) {
        t->reject(src, "a tagged split from a process this transport cannot write to");
        return;
    }
    r->split = 1;
    const CmaCopy part = t->copy_by_cma(CmaDirection::WriteToPeer, pid, w.addr, r->buf, size_t(w.split));
    if (part == CmaCopy::Done)
        t->ctx_.counters().tag_cma_writes++;
    WrittenWire done{w.rreq, uint32_t(part), 0};
    t->ctx_.send_am(src, kTagWritten, &done, sizeof(done), nullptr, 0, nullptr, nullptr);
    if (part == CmaCopy::Failed) {
        t->split_write_failed(*r, src, w.addr, size_t(w.split));
        t->send_event_done(*r, LLC_ERR_PEER);
    }
}

void Tagged::on_put_split(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *,
                          size_t data_len)
{
    auto *t = static_cast<Tagged *>(self);
    PutSplitWire w;
    if (!t->header_ok(hdr, hdr_len, src, "split write", w))
        return;
    TreqState *r = t->awaiting_request(src, w.put.rreq, bit(TreqState::AwaitOffer), "split write");
    if (!r)
        return;
    const int32_t pid = t->ctx_.transport_to(src).peer_pid(src);
    if (src == t->ctx_.rank() || pid <= 0) {
        t->reject(src, "a tagged split write from this process or one we cannot read");
        return;
    }
    TagEnvelope env{w.put.tag, w.put.source, src, w.put.length};
    const size_t n = size_t(std::min<uint64_t>(w.put.length, r->capacity));
    if (!tag_matches(r->tag, r->ignore, r->source, env) || data_len != 0 || w.put.flags != 0 || w.split == 0 ||
        w.split >= n) {
        t->reject(src, "a tagged split write that does not fit the offered receive (tag " + hex(w.put.tag) +
                           ", split at " + std::to_string(w.split) + " of " + std::to_string(n) + " bytes)");
        return; // the receive keeps its offer
    }
    // the same token now waits for the sender's Written
    r->awaiting = TreqState::AwaitSplit;
    r->revoking = 0;
    t->matcher_.unpost(*r);
    llc_treq_t *req = request_of(r);
    t->set_results(req, env, n);
    if (w.put.length > r->capacity) {
        req->status = LLC_ERR_TRUNCATE;
        t->ctx_.counters().tag_truncated++;
    }
    r->peer_token = w.sreq;
    t->split_recvs_.push_back(r);
    t->ctx_.counters().tag_offers_used++;
    auto st = t->offer_streaks_.find(src);
    if (st != t->offer_streaks_.end())
        st->second = OfferStreak{};
    r->split = uint8_t(t->copy_by_cma(CmaDirection::ReadFromPeer, pid, w.addr + w.split,
                                      static_cast<char *>(r->buf) + w.split, n - size_t(w.split)));
}

void Tagged::on_written(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *, size_t)
{
    auto *t = static_cast<Tagged *>(self);
    WrittenWire w;
    if (!t->header_ok(hdr, hdr_len, src, "written", w))
        return;
    TreqState *r = t->awaiting_request(src, w.rreq, bit(TreqState::AwaitSplit), "written");
    if (!r)
        return;
    CmaCopy theirs = CmaCopy(w.result);
    if (theirs != CmaCopy::Done && theirs != CmaCopy::NotPermitted && theirs != CmaCopy::Failed) {
        t->reject(src, "a tagged written record with result " + std::to_string(w.result));
        theirs = CmaCopy::Failed;
    }
    t->conclude_split(*r, src, theirs);
}

void Tagged::conclude_split(TreqState &r, int src, CmaCopy theirs)
{
    stop_awaiting(r);
    forget_split_recv(r);
    const CmaCopy mine = CmaCopy(r.split);
    llc_treq_t *req = request_of(&r);
    if (mine == CmaCopy::Failed || theirs == CmaCopy::Failed) {
        // a process or memory that could not be reached: this receive and that send fail
        req->received = 0;
        ctx_.counters().tag_read_failed++;
        if (theirs != CmaCopy::Failed) { // (else the send has failed already)
            reject(src, "a split copy of " + std::to_string(req->length) +
                            " bytes could not be read: the receive completes with LLC_ERR_PEER");
            send_reply(src, kTagFail, r.peer_token, 0);
        }
        finish(r, LLC_ERR_PEER, true);
        return;
    }
    if (mine == CmaCopy::NotPermitted || theirs == CmaCopy::NotPermitted) {
        // ptrace rules or a seccomp filter: the sender streams it all (on_data), and we split no more with it
        split_refused_.insert(src);
        await(r, TreqState::AwaitData);
        send_reply(src, kTagCts, r.peer_token, r.token);
        return;
    }
    ctx_.counters().tag_cma_reads++;
    send_reply(src, kTagFin, r.peer_token, 0);
    finish(r, req->status, true);
}

void Tagged::forget_split_recv(TreqState &r)
{
    auto it = std::find(split_recvs_.begin(), split_recvs_.end(), &r);
    if (it != split_recvs_.end()) {
        *it = split_recvs_.back();
        split_recvs_.pop_back();
    }
}

void Tagged::split_peer_failed(int src)
{
    // receives whose sender died before its Written: its part never comes
    std::vector<TreqState *> dead;
    for (TreqState *r : split_recvs_)
        if (request_of(r)->src_rank == src)
            dead.push_back(r);
    for (TreqState *r : dead) {
        stop_awaiting(*r);
        forget_split_recv(*r);
        request_of(r)->received = 0;
        finish(*r, LLC_ERR_PEER, true);
    }
}

} // namespace llc
