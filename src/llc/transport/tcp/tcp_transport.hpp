// tcp_transport.hpp - messages to processes on other nodes over TCP.
//
// Every process listens on an ephemeral port and publishes "ip:port" as
// llc-tcp-<rank>.  A process connects lazily on its first send to a peer.
//
// One connection, both directions (LLC_NET=tcp only: enable_bidirectional,
// called by the router when tcp is the inter-node transport by itself and
// the cap cannot evict, see below).  A process sends to a peer on its own
// outgoing connection to it if it has one; otherwise, if it has an accepted
// connection from that peer whose Hello checked out and that is neither
// closing nor closed, it sends on that one ("adopts" it, tcp_adopted);
// otherwise it connects.  A direction moves from one stream to another only
// when everything written on the old one has been acknowledged (read by the
// peer) and a Close record ends it, so per-pair order holds.  If both connect
// at the same time (crossed connects: MPI_Init's first exchange does this)
// there are two connections for a while: each side first sends on its own;
// once the higher rank's own connection is idle it closes it (a Close
// record, as an eviction but not counted as one) and sends on the lower
// rank's connection, which it adopts; the lower rank writes its StreamAcks
// on the higher rank's old connection at once (not corked) so that it
// becomes idle soon (note_crossed_connect).  So a ping-pong ends on one
// connection and the kernel's ACK of a message rides on the reply: 2
// packets per round trip instead of 4.  On a connection used both ways each side's
// stream is an ordinary record stream after the first bytes (the connector's
// Hello, the acceptor's TcpAuthProof), and the StreamAck records (below) are
// interleaved with the data records, at record boundaries only; they are not
// counted in the stream byte counts (bytes_written, bytes_read, Close
// offsets).  The connector reads the StreamAcks raw (ack_buf) as long as
// only they come back; the first other record makes it create the receiving
// half (an InConn paired with the OutConn, sharing its socket, in in_), and
// from then on that half reads the socket with a decoder and hands
// StreamAcks to the OutConn.  The acceptor's adopted sending half is an
// OutConn paired with the InConn (sharing its socket; no Hello, no connect).
// A failure of either half fails both (reported once); an EOF after the
// peer's Goodbye closes both quietly if nothing of ours is still queued.
// Finalize: a Goodbye goes on every stream a process sends on (adopted ones
// included); incoming_quiet waits for it on every receiving half, and treats
// bytes waiting on one of our own connections that has no receiving half yet
// as not quiet (they may be the peer's first records on it).  Eviction is
// not done on connections used both ways: adoption is only enabled when
// LLC_MAX_CONTEXTS >= size - 1, where a process never has more open
// outgoing connections than the cap (one per peer) and so never evicts;
// adopted connections are not counted in tcp_conns.  (Evicting one would
// need a handshake: the peer may be writing on it when the Close arrives,
// and its next message must not overtake what is still on the old stream.)
// With a smaller cap (and under LLC_NET=hybrid) every connection carries one
// direction as before: a process sends only on connections it initiated and
// receives only on connections it accepted, so each ordered pair has exactly
// one stream and simultaneous connects need no tie-breaking.
//
// Liveness: the kernel of a stopped or hung process still acknowledges TCP,
// so the sender cannot learn from TCP alone that nobody reads its data.  The
// receiver therefore writes StreamAck records back on the accepted socket
// (the only thing sent in that direction unless the connection carries both: see above), each carrying the number of
// stream bytes it has read so far: one at the end of every progress call
// that read something from that connection, as the udp transport does, so a
// receiver that reads its data and then computes for a long time leaves
// nothing unacknowledged behind (with LLC_TCP_PEER_TIMEOUT_MS >= 1 s they are
// written with MSG_MORE: the kernel sends them within its 200 ms cork
// ceiling, without a transmission per message).  Two refinements: a
// progress call that ends in the middle of a record writes none until the
// record is in or it has held one back for LLC_TCP_PEER_TIMEOUT_MS / 8; and
// on a connection that carries both directions a record written from a
// handler (a rendezvous' clear-to-send) carries, in the same sendmsg, the
// StreamAck up to the end of the record it answers (the decoder's
// bytes_after_record).
//
// Held acknowledgements (connections that carry both directions): a
// StreamAck owed at the end of a progress call is held back, so that the
// next record we write on that connection (a ping-pong's answer) carries it
// in the same sendmsg instead of a send of its own per message.  The
// process writes one held for kAckHoldUs while it is inside the transport,
// and an AckFlusher thread writes those held for its period (10 ms, at most
// LLC_TCP_PEER_TIMEOUT_MS / 8) while it is not, so a receiver that reads and
// then computes still acknowledges in time.  The flusher runs only when the
// transport's lock (mu_, taken by every entry point, enter()) is free.
//
// Computing receivers: a process that computes before it reads what was
// sent to it (an MPI rank between a peer's send and its own receive) is
// alive, but its sender sees its bytes unacknowledged.  Every
// LLC_TCP_PEER_TIMEOUT_MS / 4 the flusher thread (on every connection, both
// directions or not) finds the connections whose socket holds bytes the
// process has not read, or whose read bytes are not acknowledged, and
// writes a StreamAck on each (the last count again when nothing new was
// decoded: keep_alive).  Every valid StreamAck restarts the sender's
// silence (waiting_since_us), advancing or not.  So the peer timeout fires
// only when every thread of the receiver has stopped (SIGSTOP, a
// debugger) or its host is gone.
//
// The sender does not poll for them on
// every call: it reads them at most once a millisecond while it has
// unacknowledged bytes (and always before declaring a peer dead), so a
// ping-pong does not pay for them on its critical path.  A sender whose
// bytes written are not all acknowledged and that has read no
// acknowledgement (advancing or not) for LLC_TCP_PEER_TIMEOUT_MS fails the connection with
// LLC_ERR_PEER.  The Goodbye record itself is not counted: a peer that
// enters finalize late has read everything before it, and finalize has its
// own bound (LLC_FINALIZE_TIMEOUT_MS).  The same check notices a host that
// stopped answering (powered off, partitioned): no acknowledgement, alive or
// not, comes from it.  The sockets carry no TCP_USER_TIMEOUT: the kernel
// applies it to a receiver's zero window too, and would close the
// connection to a peer that computes while its receive buffer is full.
//
// The cap (LLC_MAX_CONTEXTS, under every capped table's policy, PeerCap in
// support/peer_cap.hpp): at most that many outgoing connections are
// open (connecting or connected).  Opening one more evicts the least
// recently used idle one first: nothing queued and every byte written
// acknowledged by a StreamAck, so the receiver has already delivered all of
// it.  Eviction writes a Close record (seq = stream bytes before it) and
// closes the socket; the receiver checks the count, closes its end and does
// not take the EOF for a failure.  A later send to that rank connects again;
// per-pair order holds because nothing on the old stream was left unread.
// When no connection is idle the cap is exceeded (tcp_cap_overflows) and the
// excess is evicted by progress once some are idle.  No eviction once
// finalize has begun (the Goodbye is on the open connections).
//
// Authentication (doc/reliability.md): only processes that know the job's
// secret (job_secret.hpp) get in, and both ends of every connection prove it
// in their first record, with HMAC-SHA256 (K: the job secret):
//   connector -> acceptor  Hello record (the first of the stream): src =
//                          rank_c, aux = nonce_c (fresh, random) | HMAC(K,
//                          "connect" | nonce_c | rank_c | rank_a | addr) | addr
//   acceptor  -> connector TcpAuthProof, the first bytes back (before any
//                          StreamAck): rank_a, HMAC(K, "accept" | nonce_c |
//                          rank_a | rank_c)
// The connector does not wait for the proof before writing its stream: a
// send still needs no progress from the sender once connected, as before
// (a handshake that waited for the acceptor's answer made a process that
// sent and then stopped calling llc_progress, e.g. to enter a bootstrap
// fence, leave its message unsent).  The proof is checked when it arrives,
// like the StreamAcks it precedes (and their liveness check covers its
// absence); a wrong one fails the connection.  Until the Hello checks out,
// the acceptor reads exact-size pieces only (no decoder, no allocation
// driven by the stranger); anything wrong closes the connection, counts it
// (auth_rejected) and prints at most one warning line a minute: never an
// error.  Unauthenticated connections are closed after
// LLC_TCP_AUTH_TIMEOUT_MS, and the oldest beyond kMaxPendingAuth.  The rank
// of an accepted connection comes only from its authenticated Hello; garbage
// after that is a fatal protocol error naming that rank.
#pragma once

#include "support/byte_buffer.hpp"
#include "auth/job_secret.hpp"
#include "transport/net_events.hpp"
#include "transport/transport.hpp"
#include "wire/outgoing_message.hpp"
#include "wire/stream_decoder.hpp"
#include "transport/tcp/ack_flusher.hpp"
#include "transport/tcp/tcp_hello.hpp"
#include "support/unique_fd.hpp"
#include "support/peer_cap.hpp"
#include "transport/peer_timeout.hpp"

#include <poll.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace llc {

class Context;
struct StructSizes;

// The authentication records (host byte order, like the stream's records).
constexpr uint32_t kTcpAuthMagic = 0x41434c4c; // "LLCA" in little-endian memory order
constexpr uint8_t kTcpAuthVersion = 1;
struct TcpAuthProof {
    uint32_t magic;
    uint8_t version;
    uint8_t zero;
    uint16_t zero2;
    int32_t rank; // the acceptor's
    uint32_t zero3;
    uint8_t mac[kMacBytes];
};
static_assert(sizeof(TcpAuthProof) == 48, "auth record layout");

class TcpTransport final : public Transport {
public:
    explicit TcpTransport(Context &ctx); // creates the listening socket
    ~TcpTransport() override;
    // "tcp": a connection per peer, opened on the first send (at most
    // LLC_MAX_CONTEXTS: the idlest is closed), reliable and ordered.
    const TransportCaps &caps() const override;
    void publish_address();              // bootstrap put (before the init fence)
    // The router's events (net_events.hpp): given once, before any progress.
    void subscribe(NetEvents &events) { events_ = &events; }

    int send(int dest, std::unique_ptr<OutgoingMessage> msg) override;
    bool progress() override { return progress_polling(-1, nullptr); }
    // extra_fd (if >= 0, the hybrid's udp socket) joins the one poll() of
    // this call; *extra_ready tells whether it has input or an error.
    bool progress_polling(int extra_fd, bool *extra_ready);
    // Block up to `us` microseconds until a socket is ready (idle backoff).
    // extra_fd, extra_fd2 (if >= 0) are polled for input too (the udp
    // socket; its hand-over socket with LLC_UDP_SHARED_RECV=1).
    void wait_for_activity(uint64_t us, int extra_fd = -1, int extra_fd2 = -1);
    void idle_wait(uint64_t us) override { wait_for_activity(us); }
    // One connection carries both directions (see the comment at the top);
    // called once, before any send, when tcp is the inter-node transport by
    // itself.  Has no effect when the cap could evict (LLC_MAX_CONTEXTS < size - 1).
    void enable_bidirectional();
    // Start connecting to dest now (hybrid promotion overlaps it with the drain).
    void connect_early(int dest)
    {
        auto in = enter();
        out_conn(dest);
    }
    bool has_pending_sends() const override;

    // Finalize: the first flush() queues a Goodbye on every open
    // connection, behind its data, and stops evictions.  close_state: quiet
    // once every receiving half has its Goodbye or is closed (see above);
    // no report, and no peer it knows to be running.
    bool flush() override;
    CloseState close_state(CloseDetail detail) const override;
    // tcp_evictions and tcp_cap_overflows: the cap's (PeerCap) counts.
    void add_stats(llc_stats_t &st) const override;

    // Its object, the rank -> connection table, each connection with its
    // queue and decoder, the staging buffer and poll set (tcp_account.cpp).
    void account(MemRegistry &r) const override;
    static void struct_sizes(StructSizes &s);

private:
    struct InConn;
    struct OutConn {
        // Closing: evicted, the Close record not fully written yet (owned by
        // closing_); Closed: evicted and closed, dropped at the next pollset.
        enum class State { Connecting, Connected, Failed, Closing, Closed };
        int rank = -1;
        std::string addr;
        UniqueFd fd;
        State state = State::Connecting;
        uint64_t connect_deadline_us = 0;
        std::deque<std::unique_ptr<OutgoingMessage>> queue;
        int failure_status = 0;
        std::string failure;
        // liveness (see the comment at the top)
        uint64_t bytes_written = 0;   // stream bytes handed to the kernel
        uint64_t bytes_acked = 0;     // highest StreamAck count received
        uint64_t waiting_since_us = 0; // bytes_written > bytes_acked and no advance since then
        uint64_t last_drain_us = 0;   // acknowledgements last read
        uint64_t owed_limit = UINT64_MAX; // stream offset of our Goodbye: it is not waited for
        uint32_t ack_have = 0;        // bytes of a partly received StreamAck in ack_buf
        uint64_t last_use = 0;        // use_clock_ at the last send (LRU eviction)
        bool evicted = false;         // owned by closing_, no longer in out_
        bool swap_wanted = false;     // crossed connects, we are the higher rank: move to the peer's connection when idle
        // Both directions on one connection (see the comment at the top):
        bool adopted = false;         // the acceptor's sending half: the socket is pair_in's
        bool rev_goodbye = false;     // the peer's Goodbye came back on this connection
        InConn *pair_in = nullptr;    // the receiving half on the same socket, if any
        alignas(8) char ack_buf[sizeof(WireHeader)];
        // Until the acceptor has proven itself (then reset).
        struct Auth {
            Nonce nonce_c{};
            uint32_t have = 0; // bytes of the proof in buf
            alignas(8) char buf[sizeof(TcpAuthProof)];
        };
        std::unique_ptr<Auth> auth;
    };
    struct InConn {
        UniqueFd fd;           // invalid for a connector's receiving half (the socket is pair_out's)
        OutConn *pair_out = nullptr; // the sending half on the same socket, if any
        int rank = -1;         // known after the Hello record
        std::string addr;      // the peer's published address (from Hello)
        std::string from;      // the socket's remote address, until Hello
        std::unique_ptr<StreamDecoder> decoder;
        bool goodbye = false;
        bool closed = false;
        bool close_seen = false;      // the sender evicted the connection (Close record)
        // Inside the decoder (records being delivered): bytes_read counts
        // bytes not decoded yet, StreamAcks among them, so a StreamAck
        // written from a handler's send (flush) counts only up to the end of
        // the record being delivered (StreamDecoder::bytes_after_record).
        bool feeding = false;
        // Crossed connects, we are the lower rank: the peer moves to our
        // connection once this one is idle, so its StreamAcks go at once
        // (not corked).
        bool acks_prompt = false;
        uint64_t close_offset = 0;    // the stream bytes the Close record says precede it
        // liveness: StreamAck records written back on this socket
        bool ack_broken = false;      // writing one failed: the read side reports it
        uint32_t ack_unsent = 0;      // bytes of ack_out not yet written (a partial write)
        uint64_t bytes_read = 0;      // stream bytes read so far
        uint64_t bytes_acked = 0;     // count carried by the last StreamAck
        uint64_t ack_held_since_us = 0; // a StreamAck owed and held back since (0: none): mid-record, or for our next record
        WireHeader ack_out{};
        // The ring leased for this source (the hybrid's ring pool), read into
        // instead of staging_; asked of the Context again when its landing
        // epoch changes (a ring leased or returned).
        char *landing = nullptr;
        size_t landing_bytes = 0;
        uint64_t landing_epoch = UINT64_MAX;
        // Until the connector has proven itself (then reset; c.rank is set
        // from the authenticated Hello only).
        struct Auth {
            enum class Stage { HelloHeader, HelloAux } stage = Stage::HelloHeader;
            uint32_t have = 0, need = sizeof(WireHeader);
            uint64_t accepted_us = 0;
            WireHeader hello{};
            alignas(8) char buf[kHelloProofBytes + kMaxHelloAddrBytes];
        };
        std::unique_ptr<Auth> auth;
    };

    // Marks a receiving half as inside its decoder for a scope (see InConn::feeding).
    struct Feeding {
        explicit Feeding(InConn &c) : c_(c) { c_.feeding = true; }
        ~Feeding() { c_.feeding = false; }
        Feeding(const Feeding &) = delete;
        Feeding &operator=(const Feeding &) = delete;
        InConn &c_;
    };

    // Both directions on one connection (see the comment at the top).
    static int sock(const OutConn &c) { return c.adopted ? (c.pair_in ? c.pair_in->fd.get() : -1) : c.fd.get(); }
    static int sock(const InConn &c) { return c.pair_out && !c.fd.valid() ? c.pair_out->fd.get() : c.fd.get(); }
    bool ack_partly_written(const OutConn &c) const
    {
        return c.pair_in && c.pair_in->ack_unsent > 0 && c.pair_in->ack_unsent < sizeof(WireHeader);
    }
    // The cap counts these: connecting or connected (see the comment at the top).
    static bool is_open(const OutConn &c)
    {
        return c.state == OutConn::State::Connecting || c.state == OutConn::State::Connected;
    }
    // Bytes written that the peer has not acknowledged yet (the Goodbye excepted).
    static bool owes_ack(const OutConn &c) { return std::min(c.bytes_written, c.owed_limit) > c.bytes_acked; }
    // Every entry point from the process holds mu_ (the flusher writes held
    // acknowledgements and alive ones only while it is free).
    std::unique_lock<std::recursive_mutex> enter() const { return std::unique_lock<std::recursive_mutex>(mu_); }

    // tcp_transport.cpp: the progress loop.
    void build_pollset(uint64_t &now); // now: 0, or set when the clock is read

    // tcp_peer.cpp: the connections by rank, both directions on one
    // connection, and the cap (see the comment at the top).
    OutConn &out_conn(int dest);
    OutConn &track(int dest, std::unique_ptr<OutConn> c);
    OutConn *adopt(int dest);
    InConn &reverse_half(OutConn &c);
    void drop_in(InConn &c);
    bool idle(const OutConn &c) const;
    size_t open_count() const;
    OutConn *lru_idle();    // the victim order: least recently sent-to idle connection
    void evict(OutConn &c); // for the cap (through cap_, which counts it), or a crossed-connect swap
    void note_crossed_connect(InConn &c);
    void make_room();
    void trim(size_t open);
    void finish_close(OutConn &c);

    // tcp_tx.cpp: sending.
    void start_connect(OutConn &c);
    bool write_out(OutConn &c);  // what the socket takes now of c's queue; true if anything was written
    bool incoming_quiet() const; // close_state's quiet
    void fail_out(OutConn &c, int status, const std::string &message, bool report = true);
    bool check_out(OutConn &c, short revents);
    bool read_acks(OutConn &c);

    // tcp_rx.cpp: receiving.
    bool accept_all();
    void attach_decoder(InConn &c);
    bool read_in(InConn &c);
    void on_record(InConn &c, const IncomingRecord &rec);
    void on_stream_ack(InConn &c, const WireHeader &w);
    void close_in(InConn &c, int status, const std::string &message);
    void close_evicted(InConn &c);
    std::string describe(const InConn &c) const;
    // repeat: stage the last count again when nothing new was decoded (an
    // alive acknowledgement, keep_alive)
    bool stage_ack(InConn &c, bool repeat = false);
    void send_ack(InConn &c, bool prompt = false, bool repeat = false); // prompt: not corked

    // tcp_timers.cpp: acknowledgements due, held acknowledgements, liveness.
    bool acks_due(const OutConn &c, uint64_t &now) const;
    void send_due_acks(uint64_t &now);              // now: 0, or set when the clock is read
    bool check_senders(size_t nout, uint64_t &now); // the first nout of out_live_
    bool check_liveness(OutConn &c, uint64_t now);
    // Held acknowledgements (see the comment at the top): write those held
    // at least `older_than_us`; true if some are still held.
    bool flush_held_acks(uint64_t older_than_us);
    void keep_alive();
    uint64_t alive_period_us() const;
    void start_flusher(uint64_t period_us);

    // tcp_auth.cpp: authentication (see the comment at the top).
    bool read_proof(OutConn &c);
    bool read_auth(InConn &c);
    bool auth_step(InConn &c);
    void reject(InConn &c, const std::string &why);
    void expire_auth(uint64_t now);

    Context &ctx_;
    NetEvents *events_ = nullptr; // the router (subscribe)
    UniqueFd listener_;
    std::string my_addr_;
    // rank -> connection, an entry per destination sent to (created on first
    // send; evicted when idle beyond LLC_MAX_CONTEXTS, kept if failed).
    std::unordered_map<int, std::unique_ptr<OutConn>> out_;
    // The same connections, in creation order, and the evicted ones until
    // they are closed (removed when the pollset is next built: handlers may
    // evict while progress iterates over it).
    std::vector<OutConn *> out_live_;
    std::vector<std::unique_ptr<OutConn>> closing_; // evicted connections, until removed from out_live_
    uint64_t use_clock_ = 0; // ticks on every send (LRU order)
    PeerCap cap_;            // LLC_MAX_CONTEXTS open connections of ours, while some are idle
    PeerTimeout peer_timeout_; // LLC_TCP_PEER_TIMEOUT_MS: a peer that owes acknowledgements longer is dead
    bool finalizing_ = false;
    bool bidi_ = false; // one connection carries both directions (enable_bidirectional)
    std::vector<std::unique_ptr<InConn>> in_;
    std::vector<pollfd> pollset_;
    ByteBuffer staging_;
    JobSecret secret_;
    RejectLog rejects_{"tcp connections that did not prove they belong to this job were", "auth_rejected"};
    size_t pending_auth_ = 0; // accepted connections not authenticated yet
    mutable std::recursive_mutex mu_; // see enter()
    // Last, so that it is stopped first: its thread uses the members above.
    std::unique_ptr<AckFlusher> flusher_;
};

} // namespace llc
