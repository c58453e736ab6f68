// verbs_transport.cpp - see verbs_transport.hpp.  The ibv/mlx5dv side is
// compiled, never run on an RDMA device (the machines it was written on have
// none); the logic it drives (VerbsEngine) is unit-tested with a fake device.
#include "transport/verbs/verbs_transport.hpp"

#include "core/clock.hpp"
#include "core/errors.hpp"

#ifndef LLC_VERBS_DATA_PATH

namespace llc {

std::unique_ptr<Transport> open_verbs_transport(Context &, const VerbsDevice &device)
{
    throw Error(LLC_ERR_UNSUPPORTED, "LLC_NET=verbs: this libllc was built without the verbs data path "
                                     "(libibverbs and mlx5dv headers at configure time); device " +
                                         device.summary() + " cannot be used");
}

} // namespace llc

#else // LLC_VERBS_DATA_PATH

#include "core/context.hpp"
#include "core/errors.hpp"
#include "kvs/kvs.hpp"
#include "transport/verbs/verbs_registrar.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace llc {

namespace {

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

using Region = std::unique_ptr<char, void (*)(void *)>;

} // namespace

// ------------------------------------------------------------------ device

class VerbsTransport::Fabric : public VerbsFabric {
public:
    Fabric(const VerbsDevice &device, uint32_t job_tag);

    size_t data_qps() const override { return kDataDcis; }
    uint32_t send_queue_depth() const override { return dci_send_wr_; }
    size_t send_slots() const override { return kSendSlots; }
    size_t slot_bytes() const override { return kBufferBytes; }
    char *send_slot(uint32_t slot) override { return send_region_.get() + size_t(slot) * kBufferBytes; }
    const char *recv_buffer(uint32_t id) override { return recv_region_.get() + size_t(id) * kBufferBytes; }
    void *connect(const VerbsAddress &peer) override
    {
        return make_verbs_ah(pd_->get(), verbs_ah_attr(params_, peer)).release();
    }
    void disconnect(void *route) override
    {
        if (route)
            ibv_destroy_ah(static_cast<ibv_ah *>(route));
    }
    int post_send(size_t qp, void *route, const VerbsAddress &peer, uint32_t slot, size_t len) override;
    int poll_send(size_t qp, VerbsCompletion *out, int max) override
    {
        return poll(qp < send_cqs_.size() ? send_cqs_[qp].get() : rc_send_cq_.get(), out, max);
    }
    int poll_recv(VerbsCompletion *out, int max) override { return poll(recv_cq_.get(), out, max); }
    size_t post_recv(const uint32_t *ids, size_t n) override;

    bool rc_supported() const override { return true; }
    uint32_t rc_cq_depth() const override { return uint32_t(rc_cq_entries_); }
    void *rc_create(uint32_t *qpn, uint32_t *psn) override;
    void rc_connect(void *rc, const VerbsAddress &peer) override;
    int post_send_rc(void *rc, uint32_t slot, size_t len) override;
    void rc_destroy(void *rc) override;

    Registrar *registrar() override { return registrar_.get(); }
    int post_read(size_t qp, void *route, const VerbsAddress &peer, const VerbsRead &r) override;
    int post_read_rc(void *rc, const VerbsRead &r) override;

    const VerbsAddress &address() const { return local_; }
    uint32_t srq_depth() const { return srq_depth_; }

private:
    static int poll(ibv_cq *cq, VerbsCompletion *out, int max);
    struct RcQp {
        VerbsQp qp;
        uint32_t psn;
    };

    VerbsQpParams params_;
    VerbsAddress local_;
    uint32_t dci_send_wr_ = kDciSendWr; // clamped to the device's maximum
    uint32_t srq_depth_ = kSrqDepth;
    // Declaration order is teardown order reversed: QPs go before the CQs,
    // SRQ and memory regions they use, all before the PD and the device.
    std::unique_ptr<VerbsDeviceList> list_;
    std::unique_ptr<VerbsDeviceContext> dev_;
    std::unique_ptr<VerbsProtectionDomain> pd_;
    Region recv_region_{nullptr, std::free};
    Region send_region_{nullptr, std::free};
    VerbsMr recv_mr_, send_mr_;
    std::unique_ptr<VerbsRegistrar> registrar_; // the keyed reads' RegCache registers through it
    VerbsCq recv_cq_;
    std::vector<VerbsCq> send_cqs_; // one per DCI
    VerbsCq rc_send_cq_;            // shared by the RC QPs (created on demand, owned by the engine)
    int rc_cq_entries_ = kSendCqEntries;
    uint32_t next_psn_ = 0;
    VerbsSrq srq_;
    VerbsQp dct_;
    std::vector<VerbsQp> dcis_; // kDataDcis data DCIs, then the credit DCI
    std::vector<ibv_qp_ex *> qpx_;
    std::vector<mlx5dv_qp_ex *> dvqpx_;
    std::vector<ibv_recv_wr> recv_wrs_; // post_recv scratch
    std::vector<ibv_sge> recv_sges_;
};

VerbsTransport::Fabric::Fabric(const VerbsDevice &device, uint32_t job_tag)
{
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
    local_.dc_key = (uint64_t(job_tag) << 32) | 0x4c4c4356u; // the job's key: only its processes open our DCT

    // The paper's sizes, clamped to what the device allows.
    const int recv_cq_entries = std::min(kRecvCqEntries, da.max_cqe);
    const int send_cq_entries = std::min(kSendCqEntries, da.max_cqe);
    srq_depth_ = std::min<uint32_t>(kSrqDepth, uint32_t(std::max(1, da.max_srq_wr)));
    dci_send_wr_ = std::min<uint32_t>(kDciSendWr, uint32_t(std::max(1, da.max_qp_wr)));
    // RDMA READs in flight per queue pair (keyed reads): as initiator
    // and as responder, up to kReadsInFlight, as the device allows.
    params_.max_rd_atomic = uint8_t(std::max(1, std::min(kReadsInFlight, da.max_qp_init_rd_atom)));
    params_.max_dest_rd_atomic = uint8_t(std::max(1, std::min(kReadsInFlight, da.max_qp_rd_atom)));

    pd_ = std::make_unique<VerbsProtectionDomain>(c);
    if (!pd_->get())
        throw Error(LLC_ERR_SYSTEM, errno_message("LLC_NET=verbs: ibv_alloc_pd(" + device.name + ")",
                                                  pd_->error_number()));
    ibv_pd *pd = pd_->get();
    recv_region_ = Region(aligned_region(kRecvBuffers * kBufferBytes, "receive buffers"), std::free);
    send_region_ = Region(aligned_region(kSendSlots * kBufferBytes, "send slots"), std::free);
    recv_mr_ = make_verbs_mr(pd, recv_region_.get(), kRecvBuffers * kBufferBytes, IBV_ACCESS_LOCAL_WRITE,
                             "receive buffers");
    send_mr_ = make_verbs_mr(pd, send_region_.get(), kSendSlots * kBufferBytes, IBV_ACCESS_LOCAL_WRITE, "send slots");
    // Senders' payloads are read remotely, landing buffers written locally.
    registrar_ = std::make_unique<VerbsRegistrar>(pd, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
    recv_cq_ = make_verbs_cq(c, recv_cq_entries, "receive CQ");
    srq_ = make_verbs_srq(pd, srq_depth_, "shared receive queue");

    dct_ = make_dct(c, pd, recv_cq_.get(), srq_.get(), local_.dc_key);
    QpTransition t = dct_reset_to_init(params_);
    modify_verbs_qp(dct_.get(), t.attr, t.mask, "DC target");
    t = dct_init_to_rtr(params_, local_);
    modify_verbs_qp(dct_.get(), t.attr, t.mask, "DC target");
    local_.dct_number = dct_->qp_num;

    rc_cq_entries_ = send_cq_entries;
    rc_send_cq_ = make_verbs_cq(c, rc_cq_entries_, "RC send CQ");
    next_psn_ = job_tag * 2654435761u;

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
        qpx_.push_back(qpx);
        dvqpx_.push_back(mlx5dv_qp_ex_from_ibv_qp_ex(qpx));
    }
}

int VerbsTransport::Fabric::post_send(size_t qp, void *route, const VerbsAddress &peer, uint32_t slot, size_t len)
{
    ibv_qp_ex *qx = qpx_[qp];
    ibv_wr_start(qx);
    qx->wr_id = slot;
    qx->wr_flags = IBV_SEND_SIGNALED;
    ibv_wr_send(qx);
    mlx5dv_wr_set_dc_addr(dvqpx_[qp], static_cast<ibv_ah *>(route), peer.dct_number, peer.dc_key);
    ibv_wr_set_sge(qx, send_mr_->lkey, uint64_t(uintptr_t(send_slot(slot))), uint32_t(len));
    return ibv_wr_complete(qx);
}

int VerbsTransport::Fabric::post_read(size_t qp, void *route, const VerbsAddress &peer, const VerbsRead &r)
{
    ibv_qp_ex *qx = qpx_[qp];
    ibv_wr_start(qx);
    qx->wr_id = r.id;
    qx->wr_flags = IBV_SEND_SIGNALED;
    ibv_wr_rdma_read(qx, r.rkey, r.remote);
    mlx5dv_wr_set_dc_addr(dvqpx_[qp], static_cast<ibv_ah *>(route), peer.dct_number, peer.dc_key);
    ibv_wr_set_sge(qx, r.lkey, uint64_t(uintptr_t(r.local)), r.len);
    return ibv_wr_complete(qx);
}

int VerbsTransport::Fabric::post_read_rc(void *h, const VerbsRead &r)
{
    RcQp *rc = static_cast<RcQp *>(h);
    ibv_sge sge{};
    sge.addr = uint64_t(uintptr_t(r.local));
    sge.length = r.len;
    sge.lkey = r.lkey;
    ibv_send_wr wr{};
    wr.wr_id = r.id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_READ;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = r.remote;
    wr.wr.rdma.rkey = r.rkey;
    ibv_send_wr *bad = nullptr;
    return ibv_post_send(rc->qp.get(), &wr, &bad);
}

void *VerbsTransport::Fabric::rc_create(uint32_t *qpn, uint32_t *psn)
{
    auto rc = std::make_unique<RcQp>();
    rc->qp = make_rc_qp(pd_->get(), rc_send_cq_.get(), recv_cq_.get(), srq_.get(), dci_send_wr_, 0);
    QpTransition t = rc_reset_to_init(params_);
    modify_verbs_qp(rc->qp.get(), t.attr, t.mask, "RC queue pair");
    next_psn_ = next_psn_ * 1103515245u + 12345u;
    rc->psn = next_psn_ & 0xffffffu;
    *qpn = rc->qp->qp_num;
    *psn = rc->psn;
    return rc.release();
}

void VerbsTransport::Fabric::rc_connect(void *h, const VerbsAddress &peer)
{
    RcQp *rc = static_cast<RcQp *>(h);
    QpTransition t = rc_init_to_rtr(params_, peer);
    modify_verbs_qp(rc->qp.get(), t.attr, t.mask, "RC queue pair");
    t = rc_rtr_to_rts(params_, rc->psn);
    modify_verbs_qp(rc->qp.get(), t.attr, t.mask, "RC queue pair");
}

int VerbsTransport::Fabric::post_send_rc(void *h, uint32_t slot, size_t len)
{
    RcQp *rc = static_cast<RcQp *>(h);
    ibv_sge sge{};
    sge.addr = uint64_t(uintptr_t(send_slot(slot)));
    sge.length = uint32_t(len);
    sge.lkey = send_mr_->lkey;
    ibv_send_wr wr{};
    wr.wr_id = slot;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    ibv_send_wr *bad = nullptr;
    return ibv_post_send(rc->qp.get(), &wr, &bad);
}

void VerbsTransport::Fabric::rc_destroy(void *h) { delete static_cast<RcQp *>(h); }

size_t VerbsTransport::Fabric::post_recv(const uint32_t *ids, size_t n)
{
    recv_wrs_.assign(n, ibv_recv_wr{});
    recv_sges_.assign(n, ibv_sge{});
    for (size_t i = 0; i < n; i++) {
        recv_sges_[i].addr = uint64_t(uintptr_t(recv_region_.get() + size_t(ids[i]) * kBufferBytes));
        recv_sges_[i].length = uint32_t(kBufferBytes);
        recv_sges_[i].lkey = recv_mr_->lkey;
        recv_wrs_[i].wr_id = ids[i];
        recv_wrs_[i].sg_list = &recv_sges_[i];
        recv_wrs_[i].num_sge = 1;
        recv_wrs_[i].next = i + 1 < n ? &recv_wrs_[i + 1] : nullptr;
    }
    ibv_recv_wr *bad = nullptr;
    if (n == 0 || ibv_post_srq_recv(srq_.get(), recv_wrs_.data(), &bad) == 0 || !bad)
        return n;
    return size_t(bad - recv_wrs_.data()); // everything from `bad` on was not posted
}

int VerbsTransport::Fabric::poll(ibv_cq *cq, VerbsCompletion *out, int max)
{
    ibv_wc wc[32];
    int n = ibv_poll_cq(cq, std::min(max, 32), wc);
    for (int k = 0; k < n; k++) {
        out[k].id = wc[k].wr_id;
        out[k].len = wc[k].byte_len;
        out[k].ok = wc[k].status == IBV_WC_SUCCESS;
        out[k].status = out[k].ok ? std::string() : std::string(ibv_wc_status_str(wc[k].status));
    }
    return n;
}

// ------------------------------------------------------------------ Context

class VerbsTransport::Host : public VerbsHost {
public:
    explicit Host(Context &ctx) : ctx_(ctx) {}
    int rank() const override { return ctx_.rank(); }
    int size() const override { return ctx_.size(); }
    size_t copy_max() const override { return ctx_.config().copy_max; }
    std::string lookup(int rank) override { return ctx_.addresses().lookup(rank, AddrKind::Verbs); }
    void deliver(int src, const WireHeader &wire, const void *hdr, const void *data, size_t len) override
    {
        ctx_.deliver(src, wire, hdr, data, len);
    }
    void complete(OutgoingMessage &msg, int status) override { ctx_.defer_completion(msg, status); }
    void report_error(int status, const std::string &message) override { ctx_.report_error(status, message); }

private:
    Context &ctx_;
};

VerbsTransport::VerbsTransport(Context &ctx, const VerbsDevice &device) : ctx_(ctx)
{
    const uint32_t job_tag = kvs_job_tag(ctx.job_id());
    fabric_ = std::make_unique<Fabric>(device, job_tag);
    host_ = std::make_unique<Host>(ctx);
    VerbsEngineParams p;
    p.recv_buffers = kRecvBuffers;
    p.recv_post_bound = fabric_->srq_depth();
    p.credits_per_peer = kCreditsPerPeer;
    p.credit_batch = kCreditBatch;
    p.max_peers = ctx.config().max_contexts;
    p.job_tag = job_tag;
    // RC for busy peers: LLC_MAX_RC_PER_NODE RC QPs per process (not shared
    // by the node's processes as the hybrid's ConnectedSlots are), a destination
    // being busy at LLC_HYBRID_PROMOTE_MSGS of the last 4x that many frames.
    p.rc_max = size_t(ctx.config().max_rc_per_node);
    p.rc_promote_frames = uint32_t(std::max<uint64_t>(1, std::min<uint64_t>(ctx.config().hybrid_promote_msgs, 1u << 20)));
    p.rc_window_frames = 4 * p.rc_promote_frames;
    // Keyed reads for the tagged layer's large messages (LLC_VERBS_RNDV_BYTES,
    // 0: off) through a RegCache of LLC_REG_CACHE_MAX registrations.
    p.keyed_reads = ctx.config().verbs_rndv_bytes > 0;
    p.reg_cache_max = ctx.config().reg_cache_max;
    engine_ = std::make_unique<VerbsEngine>(*host_, *fabric_, p);
    // DC queue pairs: the hardware delivers in order and retransmits.
    caps_ = TransportCaps::named("verbs").with(CapOrdered | CapReliable);
    if (engine_->keyed_reads())
        caps_ = caps_.with(CapKeyedRead);
}

VerbsTransport::~VerbsTransport()
{
    engine_.reset(); // its routes (address handles) go before the device
}

const VerbsAddress &VerbsTransport::address() const { return fabric_->address(); }

void VerbsTransport::export_stats() { engine_->export_stats(ctx_.counters()); }

std::unique_ptr<Transport> open_verbs_transport(Context &ctx, const VerbsDevice &device)
{
    auto t = std::make_unique<VerbsTransport>(ctx, device);
    t->publish_address();
    return t;
}

const TransportCaps &VerbsTransport::caps() const { return caps_; }

std::unique_ptr<Exposure> VerbsTransport::expose(int dest, const llc_iov_t *iov, int iovcnt, std::string *why)
{
    (void)dest; // (the rkey is good for any peer of the protection domain)
    auto e = engine_->expose(iov, iovcnt, why);
    export_stats();
    return e;
}

bool VerbsTransport::read_keyed(int src, const KeyedSpan *spans, size_t n, uint64_t len, KeyedReadDone done,
                                std::string *why)
{
    return engine_->read_keyed(src, spans, n, len, std::move(done), why);
}

void VerbsTransport::publish_address()
{
    ctx_.addresses().publish(AddrKind::Verbs, verbs_address_text(fabric_->address()));
}

} // namespace llc

#endif // LLC_VERBS_DATA_PATH
