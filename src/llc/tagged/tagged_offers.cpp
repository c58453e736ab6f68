// tagged_offers.cpp - the receive-first path (Morimoto et al.): a receive posted
// before its message is offered to the sender, which writes the message
// straight into it (doc/libllc-tagged.md, "Offers").
#include "tagged/tagged.hpp"
#include "tagged/tagged_util.hpp"

#include "core/context.hpp"
#include "support/cma_copy.hpp"
#include "transport/transport.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

namespace llc {

bool Tagged::may_offer(const TreqState &r, int src_rank)
{
    const Config &cfg = ctx_.config();
    if (!cfg.tag_offer || r.source == LLC_ANY_SOURCE || src_rank < 0 || src_rank >= ctx_.size() ||
        src_rank == ctx_.rank())
        return false;
    // Records of its that came before are held back (a large active message
    // being streamed): the offer's count would pass them by.
    if (ctx_.holding_records_from(src_rank))
        return false;
    // MPI's order is the posting order: a message that this receive and an
    // earlier one could both take must go to the earlier one, which only
    // the sender can then guarantee if the earlier one is an offer of its
    // own (kept oldest first in its OfferBook).
    if (!matcher_.all_overlapping(r, [src_rank](const TreqState &p) {
            return p.awaiting == TreqState::AwaitOffer && !p.revoking && p.peer == src_rank;
        }))
        return false;
    auto it = offer_streaks_.find(src_rank);
    if (it != offer_streaks_.end() && it->second.skip > 0) {
        it->second.skip--;
        return false;
    }
    return true;
}

void Tagged::offer(TreqState &r, int src_rank)
{
    r.peer = src_rank;
    await(r, TreqState::AwaitOffer);
    OfferWire w{};
    w.rreq = r.token;
    w.tag = r.tag;
    w.ignore = r.ignore;
    w.capacity = r.capacity;
    w.addr = uint64_t(uintptr_t(r.buf));
    w.seen = ctx_.records_received_from(src_rank);
    w.source = r.source;
    w.pid = pid_;
    int rc;
    try {
        rc = ctx_.send_am(src_rank, kTagOffer, &w, sizeof(w), nullptr, 0, nullptr, nullptr);
    } catch (...) {
        // the receive was not posted after all (the call fails)
        stop_awaiting(r);
        matcher_.unpost(r);
        throw;
    }
    if (rc < 0) {
        // not sent: an ordinary posted receive (the sender would never
        // answer an offer it did not get, and a later offer must not be
        // taken past this receive: the rule of may_offer sees it unoffered)
        stop_awaiting(r);
        return;
    }
    ctx_.counters().tag_offers_sent++;
}

int Tagged::send_offered(int dest, uint32_t source, uint64_t tag, const void *buf, size_t len, const Offer &o,
                         llc_treq_t *req)
{
    TreqState &r = state_of(req);
    size_t n = size_t(std::min<uint64_t>(len, o.capacity));
    PutWire w{o.rreq, tag, len, source, 0};
    const bool writable = ctx_.transport_to(dest).caps().has(CapRemoteRead); // CMA works both ways
    if (writable && split_wanted(dest, n, false))
        return send_offered_split(dest, w, buf, n, o, req); // both copy (tagged_split.cpp)
    switch (writable && n ? copy_by_cma(CmaDirection::WriteToPeer, o.pid, o.addr, const_cast<void *>(buf), n)
                          : CmaCopy::NotPermitted) {
    case CmaCopy::Done:
        w.flags = kPutWritten;
        ctx_.send_am(dest, kTagPut, &w, sizeof(w), nullptr, 0, nullptr, nullptr);
        ctx_.counters().tag_cma_writes++;
        r.magic = 0;
        return LLC_OK;
    case CmaCopy::Failed:
        // The receiver named memory we cannot write: that receive and this
        // send fail (LLC_ERR_PEER), nothing else does.
        w.flags = kPutFailed;
        ctx_.send_am(dest, kTagPut, &w, sizeof(w), nullptr, 0, nullptr, nullptr);
        reject(dest, "its offer named " + std::to_string(o.capacity) + " bytes at " + hex(o.addr) + " in process " +
                         std::to_string(o.pid) + " that could not be written: the send completes with LLC_ERR_PEER");
        r.pending = 1;
        ctx_.queue_completion(on_send_done, req, LLC_ERR_PEER);
        return LLC_INPROGRESS;
    case CmaCopy::NotPermitted: // the payload travels in the Put instead
    case CmaCopy::Pending:
        break;
    }
    llc_iov_t iov{buf, n};
    int rc = ctx_.send_am(dest, kTagPut, &w, sizeof(w), &iov, 1, on_send_done, req);
    if (rc != LLC_INPROGRESS) {
        r.magic = 0;
        return LLC_OK;
    }
    r.pending = 1;
    return LLC_INPROGRESS;
}

void Tagged::on_offer(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *, size_t)
{
    auto *t = static_cast<Tagged *>(self);
    OfferWire w;
    if (!t->header_ok(hdr, hdr_len, src, "offer", w))
        return;
    if (w.source < 0) {
        t->reject(src, "a tagged offer for any source");
        return;
    }
    if (w.pid == t->pid_) {
        // (a receive is never offered to its own process: taking this one
        // would make our sends write into our own memory where it says)
        t->reject(src, "a tagged offer naming this process's own memory");
        t->send_reply(src, kTagDecline, 0, w.rreq);
        return;
    }
    Offer o;
    o.rreq = w.rreq;
    o.tag = w.tag;
    o.ignore = w.ignore;
    o.capacity = w.capacity;
    o.addr = w.addr;
    o.source = w.source;
    o.pid = w.pid;
    // Taken only when nothing we sent was in flight as the receive was posted.
    if (w.seen != t->ctx_.records_sent_to(src) || !t->offers_.add(src, o))
        t->send_reply(src, kTagDecline, 0, w.rreq);
    else
        t->offers_changed(src);
}

void Tagged::offers_changed(int peer)
{
    if (llc_fast_peer_t *f = ctx_.fast_peer(peer))
        f->offers = uint32_t(offers_.count(peer));
}

void Tagged::on_revoke(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *, size_t)
{
    auto *t = static_cast<Tagged *>(self);
    TagReply in;
    if (!t->header_ok(hdr, hdr_len, src, "revoke", in))
        return;
    // Not here: a Put or a Decline for it is on its way already.
    if (t->offers_.remove(src, in.rreq)) {
        t->offers_changed(src);
        t->send_reply(src, kTagDecline, 0, in.rreq);
    }
}

void Tagged::on_decline(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *, size_t)
{
    auto *t = static_cast<Tagged *>(self);
    TagReply in;
    if (!t->header_ok(hdr, hdr_len, src, "decline", in))
        return;
    t->ctx_.counters().tag_offers_declined++;
    TreqState *r = t->request_awaiting(src, in.rreq, bit(TreqState::AwaitOffer));
    if (r && r->revoking) {
        t->stop_awaiting(*r);
        t->matcher_.unpost(*r);
        t->ctx_.counters().tag_cancelled++;
        t->finish(*r, LLC_ERR_CANCELED, true);
        return;
    }
    // Refused because a message of the sender's crossed the offer: back
    // off from offering to it.  (No receive waits for this any more when
    // that message filled the receive on its way: arrived() released it.)
    OfferStreak &st = t->offer_streaks_[src];
    st.declined++;
    if (st.declined >= 2)
        st.skip = std::min<uint32_t>(1u << std::min<uint32_t>(st.declined, 16), kMaxOfferSkip);
    if (r)
        t->stop_awaiting(*r); // it stays posted, as a receive the sender does not know of
}

void Tagged::on_put(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *data,
                    size_t data_len)
{
    auto *t = static_cast<Tagged *>(self);
    PutWire w;
    if (!t->header_ok(hdr, hdr_len, src, "write", w))
        return;
    TreqState *r = t->awaiting_request(src, w.rreq, bit(TreqState::AwaitOffer), "write");
    if (!r)
        return;
    TagEnvelope env{w.tag, w.source, src, w.length};
    size_t n = size_t(std::min<uint64_t>(w.length, r->capacity));
    size_t carried = (w.flags & (kPutWritten | kPutFailed)) ? 0 : n;
    if (!tag_matches(r->tag, r->ignore, r->source, env) || data_len != carried) {
        t->reject(src, "a tagged write that does not fit the offered receive (tag " + hex(w.tag) + ", " +
                           std::to_string(data_len) + " bytes carried)");
        return; // the receive keeps its offer
    }
    t->stop_awaiting(*r);
    t->matcher_.unpost(*r);
    llc_treq_t *req = request_of(r);
    t->set_results(req, env, n);
    int status = LLC_OK;
    if (w.flags & kPutFailed) {
        status = LLC_ERR_PEER;
        req->received = 0;
    } else if (w.length > r->capacity) {
        status = LLC_ERR_TRUNCATE;
        t->ctx_.counters().tag_truncated++;
    }
    if (carried && data != r->buf)
        std::memcpy(r->buf, data, carried);
    else if (carried)
        t->ctx_.counters().tag_data_in_place++;
    t->ctx_.counters().tag_offers_used++;
    auto st = t->offer_streaks_.find(src);
    if (st != t->offer_streaks_.end())
        st->second = OfferStreak{};
    t->finish(*r, status, true);
}

char *Tagged::put_destination(int src, const void *hdr, size_t hdr_len, uint64_t len)
{
    PutWire w;
    if (hdr_len != sizeof(w))
        return nullptr;
    std::memcpy(&w, hdr, sizeof(w));
    TreqState *r = request_awaiting(src, w.rreq, bit(TreqState::AwaitOffer));
    if (!r || r->kind != TreqState::Recv || w.flags != 0 || len == 0 ||
        len != std::min<uint64_t>(w.length, r->capacity))
        return nullptr;
    TagEnvelope env{w.tag, w.source, src, w.length};
    return tag_matches(r->tag, r->ignore, r->source, env) ? static_cast<char *>(r->buf) : nullptr;
}

} // namespace llc
