// context.hpp - one libllc endpoint: job shape, handlers, transports, progress.
#pragma once

#include "wire/am_protocol.hpp"
#include "core/bootstrap.hpp"
#include "core/config.hpp"
#include "support/lazy_array.hpp"
#include "llc.h"
#include "node/node_map.hpp"
#include "hybrid/rc_slots.hpp"
#include "hybrid/ring_pool.hpp"
#include "wire/outgoing_message.hpp"
#include "support/peer_table.hpp"
#include "core/progress_backoff.hpp"
#include "hybrid/switch_asks.hpp"
#include "hybrid/switch_policy.hpp"

#include <array>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace llc {

class AddressBook;
class Tagged;
class SelfTransport;
class ShmTransport;
class TcpTransport;
class UdpTransport;
class VerbsTransport;

class Context {
public:
    // Collective (two bootstrap fences).  Throws Error on failure.
    Context(const llc_init_params_t &params, llc_context_t *handle);
    ~Context();
    Context(const Context &) = delete;
    Context &operator=(const Context &) = delete;

    // --- the C API, one call each -------------------------------------
    int rank() const { return rank_; }
    int size() const { return size_; }
    int node_of(int rank) const { return rank >= 0 && rank < size_ ? node_map_.node_of(rank) : -1; }
    void register_handler(unsigned id, llc_am_handler_t handler, void *arg);
    int am_send(int dest, unsigned id, const void *hdr, size_t hdr_len, const llc_iov_t *iov,
                int iovcnt, llc_completion_t cb, void *cb_arg);
    Tagged &tagged() { return *tagged_; }
    // Tests that forge records from a real process (shm_cma_hostile_test.cpp):
    // the shm transport, and the next sequence number to dest, used up.
    ShmTransport *shm_for_tests() { return shm_.get(); }
    uint64_t take_send_seq_for_tests(int dest) { return next_send_seq_[dest]++; }

    // --- libllc's own protocols (handler ids above the caller's) ---------
    void register_internal_handler(unsigned id, llc_am_handler_t handler, void *arg);
    // am_send without the argument checks (id may be internal).
    int send_am(int dest, unsigned id, const void *hdr, size_t hdr_len, const llc_iov_t *iov, int iovcnt,
                llc_completion_t cb, void *cb_arg);
    // The fast path of a small tagged send that is not synchronous: written
    // whole into a local peer's ring as a message chunk (ShmTagHeader) when it
    // fits now and nothing waits before it; true when sent.  False: send it
    // as a kTagEager record.
    bool try_send_tagged_inline(int dest, uint64_t tag, uint32_t source, const void *buf, size_t len);
    int progress(int *progressed);
    // Flush, say goodbye, fence.  Throws the first error met (after fencing).
    void finalize();
    llc_stats_t stats() const; // the counters, with the RC slot figures as of now
    const char *last_error() const { return last_error_.c_str(); }
    void set_last_error(const std::string &message) { last_error_ = message; }

    // --- services for the transports ----------------------------------
    const Config &config() const { return config_; }
    const std::string &job_id() const { return job_id_; }
    const NodeMap &node_map() const { return node_map_; }
    Bootstrap &bootstrap() { return boot_; }
    // Where the transports publish and look up endpoint addresses (LLC_KVS).
    AddressBook &addresses() { return *kvs_; }
    llc_stats_t &counters() { return stats_; }
    // Check order, count and run the handler.  Throws Error(LLC_ERR_PEER)
    // when the record is out of order (a protocol bug).
    void deliver(int src, const WireHeader &wire, const void *hdr, const void *data, size_t data_len);
    // The same for a message chunk of a shared-memory ring (a ShmTagHeader, then the payload).
    void deliver_tagged_chunk(int src, const char *chunk, size_t len);
    // Where a record's payload from src may be received in place
    // (StreamDecoder::Placer): a rendezvous Data record's posted receive buffer.
    char *payload_destination(int src, const WireHeader &wire, const void *hdr);
    // A message from src that will never be delivered (a single-copy read
    // that failed): its sequence number is used up, in order (deliver does
    // this first).  Throws like deliver when it is out of order.
    void skip_message(int src, const WireHeader &wire);
    // Remember an error for the current llc_progress to return (first one wins).
    void report_error(int status, const std::string &message);
    // Queue msg's completion callback (if it is owed) to run inside llc_progress.
    void defer_completion(OutgoingMessage &msg, int status);
    // Hybrid switching handshake (see doc/libllc.md, "Hybrid").
    void on_switch_marker(int src); // a Switch record arrived on tcp from src
    void on_switch_ack(int src);    // a SwitchAck record arrived on udp from src
    // Receiver-driven hybrid: a message from src arrived on this path.
    enum class Arrival : uint8_t { Udp, Tcp };
    void note_arrival(int src, Arrival path, uint64_t bytes)
    {
        if (switch_policy_)
            count_arrival(src, path, bytes);
    }
    // A SwitchAsk (number: the asker's round) arrived from src on the switching channel.
    SwitchVerdict on_switch_request(int src, uint64_t want, uint64_t number);
    // The answer to one of our asks: want is what it asked for (SwitchWant),
    // point the source's next psn to us when it answered (the change point
    // of ring addressing, see udp_ring_landing.hpp).
    void on_switch_answer(int src, uint64_t number, SwitchVerdict verdict, uint64_t want = 0, uint64_t point = 0);
    // udp may drop its state for dest: no hybrid route of dest is on tcp,
    // switching or holding sends (always true unless LLC_NET=hybrid).
    bool udp_state_droppable(int dest) const;
    // Receiver-driven hybrid, the ring pool: the ring leased for src (the
    // landing zone of its tcp stream), or nullptr.  The answer holds until
    // landing_epoch() changes (a ring leased or returned); a ring is never
    // returned while a transport reads into it (returns wait for the end of
    // the tcp progress call).
    uint64_t landing_epoch() const { return landing_epoch_; }
    char *landing_for(int src, size_t &bytes);
    // DC RDMA: the ring leased for src's ring-addressed udp datagrams, or
    // nullptr.  A ring serves one path at a time: udp while the source is
    // (asked to be) ring-addressed, else tcp (landing_for).  The answer
    // holds until landing_epoch() changes; the udp transport is told before
    // the ring goes back (UdpTransport::detach_landing).
    char *udp_landing_for(int src, size_t &bytes);
    void on_tcp_source_failed(int src); // src's accepted tcp connection broke

private:
    // The next message from src must carry the pair's next sequence number
    // (in the bits of `bits`: a shm message chunk carries the low 32): use
    // it up, or throw LLC_ERR_PEER naming both numbers.
    void take_sequence(int src, uint64_t got, uint64_t bits);
    friend struct MemWalk; // mem_accounting.cpp counts the members
    void validate(const llc_init_params_t &params);
    void create_transports();
    bool run_completions();
    bool sends_pending() const;
    bool incoming_quiet() const;
    void idle_sleep();
    int send_remote(int dest, std::unique_ptr<OutgoingMessage> msg);

    // Hybrid (LLC_NET=hybrid): per inter-node destination talked to
    // recently, in a PeerTable capped at LLC_MAX_CONTEXTS (see route_droppable).
    enum class Path : uint8_t { Udp, Tcp };
    enum class Switching : uint8_t { None, ToTcp, ToUdp };
    struct Route {
        Path path = Path::Udp;
        Switching switching = Switching::None;
        uint32_t last_tick = 0;   // hybrid_ticks_ at its latest send (or creation)
        uint64_t period_msgs = 0; // sends in the current period
        uint64_t score = 0;       // history: score = score / 2 + period_msgs, every period
        uint64_t last_ask = 0;    // number of the latest switch ask from this (receiver) rank
        // sends made while switching (allocated then only: an empty deque owns heap memory)
        std::unique_ptr<std::deque<std::unique_ptr<OutgoingMessage>>> held;
    };
    int hold(Route &r, std::unique_ptr<OutgoingMessage> msg);
    void release_held(int dest, Route &r);
    bool advance_switches();
    void hybrid_tick(uint64_t now);
    void promote(int dest, Route &r);
    void demote(int dest, Route &r);
    size_t age_routes();
    int least_busy_tcp_route() const; // -1 if none is settled on tcp
    void sender_tick();
    // The cap (LLC_MAX_CONTEXTS) on routes_ and sources_: an entry may be
    // dropped to make room only when dropping it changes nothing but the
    // history the policy forgets (see doc/libllc.md, "Hybrid", "Bounded state").
    bool route_droppable(const Route &r) const;
    void trim_hybrid_tables();
    Route &route_for(int dest); // get or create, making room under the cap if it can
    PeerTable<Route> routes_{1, {}, 0, true}; // resized in create_transports
    uint32_t hybrid_ticks_ = 0;      // policy periods so far (both drivers)
    uint32_t hybrid_idle_ticks_ = 0; // LLC_UDP_EVICT_IDLE_MS in whole periods (rounded up)
    uint64_t route_busy_msgs_ = 1;   // score at which a route's history is kept: LLC_HYBRID_PROMOTE_MSGS / 4 (>= 1)
    size_t switching_count_ = 0;
    size_t held_count_ = 0;
    RcSlots rc_slots_;           // LLC_MAX_RC_PER_NODE, node-shared (rc_slots.hpp); hybrid only
    size_t rc_sources_held_ = 0; // receiver-driven: slots held for sources on (or asked to) tcp
    // Receiver-driven: the node's ring pool (ring_pool.hpp) and the ring of
    // each source on tcp or asked to move there, held until its tcp stream
    // has drained (Switch marker), the request was refused, or it failed.
    // Declared after the pool (destroyed before it) and before the
    // transports (destroyed after them).
    RingPool ring_pool_;
    std::unordered_map<int, RingLease> rings_;
    std::vector<int> rings_retiring_; // returned at the end of the tcp progress call
    uint64_t landing_epoch_ = 0;
    bool ring_still_needed(int src) const;
    void retire_ring(int src);
    void return_retired_rings();
    uint64_t next_tick_us_ = 0;
    bool policy_frozen_ = false; // finalize: no new switches

    // Receiver-driven hybrid (LLC_HYBRID_DRIVER=receiver): per source heard
    // from recently (erased once its whole history is quiet).
    struct Source {
        explicit Source(size_t periods = ReceiveHistory::kRecent) : history(periods) {}
        ReceiveHistory history; // history_periods_ periods (receive_history.hpp)
        Arrival seen = Arrival::Udp;  // path of its latest message (Udp after its Switch marker)
        Arrival asked = Arrival::Udp; // path last asked for
        bool ring_asked = false;      // that request is for ring addressing (DC RDMA, SwitchWant::UdpRing)
        bool ring_on = false;         // it accepted ring addressing and has not accepted to stop
        uint32_t last_tick = 0;       // hybrid_ticks_ at its latest message
        uint64_t asked_period = 0;    // period of that request; 0: none pending
    };
    // Periods a request may stay unanswered before the source counts by what
    // arrives again (and may be asked again): the sender can refuse silently.
    static constexpr uint64_t kRequestPatience = 3;
    void count_arrival(int src, Arrival path, uint64_t bytes);
    void receiver_tick();
    bool source_droppable(const Source &s) const;
    bool ring_for_udp(int src) const; // src is (asked to be) ring-addressed: its ring serves udp
    void dc_rdma_tick(const std::vector<SourceLoad> &loads, const std::vector<SwitchDecision> &rc_moves);
    void ask_ring(int src, Source &s);
    void return_ring_now(int src); // not while the tcp transport reads (between progress steps)
    PeerTable<Source> sources_{1, {}, 0, true}; // resized in create_transports (receiver-driven only)
    size_t history_periods_ = ReceiveHistory::kRecent; // per source: LLC_HYBRID_HISTORY_PERIODS, or the paper's count for size_
    std::unique_ptr<SwitchPolicy> switch_policy_; // set when this process is a receiver-driven hybrid
    uint64_t period_ = 0;

    llc_context_t *handle_;
    int rank_ = 0;
    int size_ = 0;
    NodeMap node_map_; // rank -> node, node-shared (node_map.hpp)
    std::string job_id_;
    Config config_;
    Bootstrap boot_;

    struct HandlerSlot {
        llc_am_handler_t fn = nullptr;
        void *arg = nullptr;
    };
    static_assert(kPublicHandlers == LLC_AM_MAX_HANDLERS, "handler ranges");
    std::array<HandlerSlot, kHandlerSlots> handlers_{};
    LazyZeroArray<uint64_t> next_send_seq_; // n entries, pages committed on first use
    LazyZeroArray<uint64_t> next_recv_seq_;

    struct Completion {
        llc_completion_t cb;
        void *arg;
        int status;
    };
    std::vector<Completion> completions_;

    llc_stats_t stats_{};
    std::string last_error_ = "no error";
    int progress_status_ = LLC_OK;
    std::string progress_message_;
    bool in_progress_ = false;
    ProgressBackoff backoff_;

    std::unique_ptr<AddressBook> kvs_; // declared before the transports: destroyed after them
    std::unique_ptr<SelfTransport> self_;
    std::unique_ptr<ShmTransport> shm_;
    std::unique_ptr<TcpTransport> tcp_;
    std::unique_ptr<UdpTransport> udp_;
    std::unique_ptr<VerbsTransport> verbs_; // LLC_NET=verbs with a usable device (verbs_transport.hpp)
    std::unique_ptr<Tagged> tagged_;        // tagged point-to-point (tagged.hpp); after the transports: destroyed first
};

// The Context behind a handle (tests reach libllc's own protocols through it).
Context &context_of(llc_context_t *handle);

} // namespace llc
