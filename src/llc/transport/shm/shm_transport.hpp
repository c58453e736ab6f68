// shm_transport.hpp - messages between processes on the same node, through
// byte rings in shared memory.  Large payloads are not its business: the
// tagged layer reads or writes them where they are (CapRemoteRead, CMA).
#pragma once

#include "support/byte_buffer.hpp"
#include "auth/job_secret.hpp"
#include "wire/outgoing_message.hpp"
#include "transport/shm/shm_segment.hpp"
#include "transport/transport.hpp"
#include "wire/stream_decoder.hpp"
#include "support/unique_fd.hpp"

#include <poll.h>
#include <sys/types.h>

#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace llc {

class Context;
struct Config;
struct StructSizes;

// shm's capabilities under this configuration: ordered and reliable; its
// peers' memory reachable with CMA (CapRemoteRead) with LLC_CMA; records of
// up to LLC_COPY_MAX bytes written whole into the peer's ring (below
// LLC_CMA_THRESHOLD with CMA).
TransportCaps shm_caps(const Config &cfg);

class ShmTransport final : public Transport {
public:
    // Creates this process's segment (one ring per process in local_ranks).
    ShmTransport(Context &ctx, const std::string &job_id, const std::vector<int> &local_ranks);
    ~ShmTransport() override;
    // "shm": no connections (the segments are mapped at llc_init), records
    // of up to LLC_COPY_MAX bytes (below LLC_CMA_THRESHOLD with CMA) written
    // whole into the peer's ring, the peers' memory reachable with CMA.
    const TransportCaps &caps() const override { return caps_; }
    // After a fence: map the peers' segments.
    void attach() override;
    // After the second fence: nobody needs our segment's name any more.
    void release_names() override { own_.unlink(); }

    int send(int dest, std::unique_ptr<OutgoingMessage> msg) override;
    // Write an active message whole into dest's ring when nothing waits
    // before it and it fits (no message object, no copy kept): true when
    // sent.  False: the caller sends it through send().
    bool try_send_inline(int dest, const WireHeader &wire, const void *hdr, const llc_iov_t *iov,
                         int iovcnt) override;
    // The same for a small tagged message, as one message chunk (TagChunkHeader + payload).
    bool try_send_tagged(int dest, const TagChunkHeader &h, const void *buf, size_t len) override;
    bool progress() override;
    bool has_pending_sends() const override;
    // The inline fast path to a peer on this node (llc_fast.h), or nullptr.
    llc_fast_peer_t *fast_peer(int dest) override;
    // The process of a peer on this node (from its segment), or -1.
    int32_t peer_pid(int rank) override;
    // The rings from every local peer, for llc_fast_poll_skip (nullptr: no
    // peers, or LLC_FAST_POLL_PERIOD=1).
    llc_fast_poll_t *fast_poll() override;
    // Adds what the inline fast path sent (it counts in llc_fast_peer_t).
    void add_stats(llc_stats_t &st) const override;

    // Finalize: the first flush() says in each ring's control that this
    // process is finalizing (its peers then know it is not merely slow);
    // each later one marks drained the rings whose queues have emptied.
    // close_state: quiet once every peer has marked its ring to us drained
    // and the ring is empty, or has failed or exited; peer_running: a peer
    // we wait for is alive and has not entered llc_finalize yet (waiting
    // for it is not a timeout).  No report.
    bool flush() override;
    CloseState close_state(CloseDetail detail) const override;

    // Its object, its segment, the peers' mappings (shared), their state,
    // queues and decoders (shm_account.cpp).
    void account(MemRegistry &r) const override;
    static void struct_sizes(StructSizes &s);

private:
    struct Peer {
        int rank = -1;
        uint32_t local_index = 0;
        pid_t pid = 0;
        ShmSegment segment; // the peer's segment (we write into our slot there)
        ShmRing tx;
        ShmRing rx;
        std::unique_ptr<StreamDecoder> decoder;
        std::deque<std::unique_ptr<OutgoingMessage>> queue; // records, in order
        bool broken = false;
        bool exited = false; // gone after finalizing: not a failure, not watched any more
        bool contacted = false; // we sent to it or read from it (check_liveness)
        UniqueFd pidfd;      // readable once the process has exited (pidfd_open); -1: use process_gone()
        std::string failure;
        // The caller's inline path into tx (llc_fast.h): closed while
        // anything waits in queue, or the peer failed.
        llc_fast_peer_t fast{};
    };

    Peer &peer_for(int rank);
    Peer *find_peer(int rank); // nullptr: not a peer on this node
    // After queue or broken changed: open or close the inline path.
    static void refresh_fast(Peer &peer) { peer.fast.closed = peer.broken || !peer.queue.empty(); }
    // The peer's ring takes a record now: not failed, nothing queued before it.
    Peer *inline_ready(int dest, size_t payload_len);
    bool advance_sends(Peer &peer);
    // Feed every sealed chunk of the peer's ring to its decoder: true if any.
    bool read_ring(Peer &peer);
    void on_record(Peer &peer, const IncomingRecord &rec);
    void fail_peer(Peer &peer, int status, const std::string &message);
    // Every kLivenessPeriodUs (see shm_transport.cpp): a peer whose process
    // has exited without finalizing fails if something of ours depends on it
    // (what it wrote before is read first); otherwise later sends to it fail.
    bool check_liveness();
    bool incoming_quiet() const;
    bool waits_for_a_running_peer() const;

    Context &ctx_;
    std::vector<int> local_ranks_;                  // the node's ranks, ascending (m entries)
    uint32_t my_local_index_ = 0;
    ShmSegment own_;
    // Local peers (not self) in local_ranks_ order: the peer of local index i
    // is peers_[i - (i > my_local_index_)].  A rank is found by binary search
    // in local_ranks_: no table of the job's size.
    std::vector<std::unique_ptr<Peer>> peers_;
    std::string job_id_;
    std::vector<struct pollfd> watch_fds_; // check_liveness, reserved for all peers
    std::vector<Peer *> watch_peers_;
    std::vector<Peer *> gone_;
    std::vector<llc_ring_rx_t> fast_rx_; // peers_' rx rings, in the same order (fast_poll)
    llc_fast_poll_t fast_poll_{};
    uint32_t liveness_tick_ = 0;
    uint64_t next_liveness_us_ = 0;
    bool finalizing_ = false; // flush() was called
    TransportCaps caps_;
};

} // namespace llc
