// verbs_engine.cpp - see verbs_engine.hpp.
#include "transport/verbs/verbs_engine.hpp"

#include "core/errors.hpp"
#include "llc.h"

#include <cstdlib>
#include <cstring>

namespace llc {

namespace {
constexpr int kPollBatch = 32;
}

VerbsEngine::VerbsEngine(VerbsHost &host, VerbsFabric &fabric, const VerbsEngineParams &params)
    : host_(host), fabric_(fabric), params_(params), rc_promotion_(params.rc_promote_frames),
      pool_(params.recv_buffers, fabric.slot_bytes(), params.recv_post_bound),
      peers_(
          params.max_peers,
          [this](int, std::unique_ptr<Peer> &p) {
              if (p && p->route)
                  fabric_.disconnect(p->route);
          },
          0, true)
{
    const size_t slots = fabric_.send_slots();
    free_slots_.reserve(slots);
    for (size_t i = slots; i-- > 0;)
        free_slots_.push_back(uint32_t(i));
    slot_owner_.assign(slots, -1);
    slot_rc_.assign(slots, 0);
    qp_in_flight_.assign(fabric_.data_qps() + 2, 0); // data, credit, RC
    book_ = GoodbyeBook(host_.size());
    if (params_.keyed_reads)
        if (Registrar *r = fabric_.registrar())
            reg_cache_ = std::make_unique<RegCache>(*r, params_.reg_cache_max);
    if (params_.read_chunk == 0 || params_.read_chunk > (size_t(1) << 30))
        params_.read_chunk = size_t(1) << 30; // one READ moves at most 2^31 - 1 bytes
    repost();
    if (pool_.posted() == 0)
        throw Error(LLC_ERR_SYSTEM, "LLC_NET=verbs: no receive buffer could be posted to the shared receive queue");
}

VerbsEngine::~VerbsEngine()
{
    peers_.for_each([this](int, std::unique_ptr<Peer> &p) {
        if (!p)
            return;
        if (p->rc_qp)
            fabric_.rc_destroy(p->rc_qp);
        if (p->rc_rx_qp)
            fabric_.rc_destroy(p->rc_rx_qp);
        if (p->route)
            fabric_.disconnect(p->route);
        p->rc_qp = p->rc_rx_qp = p->route = nullptr;
    });
    keyed_reads_.clear(); // landing pins go back to the cache (their callbacks are not run)
    reg_cache_.reset();   // deregisters every entry, landing buffers' included
    for (auto &b : landing_all_)
        std::free(b.first);
}

std::string VerbsEngine::describe(int rank) const { return "rank " + std::to_string(rank) + " (verbs)"; }

void VerbsEngine::fail(int status, const std::string &message)
{
    const bool first = !failed_;
    if (!failed_) {
        failed_ = true;
        failure_ = message;
    }
    host_.report_error(status, message);
    if (first)
        fail_reads();
}

bool VerbsEngine::evictable(const Peer &p) const
{
    return p.queue.empty() && !p.feeding && p.credits_to_send == 0 && p.in_flight == 0 && !book_.has_got(p.rank) &&
           !book_.has_said(p.rank) && (!p.decoder || p.decoder->at_record_boundary()) &&
           p.tx_credits.available() == p.tx_credits.initial() && p.rx_credits.outstanding() == 0 && !p.rc_qp &&
           !p.rc_rx_qp && p.held.empty() && // RC QPs are kept for reuse
           p.keyed_reads == 0;
}

// The table's may-go predicate is evictable().  After an overflow (no
// peer could go) nothing trims the table back: it keeps that size, each
// later insertion evicting one peer that may go by then.
VerbsEngine::Peer &VerbsEngine::peer_for(int rank)
{
    auto &slot = peers_.get_or_create(
        rank, [](int) { return std::unique_ptr<Peer>(); },
        [this](int, const std::unique_ptr<Peer> &p) { return !p || evictable(*p); });
    if (!slot) {
        slot = std::make_unique<Peer>();
        slot->rank = rank;
        slot->tx_credits = SendCredits(params_.credits_per_peer);
        slot->rx_credits = RecvCredits(params_.credits_per_peer, params_.credit_batch);
    }
    return *slot;
}

void VerbsEngine::resolve(Peer &p)
{
    if (p.have_address)
        return;
    std::string text = host_.lookup(p.rank);
    std::string why;
    if (!parse_verbs_address_text(text, &p.addr, &why))
        throw Error(LLC_ERR_PEER, "LLC_NET=verbs: the address published by " + describe(p.rank) + " is unusable: " + why);
    p.route = fabric_.connect(p.addr);
    p.have_address = true;
}

bool VerbsEngine::post_frame(Peer &p, size_t qp, uint32_t slot, size_t len)
{
    const bool rc_qp = qp == fabric_.data_qps() + 1;
    int rc = rc_qp ? fabric_.post_send_rc(p.rc_qp, slot, len) : fabric_.post_send(qp, p.route, p.addr, slot, len);
    if (rc != 0) {
        free_slots_.push_back(slot);
        fail(LLC_ERR_SYSTEM, errno_message("LLC_NET=verbs: posting a send to " + describe(p.rank), rc));
        return false;
    }
    qp_in_flight_[qp]++;
    p.in_flight++;
    if (rc_qp)
        p.rc_in_flight++;
    slot_owner_[slot] = p.rank;
    slot_rc_[slot] = rc_qp ? 1 : 0;
    return true;
}

// RC promotion, sender side (the rule of busy_promotion.hpp): count the
// frames of the window; a destination with rc_promote_frames of them is
// asked for an RC queue pair if fewer than rc_max are made (once: a refusal
// is kept while its Peer lives; no displacement, no demotion).
void VerbsEngine::consider_rc(Peer &p)
{
    if (params_.rc_max == 0 || !fabric_.rc_supported())
        return;
    p.window_frames++;
    if (p.rc == Peer::Rc::None && rc_promotion_.busy(p.window_frames) && rc_count_ < params_.rc_max) {
        uint32_t qpn = 0, psn = 0;
        void *qp = nullptr;
        try {
            qp = fabric_.rc_create(&qpn, &psn);
        } catch (const Error &) {
            qp = nullptr;
        }
        if (!qp) {
            p.rc = Peer::Rc::Refused; // this device will not: stay on DC
        } else {
            p.rc_qp = qp;
            p.rc = Peer::Rc::Requested;
            rc_count_++;
            control_pending_.push_back(Control{p.rank, VerbsFrameType::RcRequest, qpn, psn});
        }
    }
    if (++window_total_ >= params_.rc_window_frames) {
        window_total_ = 0;
        peers_.for_each([](int, std::unique_ptr<Peer> &q) {
            if (q)
                q->window_frames = 0;
        });
    }
}

void VerbsEngine::on_rc_frame(Peer &p, const VerbsFrame &f)
{
    VerbsAddress peer_rc = p.addr;
    peer_rc.rc_qpn = f.credits;
    peer_rc.psn = f.psn;
    switch (VerbsFrameType(f.type)) {
    case VerbsFrameType::RcRequest: {
        resolve(p);
        peer_rc = p.addr;
        peer_rc.rc_qpn = f.credits;
        peer_rc.psn = f.psn;
        void *qp = nullptr;
        uint32_t qpn = 0, psn = 0;
        if (!p.rc_rx_qp && rc_count_ < params_.rc_max && fabric_.rc_supported()) {
            try {
                qp = fabric_.rc_create(&qpn, &psn);
                if (qp)
                    fabric_.rc_connect(qp, peer_rc);
            } catch (const Error &) {
                if (qp)
                    fabric_.rc_destroy(qp);
                qp = nullptr;
            }
        }
        if (qp) {
            p.rc_rx_qp = qp;
            rc_count_++;
            control_pending_.push_back(Control{p.rank, VerbsFrameType::RcAccept, qpn, psn});
        } else {
            control_pending_.push_back(Control{p.rank, VerbsFrameType::RcRefuse, 0, 0});
        }
        break;
    }
    case VerbsFrameType::RcAccept:
        if (p.rc != Peer::Rc::Requested)
            break; // not asked (a protocol slip): ignored
        try {
            fabric_.rc_connect(p.rc_qp, peer_rc);
            p.rc = Peer::Rc::Up; // the next frame to it closes the DC stream (pump)
            rc_promotions_++;
            pump(p);
        } catch (const Error &) {
            // The peer holds its end for nothing: a leak of its RC budget.
            fabric_.rc_destroy(p.rc_qp);
            p.rc_qp = nullptr;
            p.rc = Peer::Rc::Refused;
            rc_count_--;
        }
        break;
    case VerbsFrameType::RcRefuse:
        if (p.rc != Peer::Rc::Requested)
            break;
        fabric_.rc_destroy(p.rc_qp);
        p.rc_qp = nullptr;
        p.rc = Peer::Rc::Refused;
        rc_count_--;
        rc_refusals_++;
        break;
    default:
        break;
    }
}

bool VerbsEngine::pump(Peer &p)
{
    bool did = false;
    const size_t dc_qp = size_t(p.rank) % fabric_.data_qps();
    const size_t rc_qp = fabric_.data_qps() + 1;
    while (!failed_) {
        // Up and the DC stream not closed yet: the next frame (with data or
        // without) goes on DC flagged LastOnDc; every later one on RC.
        const bool close_dc = p.rc == Peer::Rc::Up && !p.dc_closed;
        const bool via_rc = p.rc == Peer::Rc::Up && p.dc_closed;
        if (p.queue.empty() && !close_dc)
            break;
        if (free_slots_.empty())
            break;
        if (via_rc ? (p.rc_in_flight >= fabric_.send_queue_depth() || qp_in_flight_[rc_qp] >= fabric_.rc_cq_depth())
                   : qp_in_flight_[dc_qp] >= fabric_.send_queue_depth())
            break;
        if (!p.tx_credits.can_send()) {
            credit_stalls_++;
            break;
        }
        resolve(p);
        uint32_t slot = free_slots_.back();
        free_slots_.pop_back();
        const uint8_t flags = via_rc ? kFrameViaRc : close_dc ? kFrameLastOnDc : 0;
        size_t len = pack_data_frame(p.queue, fabric_.send_slot(slot), fabric_.slot_bytes(), params_.job_tag,
                                     host_.rank(), [this](OutgoingMessage &m) { host_.complete(m, LLC_OK); }, flags);
        p.tx_credits.consume();
        if (!post_frame(p, via_rc ? rc_qp : dc_qp, slot, len))
            break;
        if (close_dc)
            p.dc_closed = true;
        book_.sent(p.rank);
        consider_rc(p);
        did = true;
    }
    return did;
}

int VerbsEngine::send(int dest, std::unique_ptr<OutgoingMessage> msg)
{
    if (failed_)
        throw Error(LLC_ERR_PEER, failure_);
    Peer &p = peer_for(dest);
    resolve(p);
    OutgoingMessage *m = msg.get();
    p.queue.push_back(std::move(msg));
    if (p.queue.size() == 1)
        pump(p);
    if (failed_)
        throw Error(LLC_ERR_PEER, failure_);
    if (p.queue.empty() || p.queue.back().get() != m)
        return LLC_OK; // copied into send slots
    if (m->payload_len() <= host_.copy_max()) {
        m->own_payload();
        return LLC_OK;
    }
    m->owes_callback = true;
    return LLC_INPROGRESS;
}

void VerbsEngine::repost()
{
    std::vector<uint32_t> ids = pool_.take_to_post();
    if (ids.empty())
        return;
    size_t posted = fabric_.post_recv(ids.data(), ids.size());
    // What was not posted is idle again; the next progress call retries it.
    for (size_t i = posted; i < ids.size(); i++)
        pool_.unpost(ids[i]);
}

void VerbsEngine::on_record(Peer &p, const IncomingRecord &rec)
{
    const WireHeader &w = rec.wire;
    if (w.src != p.rank)
        throw Error(LLC_ERR_PEER, "protocol error: record with source rank " + std::to_string(w.src) +
                                      " in the verbs stream from " + describe(p.rank));
    switch (Kind(w.kind)) {
    case Kind::Am:
        host_.deliver(p.rank, w, rec.hdr, rec.payload, size_t(w.payload_len));
        break;
    case Kind::Goodbye:
        book_.got(p.rank);
        break;
    default:
        throw Error(LLC_ERR_PEER, "protocol error: unexpected record kind " + std::to_string(w.kind) +
                                      " in the verbs stream from " + describe(p.rank));
    }
}

void VerbsEngine::on_frame(uint32_t buffer, const char *data, size_t len)
{
    VerbsFrame f{};
    if (check_frame(data, len, params_.job_tag, host_.size(), &f) != FrameCheck::Ok) {
        pool_.release(buffer);
        stray_frames_++;
        return;
    }
    Peer &p = peer_for(f.src); // a heap object: stays put while the table changes
    if (VerbsFrameType(f.type) >= VerbsFrameType::RcRequest) {
        pool_.release(buffer);
        on_rc_frame(p, f);
        return;
    }
    if (VerbsFrameType(f.type) == VerbsFrameType::Credit) {
        pool_.release(buffer);
        if (!p.tx_credits.on_return(f.credits)) {
            fail(LLC_ERR_PEER, "protocol error: " + describe(f.src) + " returned " + std::to_string(f.credits) +
                                   " credits, more than were taken");
            return;
        }
        pump(p);
        return;
    }
    if (!p.rx_credits.on_frame()) {
        pool_.release(buffer);
        fail(LLC_ERR_PEER, "protocol error: " + describe(f.src) + " sent more than " +
                               std::to_string(params_.credits_per_peer) + " frames without credits");
        return;
    }
    book_.heard(p.rank);
    if ((f.flags & kFrameViaRc) && !p.dc_done) {
        // Overtook the end of its DC stream: copied and kept until LastOnDc
        // arrives.  Its credit comes back only when it is fed, so what is
        // held stays within the sender's credits.
        p.held.emplace_back(data + sizeof(f), f.len);
        rc_frames_held_++;
        pool_.release(buffer);
        return;
    }
    feed(p, data + sizeof(f), f.len);
    uint32_t fed = 1;
    if (f.flags & kFrameLastOnDc) {
        p.dc_done = true;
        while (!p.held.empty() && !failed_) {
            std::string bytes = std::move(p.held.front());
            p.held.pop_front();
            feed(p, bytes.data(), bytes.size());
            fed++;
        }
    }
    pool_.release(buffer); // the decoder has copied what it needs; repost() posts it again
    for (uint32_t i = 0; i < fed; i++)
        p.rx_credits.on_buffer_reposted();
    if (uint32_t n = p.rx_credits.take_return()) {
        if (p.credits_to_send == 0)
            credit_pending_.push_back(p.rank);
        p.credits_to_send += n;
    } else if (p.rx_credits.owed() > 0) {
        owed_any_ = true;
    }
}

void VerbsEngine::feed(Peer &p, const char *data, size_t len)
{
    if (!p.decoder) {
        Peer *raw = &p;
        p.decoder = std::make_unique<StreamDecoder>([this, raw](const IncomingRecord &rec) { on_record(*raw, rec); });
    }
    p.feeding = true;
    try {
        p.decoder->feed(data, len);
    } catch (const Error &e) {
        fail(e.status(), e.what());
    }
    p.feeding = false;
}

void VerbsEngine::flush_control()
{
    const size_t qp = fabric_.data_qps(); // the credit queue pair carries the handshake too
    while (!control_pending_.empty() && !failed_) {
        if (qp_in_flight_[qp] >= fabric_.send_queue_depth() || free_slots_.empty())
            return;
        const Control c = control_pending_.front();
        Peer &p = peer_for(c.rank);
        resolve(p);
        uint32_t s = free_slots_.back();
        free_slots_.pop_back();
        size_t len = write_rc_frame(fabric_.send_slot(s), c.type, params_.job_tag, host_.rank(), c.qpn, c.psn);
        control_pending_.pop_front();
        if (!post_frame(p, qp, s, len))
            return;
    }
}

void VerbsEngine::return_credits(bool flush)
{
    if (flush && owed_any_) {
        owed_any_ = false;
        peers_.for_each([this](int rank, std::unique_ptr<Peer> &p) {
            if (!p)
                return;
            if (uint32_t n = p->rx_credits.take_return(true)) {
                if (p->credits_to_send == 0)
                    credit_pending_.push_back(rank);
                p->credits_to_send += n;
            }
        });
    }
    const size_t qp = fabric_.data_qps(); // the credit queue pair
    size_t kept = 0;
    for (size_t i = 0; i < credit_pending_.size(); i++) {
        int rank = credit_pending_[i];
        std::unique_ptr<Peer> *slot = peers_.peek(rank);
        Peer *p = slot ? slot->get() : nullptr;
        if (!p || p->credits_to_send == 0)
            continue;
        if (failed_ || qp_in_flight_[qp] >= fabric_.send_queue_depth() || free_slots_.empty()) {
            credit_pending_[kept++] = rank;
            continue;
        }
        resolve(*p);
        uint32_t s = free_slots_.back();
        free_slots_.pop_back();
        size_t len = write_credit_frame(fabric_.send_slot(s), params_.job_tag, host_.rank(), p->credits_to_send);
        if (post_frame(*p, qp, s, len))
            p->credits_to_send = 0;
        else
            credit_pending_[kept++] = rank;
    }
    credit_pending_.resize(kept);
}

bool VerbsEngine::poll_send()
{
    bool did = false;
    VerbsCompletion wc[kPollBatch];
    for (size_t qp = 0; qp < qp_in_flight_.size(); qp++) {
        int n = fabric_.poll_send(qp, wc, kPollBatch);
        if (n < 0) {
            fail(LLC_ERR_SYSTEM, "LLC_NET=verbs: polling a send completion queue failed");
            return did;
        }
        for (int k = 0; k < n; k++) {
            if (wc[k].id & kKeyedReadBit) {
                if (qp_in_flight_[qp] > 0)
                    qp_in_flight_[qp]--;
                on_read_done(wc[k].id, wc[k]);
                did = true;
                continue;
            }
            uint32_t slot = uint32_t(wc[k].id);
            int rank = slot < slot_owner_.size() ? slot_owner_[slot] : -1;
            if (qp_in_flight_[qp] > 0)
                qp_in_flight_[qp]--;
            if (rank >= 0) {
                slot_owner_[slot] = -1;
                free_slots_.push_back(slot);
            }
            const bool was_rc = slot < slot_rc_.size() && slot_rc_[slot];
            if (std::unique_ptr<Peer> *owner = rank >= 0 ? peers_.peek(rank) : nullptr)
                if (*owner && (*owner)->in_flight > 0) {
                    (*owner)->in_flight--; // its Peer cannot have been evicted meanwhile (in_flight > 0)
                    if (was_rc && (*owner)->rc_in_flight > 0)
                        (*owner)->rc_in_flight--;
                }
            if (!wc[k].ok)
                fail(LLC_ERR_PEER, "LLC_NET=verbs: a send to " + describe(rank) + " failed (" + wc[k].status +
                                       "); the DC initiator is now in the error state and this version does not "
                                       "recover it: the job's verbs traffic stops (LLC_NET=udp or hybrid avoid this)");
            did = true;
        }
    }
    return did;
}

bool VerbsEngine::poll_recv()
{
    VerbsCompletion wc[kPollBatch];
    int n = fabric_.poll_recv(wc, kPollBatch);
    if (n < 0) {
        fail(LLC_ERR_SYSTEM, "LLC_NET=verbs: polling the receive completion queue failed");
        return false;
    }
    for (int k = 0; k < n; k++) {
        uint32_t id = uint32_t(wc[k].id);
        if (!pool_.on_completion(id)) {
            fail(LLC_ERR_SYSTEM, "LLC_NET=verbs: a receive completion names buffer " + std::to_string(id) +
                                     ", which was not posted (internal error)");
            continue;
        }
        if (!wc[k].ok) {
            pool_.release(id);
            fail(LLC_ERR_PEER, "LLC_NET=verbs: receive completion error (" + wc[k].status + ")");
            continue;
        }
        on_frame(id, fabric_.recv_buffer(id), wc[k].len);
    }
    return n > 0;
}

bool VerbsEngine::progress()
{
    bool did = poll_send();
    bool received = poll_recv();
    did |= received;
    repost();
    return_credits(!received); // idle receive side: return every owed credit
    flush_reads();
    did |= finish_ready_reads();
    flush_control();
    peers_.for_each([&](int, std::unique_ptr<Peer> &p) {
        if (p && (!p->queue.empty() || (p->rc == Peer::Rc::Up && !p->dc_closed)))
            did |= pump(*p);
    });
    return did;
}

bool VerbsEngine::has_pending_sends() const
{
    if (failed_)
        return false;
    bool pending = !credit_pending_.empty() || !control_pending_.empty() ||
                   free_slots_.size() != fabric_.send_slots() || !reads_.empty() || !read_queue_.empty() ||
                   !ready_.empty();
    peers_.for_each([&](int, const std::unique_ptr<Peer> &p) {
        if (p && (!p->queue.empty() || (p->rc == Peer::Rc::Up && !p->dc_closed)))
            pending = true;
    });
    return pending;
}

std::string VerbsEngine::pending_report() const
{
    std::string r;
    peers_.for_each([&](int rank, const std::unique_ptr<Peer> &p) {
        if (p && (!p->queue.empty() || p->tx_credits.available() < p->tx_credits.initial()))
            r += (r.empty() ? "" : ", ") + std::string("rank ") + std::to_string(rank) + ": " +
                 std::to_string(p->queue.size()) + " queued, " + std::to_string(p->tx_credits.available()) +
                 " credits";
    });
    r += (r.empty() ? "" : "; ") + std::to_string(fabric_.send_slots() - free_slots_.size()) + " sends in flight";
    if (!keyed_reads_.empty())
        r += "; keyed reads: " + std::to_string(keyed_reads_.size()) + " messages being read, " +
             std::to_string(reads_.size()) + " READs in flight";
    if (!book_.quiet())
        r += "; " + book_.waiting_report();
    return r;
}

void VerbsEngine::say_goodbye()
{
    if (goodbye_said_ || failed_)
        return;
    goodbye_said_ = true;
    // Every rank sent data to, also those whose Peer was evicted since: the
    // receiver waits for a Goodbye from each source it has heard from.
    for (int rank = 0; rank < host_.size(); rank++) {
        if (!book_.owes_goodbye(rank))
            continue;
        Peer &p = peer_for(rank);
        book_.said(rank);
        p.queue.push_back(OutgoingMessage::make_control(Kind::Goodbye, host_.rank(), 0));
        pump(p);
    }
}

bool VerbsEngine::incoming_quiet() const { return book_.quiet() || failed_; }

} // namespace llc
