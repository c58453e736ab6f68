// net_router.hpp - the inter-node socket transports, and which of them
// carries each inter-node message.
//
// The router owns the two socket transports and sits between them and the
// Context: the connected class, tcp (the paper's RC), and the connectionless
// class, udp (the paper's DC).  LLC_NET chooses which exist; with
// LLC_NET=tcp or udp it sends everything one way.  It runs their progress
// (one poll() for both), their idle wait and their goodbyes.
// With LLC_NET=hybrid it decides per peer (doc/libllc-hybrid.md):
//   * the sender driver promotes busy destinations to tcp and demotes quiet
//     ones (sender_tick);
//   * the receiver driver counts arrivals per source (ReceiveHistory), asks
//     the SwitchPolicy every period which sources should move, within the
//     node's connected (tcp) slots (ConnectedSlots) and ring pool
//     (RingPool), and asks them on the switching channel (receiver_tick);
//     ring landing (the paper's DC RDMA) is its ring-addressed udp;
//   * either way, the switching protocol drains the old path before the new
//     one carries anything (hold, promote, demote, advance_switches).
// Its per-peer state is capped at LLC_MAX_CONTEXTS (route_droppable,
// source_droppable).  The transports tell it what arrives through NetEvents
// and never call it otherwise.
#pragma once

#include "core/config.hpp"
#include "hybrid/connected_slots.hpp"
#include "hybrid/receive_history.hpp"
#include "hybrid/ring_pool.hpp"
#include "hybrid/switch_policy.hpp"
#include "llc.h"
#include "support/peer_table.hpp"
#include "transport/busy_promotion.hpp"
#include "transport/transport.hpp"
#include "transport/net_events.hpp"
#include "wire/outgoing_message.hpp"

#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace llc {

class Context;
struct StructSizes;
class TcpTransport;
class UdpTransport;

class NetRouter final : public Transport, public NetEvents {
public:
    // Creates the transports LLC_NET asks for (tcp, udp or both) and
    // publishes their addresses, and subscribes to their events.
    // local_ranks: the processes of this node (the node-shared slot count,
    // ring pool and udp socket are for them).  Creates the node's shared
    // state (leader) now: call before the first bootstrap fence, attach()
    // after it, release_names() after the second.  Throws Error.
    NetRouter(Context &ctx, const std::vector<int> &local_ranks);
    NetRouter(const NetRouter &) = delete;
    NetRouter &operator=(const NetRouter &) = delete;
    ~NetRouter() override;

    // Transport: "tcp", "udp" or "hybrid" (LLC_NET), with the flags its
    // transports share (common_flags): reliable and ordered per peer, woken
    // by arrivals.
    const TransportCaps &caps() const override { return caps_; }
    // LLC_UDP_SHARED_RECV=1: the node leader's udp socket (throws Error);
    // the leader's slot count and ring pool (never fail).
    void attach() override;
    void release_names() override;
    int send(int dest, std::unique_ptr<OutgoingMessage> msg) override;
    // Progress of both transports (one poll() covers the tcp sockets and
    // the udp socket), then the switches and the policy.
    bool progress() override;
    void idle_wait(uint64_t us) override;
    bool has_pending_sends() const override;
    // Finalize: no new switches from the first call; once none is in
    // flight, tcp's and udp's flush() (their goodbyes).
    bool flush() override;
    // Quiet when both are; peer_running never (no process of another node
    // is watched); the report is udp's ("" without udp).
    CloseState close_state(CloseDetail detail) const override;
    // The figures only the router knows (connected slots, tables, rings).
    void add_stats(llc_stats_t &st) const override;
    // Its transports' account(), then its own object, routes, receive
    // histories, the node's slot count and ring pool (net_router_account.cpp).
    void account(MemRegistry &r) const override;
    static void struct_sizes(StructSizes &s);

    // NetEvents
    void note_arrival(int src, Arrival path, uint64_t bytes) override
    {
        if (switch_policy_)
            count_arrival(src, path, bytes);
    }
    void on_switch_marker(int src) override;
    void on_switch_ack(int src) override;
    SwitchVerdict on_switch_request(int src, uint64_t want, uint64_t number) override;
    void on_switch_answer(int src, uint64_t number, SwitchVerdict verdict, uint64_t want, uint64_t point) override;
    bool udp_state_droppable(int dest) const override;
    uint64_t landing_epoch() const override { return landing_epoch_; }
    char *landing_for(int src, size_t &bytes) override;
    char *udp_landing_for(int src, size_t &bytes) override;
    void on_tcp_source_failed(int src) override;

private:
    // Per inter-node destination talked to recently, in a PeerTable capped
    // at LLC_MAX_CONTEXTS (see route_droppable).
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
    // Receiver-driven (LLC_HYBRID_DRIVER=receiver): per source heard from
    // recently (erased once its whole history is quiet).
    struct Source {
        explicit Source(size_t periods = ReceiveHistory::kRecent) : history(periods) {}
        ReceiveHistory history; // history_periods_ periods (receive_history.hpp)
        Arrival seen = Arrival::Udp;  // path of its latest message (Udp after its Switch marker)
        Arrival asked = Arrival::Udp; // path last asked for
        bool ring_asked = false;      // that request is for ring addressing (ring landing, SwitchWant::UdpRing)
        bool ring_on = false;         // it accepted ring addressing and has not accepted to stop
        uint32_t last_tick = 0;       // hybrid_ticks_ at its latest message
        uint64_t asked_period = 0;    // period of that request; 0: none pending
    };
    // Periods a request may stay unanswered before the source counts by what
    // arrives again (and may be asked again): the sender can refuse silently.
    static constexpr uint64_t kRequestPatience = 3;

    // The flags every transport it routes over has (for caps_).
    uint32_t common_flags() const;

    // The switching protocol.
    int hold(Route &r, std::unique_ptr<OutgoingMessage> msg);
    void release_held(int dest, Route &r);
    bool advance_switches();
    void promote(int dest, Route &r);
    void demote(int dest, Route &r);
    int least_busy_tcp_route() const; // -1 if none is settled on tcp
    // The policy, once a period.
    void hybrid_tick(uint64_t now);
    size_t age_routes();
    void sender_tick();
    void count_arrival(int src, Arrival path, uint64_t bytes);
    void receiver_tick();
    // The cap (LLC_MAX_CONTEXTS) on routes_ and sources_: an entry may be
    // dropped to make room only when dropping it changes nothing but the
    // history the policy forgets (see doc/libllc-hybrid.md, "Bounded state").
    bool route_droppable(const Route &r) const;
    bool source_droppable(const Source &s) const;
    void trim_hybrid_tables();
    Route &route_for(int dest); // get or create, making room under the cap if it can
    // Ring landing (the paper's DC RDMA) and the ring pool.
    void ring_landing_tick(const std::vector<SourceLoad> &loads, const std::vector<SwitchDecision> &connected_moves);
    void ask_ring(int src, Source &s);
    void return_ring_now(int src); // not while the tcp transport reads (between progress steps)
    bool ring_still_needed(int src) const;
    bool ring_for_udp(int src) const; // src is (asked to be) ring-addressed: its ring serves udp
    void retire_ring(int src);
    void return_retired_rings();

    Context &ctx_;
    const Config &config_;
    llc_stats_t &stats_; // the context's counters
    const int rank_;
    const bool hybrid_; // LLC_NET=hybrid (tcp and udp)
    const BusyPromotion promotion_; // LLC_HYBRID_PROMOTE_MSGS: which routes take a connected slot
    TransportCaps caps_;

    PeerTable<Route> routes_{1, {}, 0, true}; // sized by the constructor (hybrid only)
    uint32_t hybrid_ticks_ = 0;      // policy periods so far (both drivers)
    uint32_t hybrid_idle_ticks_ = 0; // LLC_UDP_EVICT_IDLE_MS in whole periods (rounded up)
    uint64_t route_busy_msgs_ = 1;   // score at which a route's history is kept: LLC_HYBRID_PROMOTE_MSGS / 4 (>= 1)
    size_t switching_count_ = 0;
    size_t held_count_ = 0;
    uint64_t next_tick_us_ = 0;
    bool policy_frozen_ = false; // finalize: no new switches
    // LLC_MAX_RC_PER_NODE, node-shared (connected_slots.hpp); hybrid only.
    // Receiver-driven: its In slots are those of the sources on (or asked to) tcp.
    ConnectedSlots connected_slots_;
    // Receiver-driven: the node's ring pool (ring_pool.hpp) and the ring of
    // each source on tcp or asked to move there, held until its tcp stream
    // has drained (Switch marker), the request was refused, or it failed.
    RingPool ring_pool_;
    std::unordered_map<int, RingLease> rings_;
    std::vector<int> rings_retiring_; // returned at the end of the tcp progress call
    uint64_t landing_epoch_ = 0;
    PeerTable<Source> sources_{1, {}, 0, true}; // sized by the constructor (receiver-driven only)
    size_t history_periods_ = ReceiveHistory::kRecent; // per source: LLC_HYBRID_HISTORY_PERIODS, or the paper's count for the job size
    std::unique_ptr<SwitchPolicy> switch_policy_; // set when this process is a receiver-driven hybrid
    uint64_t period_ = 0;
    // The transports: declared last, destroyed first (nothing reads into a
    // ring when the rings go back).
    std::unique_ptr<TcpTransport> tcp_;
    std::unique_ptr<UdpTransport> udp_;
};

} // namespace llc
