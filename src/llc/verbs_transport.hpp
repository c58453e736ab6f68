// verbs_transport.hpp - the verbs data path (LLC_NET=verbs): SENDs over
// mlx5 DC queue pairs into a shared receive queue, with credit flow control.
//
//   * One device and port (the first usable one discovery found), one
//     protection domain.
//   * DC initiators (DCIs, mlx5dv): kDataDcis for data, chosen by destination
//     (dest mod kDataDcis, so the frames of one ordered pair keep their
//     order), and one for credit returns.  Each has a send queue of
//     kDciSendWr and a send CQ of kSendCqEntries.
//   * One DC target (DCT) receiving every frame through one shared receive
//     queue (SRQ) of kSrqDepth work requests, whose buffers are kRecvBuffers
//     x kBufferBytes in one registered region (RecvBufferPool: at most
//     kSrqDepth posted, the rest being read or waiting to be reposted), and a
//     receive CQ of kRecvCqEntries (clamped to the device's maximum).
//   * Every SEND is one frame: a VerbsFrame header and up to kBufferBytes -
//     sizeof(VerbsFrame) bytes of the pair's record stream (the records of
//     am_protocol.hpp, decoded with StreamDecoder as on tcp and udp): small
//     messages travel in one frame, several small ones may share a frame,
//     large ones are fragmented over several frames.  Send memory: kSendSlots
//     registered slots of kBufferBytes; a message is copied into slots as
//     credits and slots allow, so the caller's buffer is free once the
//     message is fully copied (completion callback) - no zero-copy
//     rendezvous yet.
//   * Credits (verbs_credits.hpp): kCreditsPerPeer data frames in flight per
//     destination until the destination returns credits (batches of
//     kCreditBatch, or all owed when its receive side is idle) on the credit
//     DCI.  An SRQ that runs dry anyway (many senders) is covered by the
//     adapter's receiver-not-ready retries (rnr_retry 7: for ever).
//   * Per-peer state (address handle, credits, queue, decoder) in a PeerTable
//     capped by LLC_MAX_CONTEXTS; an entry is evicted only when nothing is
//     queued or partly decoded and no credit is outstanding either way.
//   * Addresses: VerbsAddress (LID, GID, port, MTU, DCT number, DC key)
//     published through AddressBook (AddrKind::Verbs) and looked up on first
//     contact.
//
// Not done (see doc/libllc.md, "Verbs"): RC queue pairs for busy peers (the
// promotion hook, TODO), the transport-switching DCI, zero-copy RDMA READ
// rendezvous, recovery of a DCI in the error state (a failed send fails the
// transport), a completion channel for sleeping.  Built only with libibverbs
// and mlx5dv (LLC_VERBS_DATA_PATH); never run on InfiniBand hardware.
#pragma once

#include "verbs_devices.hpp"

#ifdef LLC_VERBS_DATA_PATH

#include "outgoing_message.hpp"
#include "peer_table.hpp"
#include "stream_decoder.hpp"
#include "verbs_address.hpp"
#include "verbs_credits.hpp"
#include "verbs_frame.hpp"
#include "verbs_handles.hpp"
#include "verbs_objects.hpp"
#include "verbs_qp_attr.hpp"
#include "verbs_recv_pool.hpp"

#include <infiniband/mlx5dv.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace llc {

class Context;

class VerbsTransport {
public:
    static constexpr size_t kDataDcis = 2;
    static constexpr uint32_t kDciSendWr = 512;
    static constexpr int kSendCqEntries = 2048;
    static constexpr int kRecvCqEntries = 40000;
    static constexpr uint32_t kSrqDepth = 2048;
    static constexpr size_t kRecvBuffers = 2 * 2048;
    static constexpr size_t kBufferBytes = 4096;
    static constexpr size_t kSendSlots = 1024;
    static constexpr uint32_t kCreditsPerPeer = 64;
    static constexpr uint32_t kCreditBatch = 16;

    // Opens `device` (by name) on its first ACTIVE port and creates every
    // queue.  Throws Error (LLC_ERR_UNSUPPORTED when the device has no DC
    // support, LLC_ERR_SYSTEM otherwise) with what failed and what to do.
    VerbsTransport(Context &ctx, const VerbsDevice &device);
    ~VerbsTransport();
    VerbsTransport(const VerbsTransport &) = delete;
    VerbsTransport &operator=(const VerbsTransport &) = delete;

    void publish_address();
    const VerbsAddress &address() const { return local_; }
    int send(int dest, std::unique_ptr<OutgoingMessage> msg);
    bool progress();
    bool has_pending_sends() const;
    std::string pending_report() const;
    void say_goodbye();
    bool incoming_quiet() const;
    size_t peer_count() const { return peers_.size(); }

private:
    struct Peer {
        int rank = -1;
        bool have_address = false;
        VerbsAddress addr;
        VerbsAh ah;
        SendCredits tx_credits{kCreditsPerPeer};
        RecvCredits rx_credits{kCreditsPerPeer, kCreditBatch};
        std::deque<std::unique_ptr<OutgoingMessage>> queue;
        std::unique_ptr<StreamDecoder> decoder;
        uint32_t credits_to_send = 0; // taken from rx_credits, not yet posted
        uint32_t in_flight = 0;       // posted SENDs not yet completed (they use `ah`)
        bool goodbye_queued = false;
        bool goodbye_rx = false;
        bool heard = false;   // a data frame arrived from it
        bool feeding = false; // its decoder is running (a handler may send): not evictable
    };

    Peer &peer_for(int rank);
    void resolve(Peer &p);
    bool evictable(const Peer &p) const;
    bool pump(Peer &p);
    bool post_frame(Peer &p, size_t dci, uint32_t slot, size_t len);
    bool poll_send();
    bool poll_recv();
    void on_frame(uint32_t buffer, const char *data, size_t len);
    void on_record(Peer &p, const IncomingRecord &rec);
    void repost();
    void return_credits(bool flush);
    int32_t take_slot();
    void release_slot(uint32_t slot);
    char *slot_data(uint32_t slot) { return send_region_.get() + size_t(slot) * kBufferBytes; }
    // The transport is unusable from now on: every later send throws, and
    // the current llc_progress returns the error.
    void fail(int status, const std::string &message);
    std::string describe(int rank) const;

    Context &ctx_;
    uint32_t job_tag_ = 0;
    VerbsQpParams params_;
    VerbsAddress local_;
    std::string device_name_;
    // Declaration order is teardown order reversed: QPs go before the CQs,
    // SRQ and memory regions they use, all before the PD and the device.
    std::unique_ptr<VerbsDeviceList> list_;
    std::unique_ptr<VerbsDeviceContext> dev_;
    std::unique_ptr<VerbsProtectionDomain> pd_;
    std::unique_ptr<char, void (*)(void *)> recv_region_{nullptr, nullptr};
    std::unique_ptr<char, void (*)(void *)> send_region_{nullptr, nullptr};
    VerbsMr recv_mr_, send_mr_;
    VerbsCq recv_cq_;
    std::vector<VerbsCq> send_cqs_; // one per DCI
    VerbsSrq srq_;
    VerbsQp dct_;
    std::vector<VerbsQp> dcis_; // kDataDcis data DCIs, then the credit DCI
    std::vector<uint32_t> dci_in_flight_;
    std::vector<ibv_qp_ex *> dci_qpx_;      // the extended send interface of each DCI
    std::vector<mlx5dv_qp_ex *> dci_dvqpx_; // ... and its mlx5 part (mlx5dv_wr_set_dc_addr)
    uint32_t dci_send_wr_ = kDciSendWr;     // clamped to the device's maximum
    std::vector<ibv_recv_wr> recv_wrs_;     // repost() scratch
    std::vector<ibv_sge> recv_sges_;
    RecvBufferPool pool_;
    std::vector<uint32_t> free_slots_;
    std::vector<int32_t> slot_owner_; // rank a slot's frame was sent to (-1: free)
    bool owed_any_ = false;           // some peer owes credits below the batch (flushed when idle)
    uint64_t stray_frames_ = 0;       // frames of another job or with a bad source, dropped
    PeerTable<std::unique_ptr<Peer>> peers_;
    std::vector<int> credit_pending_; // ranks with credits_to_send > 0
    bool failed_ = false;
    std::string failure_;
    bool goodbye_said_ = false;
    std::vector<bool> talked_; // one bit per rank: data was sent to it (it gets a Goodbye at finalize)
};

} // namespace llc

#else // !LLC_VERBS_DATA_PATH

namespace llc {
// Without the data path Context holds an always-empty pointer to this.
class VerbsTransport {};
} // namespace llc

#endif // LLC_VERBS_DATA_PATH
