// verbs_transport.cpp - see verbs_transport.hpp.  Compiled, never run on an
// RDMA device (the machines it was written on have none).
#include "verbs_transport.hpp"

#ifdef LLC_VERBS_DATA_PATH

#include "context.hpp"
#include "errors.hpp"
#include "kvs.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace llc {

namespace {

constexpr int kPollBatch = 32;

char *aligned_region(size_t bytes, const char *what)
{
    void *p = nullptr;
    int rc = posix_memalign(&p, 4096, bytes);
    if (rc != 0)
        throw Error(LLC_ERR_NOMEM, errno_message(std::string("LLC_NET=verbs: allocating the ") + what + " (" +
                                                     std::to_string(bytes) + " bytes)", rc));
    std::memset(p, 0, bytes);
    return static_cast<char *>(p);
}

} // namespace

VerbsTransport::VerbsTransport(Context &ctx, const VerbsDevice &device)
    : ctx_(ctx), pool_(kRecvBuffers, kBufferBytes, kSrqDepth), peers_(ctx.config().max_contexts, {}, 0, true)
{
    job_tag_ = kvs_job_tag(ctx.job_id());
    device_name_ = device.name;
    const VerbsPort *port = nullptr;
    for (const VerbsPort &p : device.ports)
        if (p.active) {
            port = &p;
            break;
        }
    if (!port)
        throw Error(LLC_ERR_UNSUPPORTED, "LLC_NET=verbs: device " + device.name + " has no ACTIVE port");

    list_ = std::make_unique<VerbsDeviceList>();
    ibv_device *dev = nullptr;
    for (int i = 0; i < list_->count(); i++)
        if (device.name == ibv_get_device_name((*list_)[i]))
            dev = (*list_)[i];
    if (!dev)
        throw Error(LLC_ERR_SYSTEM, "LLC_NET=verbs: device " + device.name + " disappeared since discovery");
    if (!mlx5dv_is_supported(dev))
        throw Error(LLC_ERR_UNSUPPORTED, "LLC_NET=verbs: device " + device.name +
                                             " is not an mlx5 device, and the verbs transport needs mlx5 DC "
                                             "queue pairs; use LLC_NET=udp or hybrid (or LLC_VERBS_FALLBACK)");
    dev_ = std::make_unique<VerbsDeviceContext>(dev);
    if (!dev_->get())
        throw Error(LLC_ERR_SYSTEM, errno_message("LLC_NET=verbs: ibv_open_device(" + device.name + ")",
                                                  dev_->error_number()) +
                                        "; check the permissions of /dev/infiniband/uverbs*");
    ibv_context *c = dev_->get();

    ibv_device_attr da{};
    if (int rc = ibv_query_device(c, &da))
        throw Error(LLC_ERR_SYSTEM, errno_message("LLC_NET=verbs: ibv_query_device(" + device.name + ")", rc));
    ibv_port_attr pa{};
    if (int rc = ibv_query_port(c, uint8_t(port->number), &pa))
        throw Error(LLC_ERR_SYSTEM, errno_message("LLC_NET=verbs: ibv_query_port(" + device.name + ", " +
                                                      std::to_string(port->number) + ")", rc));
    params_.port = uint8_t(port->number);
    params_.mtu = pa.active_mtu;
    params_.force_global = pa.link_layer == IBV_LINK_LAYER_ETHERNET; // RoCE: always a GRH
    local_.port = params_.port;
    local_.lid = pa.lid;
    local_.mtu = uint8_t(pa.active_mtu);
    ibv_gid gid{};
    if (ibv_query_gid(c, params_.port, params_.sgid_index, &gid) == 0)
        std::memcpy(local_.gid.data(), gid.raw, local_.gid.size());
    local_.dc_key = (uint64_t(job_tag_) << 32) | 0x4c4c4356u; // the job's key: only its processes open our DCT

    // The paper's sizes, clamped to what the device allows.
    const int recv_cq_entries = std::min(kRecvCqEntries, da.max_cqe);
    const int send_cq_entries = std::min(kSendCqEntries, da.max_cqe);
    const uint32_t srq_depth = std::min<uint32_t>(kSrqDepth, uint32_t(std::max(1, da.max_srq_wr)));
    dci_send_wr_ = std::min<uint32_t>(kDciSendWr, uint32_t(std::max(1, da.max_qp_wr)));
    pool_ = RecvBufferPool(kRecvBuffers, kBufferBytes, srq_depth);

    pd_ = std::make_unique<VerbsProtectionDomain>(c);
    if (!pd_->get())
        throw Error(LLC_ERR_SYSTEM, errno_message("LLC_NET=verbs: ibv_alloc_pd(" + device.name + ")",
                                                  pd_->error_number()));
    ibv_pd *pd = pd_->get();
    recv_region_ = std::unique_ptr<char, void (*)(void *)>(aligned_region(pool_.region_bytes(), "receive buffers"), std::free);
    send_region_ = std::unique_ptr<char, void (*)(void *)>(aligned_region(kSendSlots * kBufferBytes, "send slots"), std::free);
    recv_mr_ = make_verbs_mr(pd, recv_region_.get(), pool_.region_bytes(), IBV_ACCESS_LOCAL_WRITE, "receive buffers");
    send_mr_ = make_verbs_mr(pd, send_region_.get(), kSendSlots * kBufferBytes, IBV_ACCESS_LOCAL_WRITE, "send slots");
    recv_cq_ = make_verbs_cq(c, recv_cq_entries, "receive CQ");
    srq_ = make_verbs_srq(pd, srq_depth, "shared receive queue");

    dct_ = make_dct(c, pd, recv_cq_.get(), srq_.get(), local_.dc_key);
    QpTransition t = dct_reset_to_init(params_);
    modify_verbs_qp(dct_.get(), t.attr, t.mask, "DC target");
    t = dct_init_to_rtr(params_, local_);
    modify_verbs_qp(dct_.get(), t.attr, t.mask, "DC target");
    local_.dct_number = dct_->qp_num;

    for (size_t i = 0; i < kDataDcis + 1; i++) {
        const char *what = i < kDataDcis ? "data DC initiator" : "credit DC initiator";
        send_cqs_.push_back(make_verbs_cq(c, send_cq_entries, "send CQ"));
        dcis_.push_back(make_dci(c, pd, send_cqs_.back().get(), recv_cq_.get(), dci_send_wr_));
        ibv_qp *qp = dcis_.back().get();
        t = dci_reset_to_init(params_);
        modify_verbs_qp(qp, t.attr, t.mask, what);
        t = dci_init_to_rtr(params_);
        modify_verbs_qp(qp, t.attr, t.mask, what);
        t = dci_rtr_to_rts(params_);
        modify_verbs_qp(qp, t.attr, t.mask, what);
        ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qp);
        if (!qpx)
            throw Error(LLC_ERR_UNSUPPORTED, "LLC_NET=verbs: ibv_qp_to_qp_ex gave nothing for a " + std::string(what) +
                                                 " (rdma-core too old?); use LLC_NET=udp or hybrid");
        dci_qpx_.push_back(qpx);
        dci_dvqpx_.push_back(mlx5dv_qp_ex_from_ibv_qp_ex(qpx));
    }
    dci_in_flight_.assign(dcis_.size(), 0);

    free_slots_.reserve(kSendSlots);
    for (size_t i = kSendSlots; i-- > 0;)
        free_slots_.push_back(uint32_t(i));
    slot_owner_.assign(kSendSlots, -1);
    talked_.assign(size_t(ctx.size()), false);
    repost();
    if (pool_.posted() == 0)
        throw Error(LLC_ERR_SYSTEM, "LLC_NET=verbs: no receive buffer could be posted to the shared receive queue");
}

VerbsTransport::~VerbsTransport() = default;

void VerbsTransport::publish_address() { ctx_.addresses().publish(AddrKind::Verbs, verbs_address_text(local_)); }

std::string VerbsTransport::describe(int rank) const
{
    return "rank " + std::to_string(rank) + " (verbs, device " + device_name_ + ")";
}

void VerbsTransport::fail(int status, const std::string &message)
{
    if (!failed_) {
        failed_ = true;
        failure_ = message;
    }
    ctx_.report_error(status, message);
}

bool VerbsTransport::evictable(const Peer &p) const
{
    return p.queue.empty() && !p.feeding && p.credits_to_send == 0 && p.in_flight == 0 && !p.goodbye_rx &&
           !p.goodbye_queued &&
           (!p.decoder || p.decoder->at_record_boundary()) && p.tx_credits.available() == p.tx_credits.initial() &&
           p.rx_credits.outstanding() == 0;
}

VerbsTransport::Peer &VerbsTransport::peer_for(int rank)
{
    auto &slot = peers_.get_or_create(
        rank,
        [](int) { return std::unique_ptr<Peer>(); },
        [this](int, const std::unique_ptr<Peer> &p) { return !p || evictable(*p); });
    if (!slot) {
        slot = std::make_unique<Peer>();
        slot->rank = rank;
    }
    return *slot;
}

void VerbsTransport::resolve(Peer &p)
{
    if (p.have_address)
        return;
    std::string text = ctx_.addresses().lookup(p.rank, AddrKind::Verbs);
    std::string why;
    if (!parse_verbs_address_text(text, &p.addr, &why))
        throw Error(LLC_ERR_PEER, "LLC_NET=verbs: the address published by " + describe(p.rank) + " is unusable: " + why);
    p.ah = make_verbs_ah(pd_->get(), verbs_ah_attr(params_, p.addr));
    p.have_address = true;
}

int32_t VerbsTransport::take_slot()
{
    if (free_slots_.empty())
        return -1;
    uint32_t s = free_slots_.back();
    free_slots_.pop_back();
    return int32_t(s);
}

void VerbsTransport::release_slot(uint32_t slot)
{
    slot_owner_[slot] = -1;
    free_slots_.push_back(slot);
}

bool VerbsTransport::post_frame(Peer &p, size_t dci, uint32_t slot, size_t len)
{
    ibv_qp_ex *qx = dci_qpx_[dci];
    ibv_wr_start(qx);
    qx->wr_id = slot;
    qx->wr_flags = IBV_SEND_SIGNALED;
    ibv_wr_send(qx);
    mlx5dv_wr_set_dc_addr(dci_dvqpx_[dci], p.ah.get(), p.addr.dct_number, p.addr.dc_key);
    ibv_wr_set_sge(qx, send_mr_->lkey, uint64_t(uintptr_t(slot_data(slot))), uint32_t(len));
    int rc = ibv_wr_complete(qx);
    if (rc != 0) {
        release_slot(slot);
        fail(LLC_ERR_SYSTEM, errno_message("LLC_NET=verbs: posting a send to " + describe(p.rank), rc));
        return false;
    }
    dci_in_flight_[dci]++;
    p.in_flight++;
    slot_owner_[slot] = p.rank;
    return true;
}

bool VerbsTransport::pump(Peer &p)
{
    bool did = false;
    // TODO(RC promotion, doc/libllc.md "Verbs"): here a destination found
    // busy (frames per period, as the hybrid's sender driver counts sends)
    // would get an RC QP, within LLC_MAX_RC_PER_NODE (RcSlots), through a
    // connect handshake carrying VerbsAddress::rc_qpn/psn and the
    // rc_* transitions of verbs_qp_attr.hpp, with a marker record ending the
    // DC stream before RC takes over.  Not written: everything goes over DC.
    const size_t dci = size_t(p.rank) % kDataDcis;
    while (!p.queue.empty() && !failed_) {
        if (dci_in_flight_[dci] >= dci_send_wr_ || !p.tx_credits.can_send() || free_slots_.empty())
            break;
        resolve(p);
        uint32_t slot = uint32_t(take_slot());
        size_t len = pack_data_frame(p.queue, slot_data(slot), kBufferBytes, job_tag_, ctx_.rank(),
                                     [this](OutgoingMessage &m) { ctx_.defer_completion(m, LLC_OK); }); // copied: the caller's buffers are free
        p.tx_credits.consume();
        if (!post_frame(p, dci, slot, len))
            break;
        talked_[size_t(p.rank)] = true;
        did = true;
    }
    return did;
}

int VerbsTransport::send(int dest, std::unique_ptr<OutgoingMessage> msg)
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
    if (m->payload_len() <= ctx_.config().copy_max) {
        m->own_payload();
        return LLC_OK;
    }
    m->owes_callback = true;
    return LLC_INPROGRESS;
}

void VerbsTransport::repost()
{
    std::vector<uint32_t> ids = pool_.take_to_post();
    if (ids.empty())
        return;
    recv_wrs_.assign(ids.size(), ibv_recv_wr{});
    recv_sges_.assign(ids.size(), ibv_sge{});
    for (size_t i = 0; i < ids.size(); i++) {
        recv_sges_[i].addr = uint64_t(uintptr_t(recv_region_.get() + pool_.offset(ids[i])));
        recv_sges_[i].length = uint32_t(pool_.buffer_bytes());
        recv_sges_[i].lkey = recv_mr_->lkey;
        recv_wrs_[i].wr_id = ids[i];
        recv_wrs_[i].sg_list = &recv_sges_[i];
        recv_wrs_[i].num_sge = 1;
        recv_wrs_[i].next = i + 1 < ids.size() ? &recv_wrs_[i + 1] : nullptr;
    }
    ibv_recv_wr *bad = nullptr;
    if (ibv_post_srq_recv(srq_.get(), recv_wrs_.data(), &bad) != 0 && bad) {
        // Everything from `bad` on was not posted: those buffers are idle
        // again and the next progress call retries them.
        for (ibv_recv_wr *w = bad; w; w = w->next)
            pool_.unpost(uint32_t(w->wr_id));
    }
}

void VerbsTransport::on_record(Peer &p, const IncomingRecord &rec)
{
    const WireHeader &w = rec.wire;
    if (w.src != p.rank)
        throw Error(LLC_ERR_PEER, "protocol error: record with source rank " + std::to_string(w.src) +
                                      " in the verbs stream from " + describe(p.rank));
    switch (Kind(w.kind)) {
    case Kind::Am:
        ctx_.deliver(p.rank, w, rec.hdr, rec.payload, size_t(w.payload_len));
        break;
    case Kind::Goodbye:
        p.goodbye_rx = true;
        break;
    default:
        throw Error(LLC_ERR_PEER, "protocol error: unexpected record kind " + std::to_string(w.kind) +
                                      " in the verbs stream from " + describe(p.rank));
    }
}

void VerbsTransport::on_frame(uint32_t buffer, const char *data, size_t len)
{
    VerbsFrame f{};
    if (check_frame(data, len, job_tag_, ctx_.size(), &f) != FrameCheck::Ok) {
        pool_.release(buffer);
        stray_frames_++;
        return;
    }
    Peer &p = peer_for(f.src);
    switch (VerbsFrameType(f.type)) {
    case VerbsFrameType::Data: {
        if (!p.rx_credits.on_frame()) {
            pool_.release(buffer);
            fail(LLC_ERR_PEER, "protocol error: " + describe(f.src) + " sent more than " +
                                   std::to_string(kCreditsPerPeer) + " frames without credits");
            return;
        }
        p.heard = true;
        if (!p.decoder) {
            Peer *raw = &p; // Peers are heap objects: the pointer outlives table growth
            p.decoder = std::make_unique<StreamDecoder>([this, raw](const IncomingRecord &rec) { on_record(*raw, rec); });
        }
        p.feeding = true;
        try {
            p.decoder->feed(data + sizeof(f), f.len);
        } catch (const Error &e) {
            p.feeding = false;
            pool_.release(buffer);
            fail(e.status(), e.what());
            return;
        }
        p.feeding = false;
        pool_.release(buffer); // the decoder has copied what it needs; repost() posts it again
        p.rx_credits.on_buffer_reposted();
        if (uint32_t n = p.rx_credits.take_return()) {
            if (p.credits_to_send == 0)
                credit_pending_.push_back(p.rank);
            p.credits_to_send += n;
        } else if (p.rx_credits.owed() > 0) {
            owed_any_ = true;
        }
        break;
    }
    case VerbsFrameType::Credit:
        pool_.release(buffer);
        if (!p.tx_credits.on_return(f.credits)) {
            fail(LLC_ERR_PEER, "protocol error: " + describe(f.src) + " returned " + std::to_string(f.credits) +
                                   " credits, more than were taken");
            return;
        }
        pump(p);
        break;
    default:
        pool_.release(buffer);
        stray_frames_++;
        break;
    }
}

void VerbsTransport::return_credits(bool flush)
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
    const size_t dci = kDataDcis; // the credit DCI
    size_t kept = 0;
    for (size_t i = 0; i < credit_pending_.size(); i++) {
        int rank = credit_pending_[i];
        std::unique_ptr<Peer> *slot = peers_.peek(rank);
        Peer *p = slot ? slot->get() : nullptr;
        if (!p || p->credits_to_send == 0)
            continue;
        if (failed_ || dci_in_flight_[dci] >= dci_send_wr_ || free_slots_.empty()) {
            credit_pending_[kept++] = rank;
            continue;
        }
        resolve(*p);
        uint32_t s = uint32_t(take_slot());
        size_t len = write_credit_frame(slot_data(s), job_tag_, ctx_.rank(), p->credits_to_send);
        if (post_frame(*p, dci, s, len))
            p->credits_to_send = 0;
        else
            credit_pending_[kept++] = rank;
    }
    credit_pending_.resize(kept);
}

bool VerbsTransport::poll_send()
{
    bool did = false;
    ibv_wc wc[kPollBatch];
    for (size_t i = 0; i < send_cqs_.size(); i++) {
        int n = ibv_poll_cq(send_cqs_[i].get(), kPollBatch, wc);
        if (n < 0) {
            fail(LLC_ERR_SYSTEM, "LLC_NET=verbs: ibv_poll_cq on a send CQ failed");
            return did;
        }
        for (int k = 0; k < n; k++) {
            uint32_t slot = uint32_t(wc[k].wr_id);
            int rank = slot < slot_owner_.size() ? slot_owner_[slot] : -1;
            dci_in_flight_[i]--;
            if (slot < slot_owner_.size())
                release_slot(slot);
            if (std::unique_ptr<Peer> *owner = rank >= 0 ? peers_.peek(rank) : nullptr)
                if (*owner && (*owner)->in_flight > 0)
                    (*owner)->in_flight--; // its Peer cannot have been evicted meanwhile (in_flight > 0)
            if (wc[k].status != IBV_WC_SUCCESS)
                fail(LLC_ERR_PEER, "LLC_NET=verbs: a send to " + describe(rank) + " failed (" +
                                       ibv_wc_status_str(wc[k].status) +
                                       "); the DC initiator is now in the error state and this version does not "
                                       "recover it: the job's verbs traffic stops (LLC_NET=udp or hybrid avoid this)");
            did = true;
        }
    }
    return did;
}

bool VerbsTransport::poll_recv()
{
    ibv_wc wc[kPollBatch];
    int n = ibv_poll_cq(recv_cq_.get(), kPollBatch, wc);
    if (n < 0) {
        fail(LLC_ERR_SYSTEM, "LLC_NET=verbs: ibv_poll_cq on the receive CQ failed");
        return false;
    }
    for (int k = 0; k < n; k++) {
        uint32_t id = uint32_t(wc[k].wr_id);
        if (!pool_.on_completion(id)) {
            fail(LLC_ERR_SYSTEM, "LLC_NET=verbs: a receive completion names buffer " + std::to_string(id) +
                                     ", which was not posted (internal error)");
            continue;
        }
        if (wc[k].status != IBV_WC_SUCCESS) {
            pool_.release(id);
            fail(LLC_ERR_PEER, std::string("LLC_NET=verbs: receive completion error (") +
                                   ibv_wc_status_str(wc[k].status) + ")");
            continue;
        }
        on_frame(id, recv_region_.get() + pool_.offset(id), wc[k].byte_len);
    }
    return n > 0;
}

bool VerbsTransport::progress()
{
    bool did = poll_send();
    bool received = poll_recv();
    did |= received;
    repost();
    return_credits(!received); // idle receive side: return every owed credit
    peers_.for_each([&](int, std::unique_ptr<Peer> &p) {
        if (p && !p->queue.empty())
            did |= pump(*p);
    });
    return did;
}

bool VerbsTransport::has_pending_sends() const
{
    if (failed_)
        return false;
    bool pending = !credit_pending_.empty() || free_slots_.size() != kSendSlots;
    peers_.for_each([&](int, const std::unique_ptr<Peer> &p) {
        if (p && !p->queue.empty())
            pending = true;
    });
    return pending;
}

std::string VerbsTransport::pending_report() const
{
    std::string r;
    peers_.for_each([&](int rank, const std::unique_ptr<Peer> &p) {
        if (p && (!p->queue.empty() || p->tx_credits.available() < p->tx_credits.initial()))
            r += (r.empty() ? "" : ", ") + std::string("rank ") + std::to_string(rank) + ": " +
                 std::to_string(p->queue.size()) + " queued, " + std::to_string(p->tx_credits.available()) +
                 " credits";
    });
    r += (r.empty() ? "" : "; ") + std::to_string(kSendSlots - free_slots_.size()) + " sends in flight";
    return r;
}

void VerbsTransport::say_goodbye()
{
    if (goodbye_said_ || failed_)
        return;
    goodbye_said_ = true;
    // Every rank sent data to, also those whose Peer was evicted since: the
    // receiver waits for a Goodbye from each source it has heard from.
    for (int rank = 0; rank < ctx_.size(); rank++) {
        if (!talked_[size_t(rank)])
            continue;
        Peer &p = peer_for(rank);
        if (p.goodbye_queued)
            continue;
        p.goodbye_queued = true;
        p.queue.push_back(OutgoingMessage::make_control(Kind::Goodbye, ctx_.rank(), 0));
        pump(p);
    }
}

bool VerbsTransport::incoming_quiet() const
{
    bool quiet = true;
    peers_.for_each([&](int, const std::unique_ptr<Peer> &p) {
        if (p && p->heard && !p->goodbye_rx)
            quiet = false;
    });
    return quiet || failed_;
}

} // namespace llc

#endif // LLC_VERBS_DATA_PATH
