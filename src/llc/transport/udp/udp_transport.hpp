// udp_transport.hpp - the DC-class path: reliable datagrams over one UDP
// socket per process, whatever the number of peers.
//
// Each ordered pair of processes gets a reliable, in-order byte stream made of
// numbered datagrams (packet sequence numbers, "psn").  The stream carries the
// same records as tcp (am_protocol.hpp) and is decoded by the same
// StreamDecoder, so a message larger than a datagram is simply spread over
// several datagrams.  Reliability: cumulative + 64-bit selective
// acknowledgements (piggybacked on data, or stand-alone), retransmission after
// a timeout (exponential backoff, preceded by one early loss probe) or after
// three later datagrams were selectively acknowledged, duplicate suppression, and a window of
// unacknowledged datagrams per peer that is also the receiver's reordering
// buffer limit (flow control).  Per-peer state is created on first contact
// only (send or receive) and is small when idle: see doc/libllc-udp.md.
#pragma once

#include "auth/job_secret.hpp"
#include "transport/net_events.hpp"
#include "transport/peer_timeout.hpp"
#include "transport/transport.hpp"
#include "wire/outgoing_message.hpp"
#include "support/peer_table.hpp"
#include "transport/udp/switch_asks.hpp"
#include "transport/udp/udp_datagram.hpp"
#include "transport/udp/udp_node_socket.hpp"
#include "transport/udp/udp_ring_landing.hpp"
#include "wire/stream_decoder.hpp"
#include "support/unique_fd.hpp"

#include <netinet/in.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace llc {

class Context;
struct StructSizes;

// Datagram header (host byte order, like the record format).
//
// Incarnations: each side's per-peer state (a Peer) has a 32-bit incarnation
// id, from a per-process counter, so a newer Peer for the same rank always
// has a larger id.  The psn streams of a pair belong to the pair of
// incarnations (src_inc, dst_inc); when either side re-creates its Peer (after
// an eviction) both streams restart at psn 0.  See doc/libllc-udp.md.
struct UdpHeader {
    uint32_t magic;
    uint8_t type;       // UdpType
    uint8_t flags;      // reserved, 0
    uint16_t len;       // stream bytes following the header (Data only; LLC_UDP_MTU <= 65000)
    int32_t src;        // sender's rank
    uint32_t job_tag;   // hash of the job id: stray datagrams of another job are ignored
    uint32_t src_inc;   // incarnation of the sender's Peer for the receiver
    uint32_t dst_inc;   // the receiver's incarnation as the sender knows it (0: unknown)
    uint64_t psn;       // Data: packet sequence number (0, 1, 2, ... per ordered pair and incarnation pair)
                        // Forget: the sender's next psn when it dropped its state
    uint64_t ack;       // every psn < ack from the receiver of this datagram has arrived
    uint64_t sack;      // bit i: psn ack+1+i has arrived too
    int32_t dst;        // the receiver's rank: with LLC_UDP_SHARED_RECV=1 a node's processes share one socket
    uint32_t reserved;  // Data with kFlagRing (DC RDMA): the ring slot it is addressed to (psn mod slots); else 0
    uint64_t token;     // the pair token of (src, dst): proves the sender knows the job secret (below)
};
static_assert(sizeof(UdpHeader) == 64, "udp header layout");

// Strangers (doc/reliability.md): every datagram carries the token of its
// ordered pair, the first 8 bytes of HMAC-SHA256(job secret, "llc-udp-pair-1"
// | src | dst), computed once per peer (kept in its Peer).  A datagram with a
// wrong token, or malformed, or of another job, is dropped and counted
// (udp_auth_dropped) before it touches any state: never an error.  The token
// does not depend on the datagram's content: it keeps out whoever does not
// know the secret (random bytes, port scanners, other jobs, forged
// datagrams from off the path), not an attacker who can read the job's
// traffic on the wire and replay a pair's token (see doc/reliability.md).

// Forget: the sender evicted its Peer for the receiver (everything it sent
// was acknowledged, everything it received delivered); the receiver forgets
// the incarnation pair too and answers ForgetAck.  Repeated until answered.
// Gone (LLC_UDP_SHARED_RECV=1): sent by a process of the receiver's node in
// its place: the receiver (src) has closed its hand-over socket, it has left
// (or died); the answer a closed per-process socket gives as ICMP.
// SwitchAsk / SwitchAnswer: the hybrid's switching channel, outside the
// numbered stream (switch_asks.hpp): an ask carries its number in psn and the
// wanted path (SwitchWant) in ack; the answer echoes the number in psn and
// carries the SwitchVerdict in ack.  An ask for SwitchWant::UdpRing carries
// the ring's geometry in sack (RingAddressing::pack); every answer carries in
// sack the answering sender's next psn to the asker when it answered: with
// an accepted UdpRing ask, the first ring-addressed datagram (the change
// point; with an accepted Udp or Tcp ask, the first one no longer ring-addressed).
enum class UdpType : uint8_t { Data = 1, Ack = 2, Forget = 3, ForgetAck = 4, Gone = 5, SwitchAsk = 6, SwitchAnswer = 7 };

class UdpTransport final : public Transport {
public:
    // Creates and binds the socket.  local_ranks: the ranks of this node
    // (with LLC_UDP_SHARED_RECV=1 they share the node leader's socket).
    UdpTransport(Context &ctx, const std::vector<int> &local_ranks);
    ~UdpTransport() override;
    // "udp": no connections, a capped table of peer states (LLC_MAX_CONTEXTS),
    // reliable and ordered by its own acknowledgements.
    const TransportCaps &caps() const override;
    void publish_address();               // bootstrap put (before the init fence)
    // The router's events (net_events.hpp): given once, before any progress.
    void subscribe(NetEvents &events) { events_ = &events; }
    // After the first init fence, before the KVS commit: with
    // LLC_UDP_SHARED_RECV=1 the node leader passes its socket to the node's
    // other processes, which take it (and its address) over.
    void attach() override;
    bool shares_node_socket() const { return node_ != nullptr; }
    // After the second init fence: the node's receive buffers lose their name.
    void release_names() override
    {
        if (node_)
            node_->release_name();
    }
    // Around a blocking poll() (LLC_UDP_SHARED_RECV=1): false if something
    // was handed over already; then no longer sleeping.
    bool prepare_sleep() { return !node_ || node_->prepare_sleep(); }
    void finish_sleep()
    {
        if (node_)
            node_->finish_sleep();
    }

    int send(int dest, std::unique_ptr<OutgoingMessage> msg) override;
    // Queue a control record (e.g. SwitchAck) to dest on its stream.
    void send_control(int dest, Kind kind, uint64_t seq = 0);
    // Receiver-driven hybrid: ask dest to send to us on `want`, on the
    // switching channel (a SwitchAsk datagram, resent until dest answers;
    // the answer goes to Context::on_switch_answer).  number: increases with
    // every round of asks of this process.  Throws if dest has failed.
    // want UdpRing: geometry is the leased ring's (RingAddressing::pack).
    void ask_switch(int dest, SwitchWant want, uint64_t number, uint64_t geometry = 0);
    // DC RDMA, receive side: the ring leased for src goes back to the pool
    // (Context calls this first): datagrams still held in its slots are
    // copied to the early-datagram map, and nothing lands there any more.
    void detach_landing(int src);
    size_t pending_asks() const { return asks_.size(); }
    // socket_ready = false: a poll() of this progress call found nothing to
    // read on the socket, so it is not read (the rest of the work still runs)
    bool progress_after_poll(bool socket_ready);
    bool progress() override { return progress_after_poll(true); }
    // A poll() of the socket (and the hand-over socket), between prepare_sleep and finish_sleep.
    void idle_wait(uint64_t us) override;
    int fd() const { return sock_.get(); }
    // The hand-over socket (LLC_UDP_SHARED_RECV=1), -1 without: poll it for input too.
    int handover_fd() const { return node_ ? node_->fd() : -1; }
    bool has_pending_sends() const override;
    // Nothing queued and every datagram to dest acknowledged (so every
    // record sent to dest so far has been delivered there).
    bool drained_towards(int dest) const;
    // The peer failed (timeout); sends to it throw.
    bool failed(int dest) const;

    // Finalize: the first flush() queues a Goodbye to every peer behind its
    // data and drops the switch asks (the policy is frozen).  close_state:
    // quiet once every peer has said goodbye, failed or forgotten us; the
    // report is what has_pending_sends waits for: per peer its queued
    // records, unacknowledged datagrams and incarnation and goodbye state;
    // the Forgets not yet answered ("" if nothing).  No peer it knows to be
    // running.
    bool flush() override;
    CloseState close_state(CloseDetail detail) const override;
    // udp_evictions and udp_cap_overflows: the Peer table's cap (PeerCap) counts.
    void add_stats(llc_stats_t &st) const override;

    size_t peer_count() const { return peers_.size(); }
    size_t peer_cap() const { return peers_.capacity(); }
    // Bytes of state kept for a peer that has been idle for a while: the
    // Peer object (its table slot and list entry are preallocated, see
    // table_slot_bytes).  At most LLC_MAX_CONTEXTS of them exist when they
    // may be evicted.
    static size_t idle_peer_bytes() { return sizeof(Peer); }
    // Fixed per slot of the capped table: the slot, the bucket head, the
    // predictor's ghost entry, the incarnation ghosts and a pointer in the
    // iteration list.
    static size_t table_slot_bytes()
    {
        return PeerTable<std::unique_ptr<Peer>>::slot_bytes() + sizeof(int32_t) +
               PeerTable<std::unique_ptr<Peer>>::ghost_bytes() + kGhostsPerSlot * sizeof(Ghost) + sizeof(Peer *);
    }

    // Its object, the node socket, the capped peer table, each peer's state,
    // unacknowledged datagrams, queues and decoders, and the datagram
    // buffers (udp_account.cpp).
    void account(MemRegistry &r) const override;
    static void struct_sizes(StructSizes &s);

private:
    static constexpr size_t kRxBufBytes = 65536;   // rxbuf_: one receive buffer per process
    // free_bufs_: datagram buffers kept for reuse, allocated with the
    // transport (a full pool) and never more.  Small and fixed, so that what
    // a process holds is the same at every job size (with up to 64 kept as
    // bursts left them, the fill level, one 16 KB buffer more or less, was
    // the largest term of the measured growth per peer); a burst beyond it
    // allocates, and frees on acknowledgement.
    static constexpr size_t kKeepFreeBuffers = 8;
    static constexpr size_t kGhostsPerSlot = 4;
    static constexpr size_t kMinGhosts = 64;

    struct TxPacket {
        uint64_t psn = 0;
        uint64_t sent_us = 0;   // last transmission (0: not transmitted yet, e.g. EAGAIN)
        uint32_t len = 0;       // stream bytes
        uint16_t retries = 0;
        bool sacked = false;
        bool fast_done = false;
        bool probed = false; // resent by the loss probe (pto_for)
        bool ring = false; // DC RDMA: ring-addressed (at most one slot of bytes; its slot follows psn)
        std::unique_ptr<char[]> buf; // UdpHeader + len bytes
    };
    // Send-side queues: allocated while the peer has traffic, released after
    // it has been idle for a while (an empty std::deque still owns ~600 bytes).
    struct Tx {
        std::deque<TxPacket> unacked; // psn order, at most window entries
        std::deque<std::unique_ptr<OutgoingMessage>> queue;
    };
    struct Peer {
        int rank = -1;
        uint32_t inc = 0;      // our incarnation (never 0)
        uint32_t peer_inc = 0; // the peer's incarnation our psn streams belong to (0: none yet)
        sockaddr_in addr{};
        uint32_t idle_probe_ms = 0; // probe_idle_peers' last probe to it (monotonic ms, mod 2^32; fills padding)
        // sending
        uint64_t next_psn = 0;
        uint64_t last_tx_us = 0;
        uint64_t recover_psn = 0; // after a timeout: datagrams below this are resent as acks advance
        uint32_t srtt_us = 0;   // smoothed round-trip time (0: no sample yet)
        uint32_t rttvar_us = 0; // its mean deviation
        std::unique_ptr<Tx> tx;
        Tx &txs()
        {
            if (!tx)
                tx = std::make_unique<Tx>();
            return *tx;
        }
        bool tx_idle() const { return !tx || (tx->queue.empty() && tx->unacked.empty()); }
        // DC RDMA (allocated the first time either side uses it): how we
        // address our datagrams to this peer, and the ring its datagrams to
        // us land in (see udp_ring_landing.hpp).
        struct Ring {
            RingAddressing tx;
            std::unique_ptr<UdpRingLanding> landing;
            uint64_t landing_epoch = 0; // Context::landing_epoch() when landing was looked up
            bool looked_up = false;
        };
        std::unique_ptr<Ring> ring;
        Ring &rings()
        {
            if (!ring)
                ring = std::make_unique<Ring>();
            return *ring;
        }
        bool ring_tx() const { return ring && ring->tx.on(); }
        size_t ring_held() const { return ring && ring->landing ? ring->landing->occupied() : 0; }
        // receiving
        uint64_t rx_next = 0;
        std::map<uint64_t, std::vector<char>> ooo; // datagrams that arrived early
        std::unique_ptr<StreamDecoder> decoder;    // on first data
        // Part of a message from this peer is held: half a record decoded,
        // or datagrams that came early (in ooo or in the landing ring).
        bool mid_message() const { return (decoder && !decoder->at_record_boundary()) || !ooo.empty() || ring_held(); }
        uint64_t last_heard_us = 0;
        uint64_t oldest_unacked_since_us = 0; // when the peer was last seen making progress on our data
        uint64_t goodbye_rx_us = 0;
        uint64_t newer_peer_seen_us = 0; // waiting for the Forget of its old incarnation since
        bool ack_pending = false;
        bool peer_forgot = false; // the peer evicted its state for us (Forget) and has sent nothing since
        // finalize
        bool goodbye_sent = false;
        bool goodbye_rx = false;
        // failure (the message is in failures_, which outlives eviction)
        bool failed = false;
        // pair tokens (see UdpHeader::token): of our datagrams to it, of its to us
        uint64_t tx_token = 0, rx_token = 0;
    };
    struct Failure {
        int status = 0;
        std::string message;
    };
    // What is left of an evicted Peer: the peer's incarnation, so that a
    // stray datagram of it (older than the eviction) is not taken for the
    // start of a new stream.  Direct-mapped by rank; a collision overwrites.
    // peer_inc's top bit (kGhostGoodbye; incarnations stay below it): the
    // peer had said goodbye to the dropped Peer.
    struct Ghost {
        int32_t rank = -1;
        uint32_t peer_inc = 0;
    };
    static constexpr uint32_t kGhostGoodbye = 0x80000000u;
    // A Forget not yet answered (its Peer is gone).
    struct PendingForget {
        int rank = -1;
        sockaddr_in addr{};
        UdpHeader header{};
        uint64_t first_us = 0, sent_us = 0;
        uint16_t retries = 0;
    };

    // udp_transport.cpp: setup and what every file uses.
    int udp_address_rank(int rank) const;
    std::string describe(const Peer &p) const;
    uint32_t random();

    // udp_peer.cpp: the Peer table, eviction and incarnations, failure.
    Peer &peer_for(int rank);
    Peer *find(int rank);             // counts as a use (eviction predictor)
    const Peer *peek(int rank) const; // does not
    Peer &add_peer(int rank, const sockaddr_in *from);
    [[noreturn]] void throw_failure(int dest) const;
    // Eviction (LLC_MAX_CONTEXTS): only a peer with nothing in flight either
    // way, idle for LLC_UDP_EVICT_IDLE_MS, not on a hybrid switch, may go.
    bool evictable(const Peer &p, uint64_t now) const;
    uint32_t next_incarnation();
    Ghost &ghost_of(int rank);
    void on_evict(Peer &p);
    bool resend_forgets(uint64_t now);
    void send_forget_ack(const UdpHeader &forget, const sockaddr_in &to);
    void on_forget_ack(const UdpHeader &h);
    void on_forget(const UdpHeader &h, const sockaddr_in &from);
    void forget_live(Peer &p, const UdpHeader &forget);
    void restart_streams(Peer &p);
    bool reconcile_incarnation(Peer &p, const UdpHeader &h);
    std::unique_ptr<char[]> get_buffer();
    void put_buffer(std::unique_ptr<char[]> b);
    void fail_peer(Peer &p, int status, const std::string &message);

    // udp_tx.cpp: sending.
    // A header from this process to dest: magic, type, ranks and job tag set, the rest 0.
    UdpHeader header_to(UdpType type, int dest) const;
    UdpHeader header_to(UdpType type, const Peer &p) const; // the token from p (the data path)
    uint64_t pair_token(int src, int dst) const;            // HMAC: once per peer, or for a stranger's claim
    void stamp(const Peer &p, UdpHeader &h) const;
    void fill_ack(const Peer &p, UdpHeader &h) const;
    bool raw_send(const char *buf, size_t len, const sockaddr_in &to);
    void flush_held();
    bool transmit(Peer &p, TxPacket &pkt);
    bool pump(Peer &p);
    void send_ack(Peer &p, bool probe = false);

    // udp_switch_channel.cpp: the switching channel.
    void send_switch_datagram(UdpType type, int dest, uint64_t number, uint64_t value, const sockaddr_in &to,
                              uint64_t detail = 0);
    void on_switch_ask(const UdpHeader &h, const sockaddr_in &from);
    bool resend_asks(uint64_t now);

    // udp_rx.cpp: receiving.
    // DC RDMA receive side: the landing for a ring-addressed datagram from p
    // (looked up again when the context's rings changed), or nullptr.
    UdpRingLanding *landing_of(Peer &p);
    void unland(Peer &p); // copy what p's landing holds to p.ooo and drop it
    void drop_stranger(const sockaddr_in &from, const char *why);
    void on_ack(Peer &p, uint64_t ack, uint64_t sack);
    void on_record(Peer &p, const IncomingRecord &rec);
    void feed(Peer &p, const char *data, size_t len);
    void on_datagram(const char *buf, size_t len, const sockaddr_in &from);
    void deliver_early(Peer &p);
    bool receive_all(bool read_socket);
    bool take_handed_over();
    bool dispatch(const char *buf, size_t len, const sockaddr_in &from);
    bool hand_over(const UdpHeader &h, const char *buf, size_t len, const sockaddr_in &from);
    bool retry_stalled();
    void send_gone(const UdpHeader &h, const sockaddr_in &to);
    void drain_errors();
    void on_unreachable(const sockaddr_in &addr);
    void on_rank_gone(Peer &p, const std::string &why);

    // udp_timers.cpp: retransmission, liveness, idle peers.
    uint64_t rto_for(const Peer &p, uint16_t retries) const;
    uint64_t pto_for(const Peer &p) const; // loss probe timeout, 0: none
    void rtt_sample(Peer &p, uint64_t sample_us);
    bool check_timers(Peer &p, uint64_t now);
    bool probe_stalled_senders(uint64_t now);
    void probe_idle_peers(uint64_t now);
    void release_idle(uint64_t now);

    // udp_transport.cpp: finalize.
    void queue_goodbye(Peer &p);
    bool incoming_quiet() const;
    std::string pending_report() const;

    Context &ctx_;
    NetEvents *events_ = nullptr; // the router (subscribe)
    std::unique_ptr<UdpNodeSocket> node_; // LLC_UDP_SHARED_RECV=1 with other processes on the node
    UniqueFd sock_;
    std::string my_addr_;
    uint32_t job_tag_ = 0;
    mutable JobSecret secret_; // fetched lazily (const paths build headers)
    RejectLog rejects_{"udp datagrams that did not come from this job were", "udp_auth_dropped"};
    size_t mtu_;           // stream bytes per datagram
    size_t window_;
    uint64_t evict_idle_us_;
    PeerTimeout peer_timeout_; // LLC_UDP_PEER_TIMEOUT_MS: a peer that owes us something longer is dead
    uint32_t next_inc_ = 1; // incarnation of the next Peer created
    PeerTable<std::unique_ptr<Peer>> peers_; // at most LLC_MAX_CONTEXTS while they may be evicted
    std::vector<Peer *> live_; // peers_ in creation order (stable iteration)
    std::unordered_map<int, Failure> failures_; // failed ranks only; survives eviction
    std::vector<Ghost> ghosts_;                 // kGhostsPerSlot x LLC_MAX_CONTEXTS (at least kMinGhosts)
    std::vector<PendingForget> forgets_;
    SwitchAsks asks_; // the switching channel: asks not yet answered
    std::vector<std::unique_ptr<char[]>> free_bufs_;
    std::unique_ptr<char[]> rxbuf_;
    // LLC_UDP_SHARED_RECV=1: a datagram for a neighbour whose buffers were full
    std::unique_ptr<char[]> stalled_;
    size_t stalled_len_ = 0;
    sockaddr_in stalled_from_{};
    bool finalizing_ = false;
    uint64_t finalize_us_ = 0;
    uint64_t next_probe_us_ = 0; // finalize: next "still waiting" acknowledgement round
    uint64_t next_stall_probe_us_ = 0; // next look for peers silent in the middle of a message
    uint64_t idle_probe_gap_us_ = 0;   // LLC_UDP_IDLE_PROBE_MS in us (0: off)
    size_t idle_cursor_ = 0;           // probe_idle_peers goes round live_ from here
    bool errors_pending_ = false; // an ICMP error was reported: read the error queue
    uint64_t next_sweep_us_ = 0;
    // loss injection (LLC_UDP_DROP_PERMILLE / LLC_UDP_REORDER)
    uint64_t rng_;
    std::vector<char> held_;
    sockaddr_in held_to_{};
    bool have_held_ = false;
};

} // namespace llc
