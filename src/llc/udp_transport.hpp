// udp_transport.hpp - the DC-class path: reliable datagrams over one UDP
// socket per process, whatever the number of peers.
//
// Each ordered pair of processes gets a reliable, in-order byte stream made of
// numbered datagrams (packet sequence numbers, "psn").  The stream carries the
// same records as tcp (am_protocol.hpp) and is decoded by the same
// StreamDecoder, so a message larger than a datagram is simply spread over
// several datagrams.  Reliability: cumulative + 64-bit selective
// acknowledgements (piggybacked on data, or stand-alone), retransmission after
// a timeout (exponential backoff) or after three later datagrams were
// selectively acknowledged, duplicate suppression, and a window of
// unacknowledged datagrams per peer that is also the receiver's reordering
// buffer limit (flow control).  Per-peer state is created on first contact
// only (send or receive) and is small when idle: see doc/libllc.md.
#pragma once

#include "outgoing_message.hpp"
#include "stream_decoder.hpp"
#include "unique_fd.hpp"

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

// Datagram header (host byte order, like the record format).
struct UdpHeader {
    uint32_t magic;
    uint8_t type;       // UdpType
    uint8_t flags;      // reserved, 0
    uint16_t reserved;
    int32_t src;        // sender's rank
    uint32_t job_tag;   // hash of the job id: stray datagrams of another job are ignored
    uint32_t len;       // stream bytes following the header (Data only)
    uint32_t pad;
    uint64_t psn;       // Data: packet sequence number (0, 1, 2, ... per ordered pair)
    uint64_t ack;       // every psn < ack from the receiver of this datagram has arrived
    uint64_t sack;      // bit i: psn ack+1+i has arrived too
};
static_assert(sizeof(UdpHeader) == 48, "udp header layout");

enum class UdpType : uint8_t { Data = 1, Ack = 2 };

class UdpTransport {
public:
    explicit UdpTransport(Context &ctx); // creates and binds the socket
    ~UdpTransport();
    void publish_address();               // bootstrap put (before the init fence)

    int send(int dest, std::unique_ptr<OutgoingMessage> msg);
    // Queue a control record (e.g. SwitchAck; SwitchRequest with seq = SwitchWant) to dest on its stream.
    void send_control(int dest, Kind kind, uint64_t seq = 0);
    // socket_ready = false: a poll() of this progress call found nothing to
    // read on the socket, so it is not read (the rest of the work still runs)
    bool progress(bool socket_ready = true);
    int fd() const { return sock_.get(); }
    bool has_pending_sends() const;
    // Nothing queued and every datagram to dest acknowledged (so every
    // record sent to dest so far has been delivered there).
    bool drained_towards(int dest) const;
    // The peer failed (timeout); sends to it throw.
    bool failed(int dest) const;

    // Finalize support.
    void say_goodbye();
    bool incoming_quiet() const;

    size_t peer_count() const { return peers_.size(); }
    // Bytes of state kept for a peer that has been idle for a while: the
    // Peer object, its hash-table node and its slot in the iteration list.
    static size_t idle_peer_bytes() { return sizeof(Peer) + sizeof(void *) * 3 + sizeof(int) + sizeof(size_t) + sizeof(Peer *); }

private:
    friend struct MemWalk; // mem_accounting.cpp / mem_walk_udp.cpp count the members
    static constexpr size_t kRxBufBytes = 65536;   // rxbuf_: one receive buffer per process
    static constexpr size_t kKeepFreeBuffers = 64; // free_bufs_: most datagram buffers kept for reuse

    struct TxPacket {
        uint64_t psn = 0;
        uint64_t sent_us = 0;   // last transmission (0: not transmitted yet, e.g. EAGAIN)
        uint32_t len = 0;       // stream bytes
        uint16_t retries = 0;
        bool sacked = false;
        bool fast_done = false;
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
        sockaddr_in addr{};
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
        // receiving
        uint64_t rx_next = 0;
        std::map<uint64_t, std::vector<char>> ooo; // datagrams that arrived early
        std::unique_ptr<StreamDecoder> decoder;    // on first data
        bool ack_pending = false;
        uint64_t last_heard_us = 0;
        uint64_t oldest_unacked_since_us = 0; // when the peer was last seen making progress on our data
        // finalize
        bool goodbye_sent = false;
        bool goodbye_rx = false;
        uint64_t goodbye_rx_us = 0;
        // failure
        bool failed = false;
        int failure_status = 0;
        std::string failure;
    };

    Peer &peer_for(int rank);
    Peer *find(int rank) const;
    Peer &add_peer(int rank, const sockaddr_in *from);
    bool pump(Peer &p);
    bool transmit(Peer &p, TxPacket &pkt);
    void fill_ack(const Peer &p, UdpHeader &h) const;
    void send_ack(Peer &p);
    bool raw_send(const char *buf, size_t len, const sockaddr_in &to);
    void flush_held();
    bool receive_all();
    void drain_errors();
    void on_unreachable(const sockaddr_in &addr);
    void on_datagram(const char *buf, size_t len, const sockaddr_in &from);
    void on_ack(Peer &p, uint64_t ack, uint64_t sack);
    void feed(Peer &p, const char *data, size_t len);
    void on_record(Peer &p, const IncomingRecord &rec);
    bool check_timers(Peer &p, uint64_t now);
    void fail_peer(Peer &p, int status, const std::string &message);
    std::unique_ptr<char[]> get_buffer();
    void put_buffer(std::unique_ptr<char[]> b);
    std::string describe(const Peer &p) const;
    void release_idle(uint64_t now);
    uint64_t rto_for(const Peer &p, uint16_t retries) const;
    void rtt_sample(Peer &p, uint64_t sample_us);
    uint32_t random();

    Context &ctx_;
    UniqueFd sock_;
    std::string my_addr_;
    uint32_t job_tag_ = 0;
    size_t mtu_;           // stream bytes per datagram
    size_t window_;
    std::unordered_map<int, std::unique_ptr<Peer>> peers_;
    std::vector<Peer *> live_; // peers_ in creation order (stable iteration)
    std::vector<std::unique_ptr<char[]>> free_bufs_;
    std::unique_ptr<char[]> rxbuf_;
    bool finalizing_ = false;
    bool errors_pending_ = false; // an ICMP error was reported: read the error queue
    uint64_t next_sweep_us_ = 0;
    // loss injection (LLC_UDP_DROP_PERMILLE / LLC_UDP_REORDER)
    uint64_t rng_;
    std::vector<char> held_;
    sockaddr_in held_to_{};
    bool have_held_ = false;
};

} // namespace llc
