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
//     message is fully copied (completion callback).  Active messages of at
//     least LLC_VERBS_RNDV_BYTES go by the tagged layer's rendezvous instead
//     (AmRts, tagged_am.cpp) with keyed reads (CapKeyedRead): the payload
//     is registered through the RegCache (VerbsRegistrar on this PD), the
//     receiver reads it with RDMA READ (ibv_wr_rdma_read on a DCI to our
//     DCT, or on the RC QP) and answers Fin (see VerbsEngine).
//   * Credits (verbs_credits.hpp): kCreditsPerPeer data frames in flight per
//     destination until the destination returns credits (batches of
//     kCreditBatch, or all owed when its receive side is idle) on the credit
//     DCI.  An SRQ that runs dry anyway (many senders) is covered by the
//     adapter's receiver-not-ready retries (rnr_retry 7: for ever).
//   * Per-peer state (address handle, credits, queue, decoder) in a PeerTable
//     capped by LLC_MAX_CONTEXTS (the policy of every capped table, PeerCap
//     in support/peer_cap.hpp); an entry is evicted only when nothing is
//     queued or partly decoded and no credit is outstanding either way.
//   * Addresses: VerbsAddress (LID, GID, port, MTU, DCT number, DC key)
//     published through AddressBook (AddrKind::Verbs) and looked up on first
//     contact.
//
// The logic (everything above but the ibv calls) is VerbsEngine
// (verbs_engine.hpp), tested with a fake device; this file is the device side
// (VerbsFabric over ibv/mlx5dv) and the glue to Context.
//
// RC queue pairs for busy peers: see VerbsEngine (promotion and the
// handshake) and rc_* of the fabric here.
//
// Not done (see doc/libllc-verbs.md): demotion of RC peers, the separate
// transport-switching DCI, recovery of a DCI
// in the error state (a failed send fails the transport), a completion
// channel for sleeping.  Built only with libibverbs and mlx5dv
// (LLC_VERBS_DATA_PATH); never run on InfiniBand hardware.
#pragma once

#include "transport/transport.hpp"
#include "transport/verbs/verbs_devices.hpp"

#include <memory>

namespace llc {

class Context;

// The verbs transport on `device`, its address published.  Throws Error
// when the device cannot be used, and LLC_ERR_UNSUPPORTED in a build without
// the data path (net selection never asks for it there).
std::unique_ptr<Transport> open_verbs_transport(Context &ctx, const VerbsDevice &device);

} // namespace llc

#ifdef LLC_VERBS_DATA_PATH

#include "transport/verbs/verbs_engine.hpp"
#include "transport/verbs/verbs_handles.hpp"
#include "transport/verbs/verbs_objects.hpp"
#include "transport/verbs/verbs_qp_attr.hpp"

#include <infiniband/mlx5dv.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace llc {

class Context;

class VerbsTransport final : public Transport {
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
    static constexpr int kReadsInFlight = 16; // RDMA READs per queue pair (max_rd_atomic), clamped to the device

    // Opens `device` (by name) on its first ACTIVE port and creates every
    // queue.  Throws Error (LLC_ERR_UNSUPPORTED when the device has no DC
    // support, LLC_ERR_SYSTEM otherwise) with what failed and what to do.
    VerbsTransport(Context &ctx, const VerbsDevice &device);
    ~VerbsTransport() override;
    VerbsTransport(const VerbsTransport &) = delete;
    VerbsTransport &operator=(const VerbsTransport &) = delete;

    void publish_address();
    const VerbsAddress &address() const;
    int send(int dest, std::unique_ptr<OutgoingMessage> msg) override
    {
        int rc = engine_->send(dest, std::move(msg));
        export_stats();
        return rc;
    }
    bool progress() override
    {
        bool did = engine_->progress();
        export_stats();
        return did;
    }
    // DC to every peer (connectionless), reliable and ordered per peer, and
    // CapKeyedRead while keyed reads are on (LLC_VERBS_RNDV_BYTES > 0).  No
    // completion channel yet (see "Not done"): idle_wait is a plain sleep.
    const TransportCaps &caps() const override;
    // Keyed reads: VerbsEngine::expose and read_keyed.
    std::unique_ptr<Exposure> expose(int dest, const llc_iov_t *iov, int iovcnt, std::string *why) override;
    bool read_keyed(int src, const KeyedSpan *spans, size_t n, uint64_t len, KeyedReadDone done,
                    std::string *why) override;
    bool has_pending_sends() const override { return engine_->has_pending_sends(); }
    // Finalize: the engine's goodbyes (queued once, behind the data), its
    // quiet and its report; no peer it knows to be running.
    bool flush() override
    {
        engine_->say_goodbye();
        return true;
    }
    CloseState close_state(CloseDetail detail) const override
    {
        CloseState s;
        s.quiet = engine_->incoming_quiet();
        if (detail == CloseDetail::Full) {
            std::string r = engine_->pending_report();
            s.report = r.empty() ? r : "verbs: " + r;
        }
        return s;
    }
    size_t peer_count() const { return engine_->peer_count(); }

private:
    void export_stats(); // the engine's keyed-read and registration-cache counters into llc_stats
    class Fabric; // VerbsFabric over ibv/mlx5dv (verbs_transport.cpp)
    class Host;   // VerbsHost over Context
    Context &ctx_;
    TransportCaps caps_;
    std::unique_ptr<Fabric> fabric_;
    std::unique_ptr<Host> host_;
    std::unique_ptr<VerbsEngine> engine_; // destroyed first: it releases its routes through fabric_
};

} // namespace llc

#endif // LLC_VERBS_DATA_PATH
