// net_router.cpp - the inter-node router: sending, the switching protocol,
// the sender- and receiver-driven policies, the cap on its tables, ring landing
// (the paper's DC RDMA).
#include "hybrid/net_router.hpp"

#include "core/clock.hpp"
#include "core/context.hpp"
#include "core/errors.hpp"
#include "transport/tcp/tcp_transport.hpp"
#include "transport/udp/udp_transport.hpp"

#include <time.h>

#include <algorithm>
#include <initializer_list>

namespace llc {

NetRouter::NetRouter(Context &ctx, const std::vector<int> &local_ranks)
    : ctx_(ctx), config_(ctx.config()), stats_(ctx.counters()), rank_(ctx.rank()),
      hybrid_(config_.net == Config::Net::Hybrid), promotion_(config_.hybrid_promote_msgs)
{
    if (config_.net != Config::Net::Udp) {
        tcp_ = std::make_unique<TcpTransport>(ctx);
        tcp_->publish_address();
    }
    if (config_.net != Config::Net::Tcp) {
        udp_ = std::make_unique<UdpTransport>(ctx, local_ranks);
        udp_->publish_address();
    }
    caps_ = TransportCaps::named(hybrid_ ? "hybrid" : tcp_ ? "tcp" : "udp").with(common_flags());
    const NodeMap &nodes = ctx.node_map();
    const int local_procs = int(local_ranks.size());
    // The node's connected-class (tcp) slots: shared by its processes (the leader creates the count now).
    if (config_.net == Config::Net::Hybrid && config_.max_rc_per_node > 0)
        connected_slots_ = ConnectedSlots(size_t(config_.max_rc_per_node), nodes.my_node(), rank_, nodes.leader(),
                                          local_procs, ctx.job_id(), config_.node_shared);
    // The node's ring pool: receivers lease a ring per source they ask to
    // move to tcp, or to address its udp datagrams to (ring landing, which
    // needs no connected slot: the pool is there with LLC_MAX_RC_PER_NODE=0 too).
    const bool receiver = hybrid_ && config_.hybrid_driver == Config::HybridDriver::Receiver;
    if (receiver && (config_.max_rc_per_node > 0 || config_.hybrid_dc_rdma) && config_.ring_pool > 0)
        ring_pool_ = RingPool(size_t(config_.ring_pool), size_t(config_.ring_slots), size_t(config_.ring_slot_bytes),
                              nodes.my_node(), rank_, nodes.leader(), local_procs, ctx.job_id(), config_.node_shared);
    if (receiver)
        switch_policy_ = std::make_unique<SwitchPolicy>(CostModel{}, config_.hybrid_promote_msgs, connected_slots_.cap());
    if (hybrid_) {
        // Per-peer hybrid state, capped at gamma like udp's peers (slots made on demand).
        routes_ = PeerTable<Route>(config_.max_contexts, {}, 0, true);
        if (switch_policy_) {
            sources_ = PeerTable<Source>(config_.max_contexts, {}, 0, true);
            history_periods_ = config_.hybrid_history_periods ? size_t(config_.hybrid_history_periods)
                                                              : history_periods(uint64_t(ctx.size()));
        }
        const uint64_t period = std::max<uint64_t>(1, config_.hybrid_period_ms);
        hybrid_idle_ticks_ =
            uint32_t(std::min<uint64_t>((config_.udp_evict_idle_ms + period - 1) / period, UINT32_MAX / 2));
        route_busy_msgs_ = std::max<uint64_t>(1, config_.hybrid_promote_msgs / 4);
    }
    if (tcp_)
        tcp_->subscribe(*this);
    // tcp by itself: one connection per pair carries both directions
    // (tcp_transport.hpp); the hybrid keeps one direction per connection.
    if (tcp_ && config_.net == Config::Net::Tcp)
        tcp_->enable_bidirectional();
    if (udp_)
        udp_->subscribe(*this);
}

NetRouter::~NetRouter() = default;

uint32_t NetRouter::common_flags() const
{
    // A peer's messages may go over either transport (hybrid): the router
    // promises only what both promise.  The switching protocol keeps a
    // peer's order across a switch only because each path keeps it, and
    // idle_wait's one poll() covers both sockets only when both wake on
    // arrival.
    uint32_t flags = ~0u;
    for (const Transport *t : std::initializer_list<const Transport *>{tcp_.get(), udp_.get()})
        if (t)
            flags &= t->caps().flags;
    return flags;
}

void NetRouter::attach()
{
    if (udp_)
        udp_->attach();
    connected_slots_.attach();   // the leader's slot count (falls back to a private share, never fails)
    ring_pool_.attach();  // the leader's ring pool (falls back to a private pool, never fails)
}

void NetRouter::release_names()
{
    connected_slots_.release_name();
    ring_pool_.release_name();
    if (udp_)
        udp_->release_names();
}

int NetRouter::send(int dest, std::unique_ptr<OutgoingMessage> msg)
{
    if (!hybrid_) {
        if (tcp_) {
            stats_.tcp_msgs++;
            return tcp_->send(dest, std::move(msg));
        }
        stats_.udp_msgs++;
        return udp_->send(dest, std::move(msg));
    }
    Route &r = route_for(dest);
    r.period_msgs++;
    r.last_tick = hybrid_ticks_;
    bool to_tcp = r.switching == Switching::ToTcp || (r.switching == Switching::None && r.path == Path::Tcp);
    if (to_tcp)
        stats_.tcp_msgs++;
    else
        stats_.udp_msgs++;
    if (r.switching != Switching::None)
        return hold(r, std::move(msg));
    if (r.path == Path::Tcp)
        return tcp_->send(dest, std::move(msg));
    return udp_->send(dest, std::move(msg));
}

bool NetRouter::progress()
{
    bool did = false;
    // hybrid: one poll() covers the tcp sockets and the udp socket, so an
    // idle udp socket costs no recvfrom() per progress call
    bool udp_ready = true;
    if (tcp_) {
        did |= tcp_->progress_polling(udp_ ? udp_->fd() : -1, udp_ ? &udp_ready : nullptr);
        return_retired_rings(); // retired while tcp read: it no longer reads into them
    }
    if (udp_) {
        did |= udp_->progress_after_poll(udp_ready);
        did |= advance_switches();
        hybrid_tick(monotonic_us());
        stats_.udp_peers = udp_->peer_count();
    }
    return did;
}

void NetRouter::idle_wait(uint64_t us)
{
    if (!udp_ || !tcp_) {
        (tcp_ ? static_cast<Transport &>(*tcp_) : *udp_).idle_wait(us);
        return;
    }
    // hybrid: one poll() over the tcp sockets and udp's
    if (!udp_->prepare_sleep())
        return; // a neighbour has handed a datagram over already
    struct Woken {
        UdpTransport &udp;
        ~Woken() { udp.finish_sleep(); }
    } woken{*udp_};
    tcp_->wait_for_activity(us, udp_->fd(), udp_->handover_fd());
}

bool NetRouter::has_pending_sends() const
{
    return (tcp_ && tcp_->has_pending_sends()) || (udp_ && udp_->has_pending_sends()) || held_count_ > 0;
}

bool NetRouter::flush()
{
    policy_frozen_ = true;
    if (switching_count_ > 0)
        return false; // the goodbyes wait: nothing is sent on a path after its goodbye
    bool flushed = true;
    if (tcp_)
        flushed &= tcp_->flush(); // queued behind any data still pending
    if (udp_)
        flushed &= udp_->flush();
    return flushed;
}

Transport::CloseState NetRouter::close_state(CloseDetail detail) const
{
    CloseState s = udp_ ? udp_->close_state(detail) : CloseState(); // its report is the router's
    s.quiet = s.quiet && (!tcp_ || tcp_->close_state(CloseDetail::Quiet).quiet);
    return s;
}

// ------------------------------------------------------------------ switching
//
// Switching protocol.  Promotion (udp -> tcp): new sends to the destination
// are held; once udp reports every datagram to it acknowledged (so every
// record sent on udp has been delivered there: acknowledgements are only
// given for data fed to the decoder in order), the held sends go to tcp.
// Demotion (tcp -> udp): new sends are held; a Switch record goes on tcp
// behind the data; the receiver answers it with a SwitchAck on its udp
// stream to us; on that the held sends go to udp.  Either way the old path
// is drained before the new one carries anything, so the receiver needs no
// buffering and Context::deliver's per-pair sequence check holds.

int NetRouter::hold(Route &r, std::unique_ptr<OutgoingMessage> msg)
{
    held_count_++;
    if (!r.held)
        r.held = std::make_unique<std::deque<std::unique_ptr<OutgoingMessage>>>();
    if (msg->payload_len() <= config_.copy_max) {
        msg->own_payload();
        r.held->push_back(std::move(msg));
        return LLC_OK;
    }
    msg->owes_callback = true;
    r.held->push_back(std::move(msg));
    return LLC_INPROGRESS;
}

void NetRouter::release_held(int dest, Route &r)
{
    while (r.held && !r.held->empty()) {
        std::unique_ptr<OutgoingMessage> msg = std::move(r.held->front());
        r.held->pop_front();
        held_count_--;
        // The sender was told LLC_INPROGRESS when the message was held
        // (owes): the transport takes it as a new send, and whichever of us
        // ends up owing the callback calls it exactly once.  (Handed over
        // still owing, a transport that failed inside send() completed it
        // with its queue and then threw: two callbacks.)
        const bool owes = msg->owes_callback;
        msg->owes_callback = false;
        llc_completion_t cb = msg->cb;
        void *cb_arg = msg->cb_arg;
        int rc = LLC_OK;
        try {
            rc = r.path == Path::Tcp ? tcp_->send(dest, std::move(msg)) : udp_->send(dest, std::move(msg));
        } catch (const Error &e) {
            rc = LLC_ERR_PEER;
            ctx_.report_error(e.status(), e.what());
        }
        if (owes && cb && rc != LLC_INPROGRESS) // written, copied or failed: the transport owes nothing
            ctx_.queue_completion(cb, cb_arg, rc == LLC_OK ? LLC_OK : LLC_ERR_PEER);
    }
    r.held.reset();
}

void NetRouter::promote(int dest, Route &r)
{
    r.switching = Switching::ToTcp;
    switching_count_++;
    stats_.rc_active++;
    try {
        tcp_->connect_early(dest);
    } catch (const Error &e) {
        ctx_.report_error(e.status(), e.what());
    }
}

void NetRouter::demote(int dest, Route &r)
{
    r.switching = Switching::ToUdp;
    switching_count_++;
    stats_.rc_active--;
    connected_slots_.give(ConnectedDir::Out);
    try {
        tcp_->send(dest, OutgoingMessage::make_control(Kind::Switch, rank_, 0));
    } catch (const Error &e) {
        // The connection is broken (the error says so): no acknowledgement
        // will come; carry on over udp rather than hold sends forever.
        ctx_.report_error(e.status(), e.what());
        r.path = Path::Udp;
        r.switching = Switching::None;
        switching_count_--;
        stats_.rc_demotions++;
    }
}

bool NetRouter::advance_switches()
{
    if (switching_count_ == 0)
        return false;
    bool did = false;
    routes_.for_each([&](int dest, Route &r) {
        if (r.switching != Switching::ToTcp || !udp_->drained_towards(dest))
            return;
        r.switching = Switching::None;
        switching_count_--;
        if (udp_->failed(dest)) {
            // Drained because it failed (reported already): no promotion to
            // a dead peer.  The route stays on udp, whose sends to it fail at
            // once, the held ones too (their callbacks get the error).
            stats_.rc_active--;
            connected_slots_.give(ConnectedDir::Out);
        } else {
            r.path = Path::Tcp;
            stats_.rc_promotions++;
        }
        release_held(dest, r);
        did = true;
    });
    return did;
}

void NetRouter::on_switch_marker(int src)
{
    if (Source *s = sources_.peek(src))
        s->seen = Arrival::Udp; // its tcp path is drained: what follows comes on udp
    // Nothing more lands in its ring (unless it was asked back to tcp since):
    // returned once the tcp transport has finished reading.
    if (rings_.count(src) && (!sources_.peek(src) || !ring_still_needed(src)))
        retire_ring(src);
    if (!udp_)
        throw Error(LLC_ERR_PEER, "protocol error: rank " + std::to_string(src) +
                                      " sent a transport switch marker but this process has no udp transport "
                                      "(is LLC_NET the same on every process?)");
    udp_->send_control(src, Kind::SwitchAck);
}

SwitchVerdict NetRouter::on_switch_request(int src, uint64_t want, uint64_t number)
{
    if (want != uint64_t(SwitchWant::Udp) && want != uint64_t(SwitchWant::Tcp) && want != uint64_t(SwitchWant::UdpRing))
        throw Error(LLC_ERR_PEER, "protocol error: rank " + std::to_string(src) +
                                      " asked for an unknown path (" + std::to_string(want) + ")");
    if (ctx_.node_of(src) == ctx_.node_of(rank_))
        throw Error(LLC_ERR_PEER, "protocol error: rank " + std::to_string(src) +
                                      " on this node sent a transport switch request");
    stats_.rc_requests_received++;
    auto refuse = [this] {
        stats_.rc_requests_refused++;
        return SwitchVerdict::Refused;
    };
    // The receiver does not wait for the answer: it learns where the
    // messages arrive from the messages; a refusal lets it give its slot
    // back at once, and it may ask again later.
    if (!switch_policy_ || policy_frozen_ || !tcp_)
        return refuse(); // sender-driven here, or finalizing
    Route &r = route_for(src);
    // Asks travel outside the numbered stream and are repeated until
    // answered: an older one arriving late must not undo a newer one, and a
    // repeated one gets the answer the first got.
    if (number < r.last_ask)
        return refuse();
    r.last_ask = number;
    if (want == uint64_t(SwitchWant::UdpRing)) {
        // Ring landing: stay on udp, address the datagrams to the receiver's ring
        // (UdpTransport::on_switch_ask does it on an acceptance).  Only from
        // settled udp: a receiver moves a tcp source to plain udp first.
        if (!config_.hybrid_dc_rdma || r.switching != Switching::None || r.path != Path::Udp)
            return refuse();
        return SwitchVerdict::Accepted;
    }
    const bool to_tcp = want == uint64_t(SwitchWant::Tcp);
    const bool on_tcp = r.path == Path::Tcp;
    if (r.switching != Switching::None) {
        if ((r.switching == Switching::ToTcp) == to_tcp)
            return SwitchVerdict::Accepted; // under way (a repeated ask)
        return refuse();                    // the next request comes after this switch
    }
    if (to_tcp == on_tcp)
        return SwitchVerdict::Accepted; // already there
    if (to_tcp) {
        if (!connected_slots_.try_take(ConnectedDir::Out)) {
            // Every connected slot of this node is in use.  Give up the one to the
            // destination this process sends least to, if src gets at least
            // twice as much (its receiver will see the Switch marker);
            // otherwise refuse.
            int victim = least_busy_tcp_route();
            uint64_t src_score = r.score + r.period_msgs;
            Route *v = victim < 0 ? nullptr : routes_.peek(victim);
            if (!v ||
                !BusyPromotion::displaces(src_score, v->score + v->period_msgs, BusyPromotion::AtTwice::Displaces)) {
                stats_.rc_slots_full++;
                return refuse();
            }
            demote(victim, *v); // gives its slot back
            if (!connected_slots_.try_take(ConnectedDir::Out)) { // another process of the node took it meanwhile
                stats_.rc_slots_full++;
                return refuse();
            }
        }
        promote(src, r);
    } else {
        demote(src, r);
    }
    return SwitchVerdict::Accepted;
}

// The source answered an ask (a repeated answer never gets here).  A refusal
// ends the wait at once: the slot (and ring) taken for a promotion go back
// to the node now instead of after kRequestPatience periods.
void NetRouter::on_switch_answer(int src, uint64_t number, SwitchVerdict verdict, uint64_t want, uint64_t point)
{
    (void)point; // the datagrams carry their own addressing; the point is where they change (see doc)
    Source *s = sources_.peek(src);
    if (verdict != SwitchVerdict::Refused) {
        // Accepted.  Where a source sends is learnt from its messages (or its
        // Switch marker); ring addressing is learnt here, for it changes
        // nothing the messages show.
        if (!s)
            return;
        // A move to udp shows in the source's Switch marker.  A move to tcp
        // shows in nothing if the source has nothing more to send: count it
        // as on tcp now, or after kRequestPatience periods this receiver
        // would take it for one that stayed on udp (its slot and ring given
        // back, never asked to leave tcp) while the source keeps its tcp
        // route and slot until it sends again.  Its udp datagrams still in
        // flight may flip `seen` back; its next tcp message sets it again.
        if (want == uint64_t(SwitchWant::Tcp) && s->asked_period == number && s->asked == Arrival::Tcp)
            s->seen = Arrival::Tcp;
        if (want == uint64_t(SwitchWant::UdpRing)) {
            if (!s->ring_on)
                stats_.dc_rdma_switches++;
            s->ring_on = true; // from psn `point` on (also after a late answer: the source does it now)
            if (s->asked_period == number)
                s->asked_period = 0;
            s->ring_asked = false;
        } else if (s->ring_on) {
            // Udp or Tcp accepted: no ring-addressed datagram from `point`
            // on.  Those before it still land (or take the ordinary way once
            // the ring is gone: UdpTransport::detach_landing copies out what
            // the ring holds first).
            s->ring_on = false;
            stats_.dc_rdma_exits++;
            if (rings_.count(src)) {
                if (udp_)
                    udp_->detach_landing(src);
                landing_epoch_++; // the tcp transport may read into it now (a promotion)
                if (!ring_still_needed(src))
                    retire_ring(src);
            }
        }
        return;
    }
    stats_.rc_asks_refused++;
    if (!s || s->asked_period != number)
        return; // no longer waiting for this one
    if (s->asked == Arrival::Tcp && s->seen != Arrival::Tcp)
        connected_slots_.give(ConnectedDir::In);
    s->asked = s->seen;
    s->asked_period = 0;
    s->ring_asked = false;
    if (rings_.count(src) && !ring_still_needed(src))
        retire_ring(src); // its ring too (returned when this progress call ends)
}

void NetRouter::add_stats(llc_stats_t &st) const
{
    if (tcp_)
        tcp_->add_stats(st);
    if (udp_)
        udp_->add_stats(st);
    st.rc_sources = connected_slots_.held(ConnectedDir::In);
    st.rc_slots_cap = connected_slots_.cap();
    st.rc_out_slots_in_use = connected_slots_.in_use(ConnectedDir::Out);
    st.rc_in_slots_in_use = connected_slots_.in_use(ConnectedDir::In);
    st.rc_out_slots_high_water = connected_slots_.high_water(ConnectedDir::Out);
    st.rc_in_slots_high_water = connected_slots_.high_water(ConnectedDir::In);
    st.hybrid_routes = routes_.size();
    st.hybrid_sources = sources_.size();
    st.hybrid_evictions = routes_.evictions() + sources_.evictions();
    st.hybrid_cap_overflows = routes_.overflows() + sources_.overflows();
    st.ring_pool_rings = ring_pool_.rings();
    st.ring_pool_in_use = ring_pool_.in_use();
    st.ring_pool_high_water = ring_pool_.high_water();
    st.ring_pool_held = rings_.size();
    st.ring_leases = ring_pool_.leases();
    st.dc_rdma_sources = 0;
    sources_.for_each([&](int, const Source &s) { st.dc_rdma_sources += s.ring_on ? 1 : 0; });
}

int NetRouter::least_busy_tcp_route() const
{
    int victim = -1;
    uint64_t least = 0;
    routes_.for_each([&](int dest, const Route &v) {
        uint64_t score = v.score + v.period_msgs;
        if (v.switching == Switching::None && v.path == Path::Tcp && (victim < 0 || score < least)) {
            victim = dest;
            least = score;
        }
    });
    return victim;
}

void NetRouter::on_switch_ack(int src)
{
    Route *route = routes_.peek(src);
    if (!route || route->switching != Switching::ToUdp)
        throw Error(LLC_ERR_PEER, "protocol error: unexpected transport switch acknowledgement from rank " +
                                      std::to_string(src));
    Route &r = *route;
    r.path = Path::Udp;
    r.switching = Switching::None;
    switching_count_--;
    stats_.rc_demotions++;
    release_held(src, r);
}

bool NetRouter::udp_state_droppable(int dest) const
{
    const Route *r = static_cast<const PeerTable<Route> &>(routes_).peek(dest);
    return !r || (r->path == Path::Udp && r->switching == Switching::None && !r->held);
}

// ------------------------------------------------------------ the hybrid cap
//
// routes_ and sources_ are PeerTables of capacity LLC_MAX_CONTEXTS, under
// the policy of every capped table (PeerCap, support/peer_cap.hpp).  Making
// room for a new peer evicts an entry the table's predictor picks (the
// entry predicted to be used again furthest in the future: PeerTable's
// approximation of Belady's MIN over its logical clock of lookups, LRU
// without reuse history) among the entries that may go:
//   * a route settled on udp (not switching, no held sends: it holds no
//     connected slot and no message), quiet for LLC_UDP_EVICT_IDLE_MS (in whole
//     policy periods; 0: at once) and not busy (score + this period's sends
//     below LLC_HYBRID_PROMOTE_MSGS / 4, the sender driver's demotion
//     level);
//   * a source last seen on udp with no request pending (it holds no
//     connected slot), quiet for LLC_UDP_EVICT_IDLE_MS and not busy (its
//     saving on tcp below the policy's demotion level, SwitchPolicy::busy).
// A dropped entry is what a new one is: path udp, empty history.  Entries on
// tcp, switching, holding sends, pending or busy are never dropped: when
// none may go, the table grows past the cap (hybrid_cap_overflows) and is
// trimmed back every period once entries may go again.

bool NetRouter::route_droppable(const Route &r) const
{
    return r.path == Path::Udp && r.switching == Switching::None && !r.held &&
           r.score + r.period_msgs < route_busy_msgs_ && uint32_t(hybrid_ticks_ - r.last_tick) >= hybrid_idle_ticks_;
}

bool NetRouter::source_droppable(const Source &s) const
{
    if (s.seen != Arrival::Udp || s.asked_period != 0 || s.ring_on)
        return false;
    if (uint32_t(hybrid_ticks_ - s.last_tick) < hybrid_idle_ticks_)
        return false;
    return !switch_policy_ ||
           !switch_policy_->busy(SourceLoad{-1, s.history.load_now(), s.history.mean_bytes_now(), false});
}

NetRouter::Route &NetRouter::route_for(int dest)
{
    return routes_.get_or_create(
        dest,
        [this](int) {
            Route r;
            r.last_tick = hybrid_ticks_;
            return r;
        },
        [this](int, const Route &v) { return route_droppable(v); });
}

void NetRouter::trim_hybrid_tables()
{
    if (routes_.size() > routes_.capacity())
        routes_.trim([this](int, const Route &v) { return route_droppable(v); });
    if (sources_.size() > sources_.capacity())
        sources_.trim([this](int, const Source &v) { return source_droppable(v); });
}

void NetRouter::hybrid_tick(uint64_t now)
{
    if (!hybrid_ || policy_frozen_ || now < next_tick_us_)
        return;
    next_tick_us_ = now + config_.hybrid_period_ms * 1000;
    hybrid_ticks_++;
    age_routes();
    if (switch_policy_)
        receiver_tick();
    else
        sender_tick();
    trim_hybrid_tables();
}

// Ends the send-count period of every route; forgets quiet udp ones.
// Returns the routes on (or moving to) tcp.
size_t NetRouter::age_routes()
{
    size_t active = 0;
    routes_.erase_if([&](int, Route &r) {
        r.score = r.score / 2 + r.period_msgs;
        r.period_msgs = 0;
        bool on_tcp = r.switching == Switching::ToTcp || (r.switching == Switching::None && r.path == Path::Tcp);
        if (!on_tcp && r.switching == Switching::None && r.score == 0 && !r.held)
            return true; // quiet udp peer: forget its history (state stays O(busy peers))
        if (on_tcp)
            active++;
        return false;
    });
    return active;
}

// LLC_HYBRID_DRIVER=sender: promote busy destinations, demote quiet ones.
void NetRouter::sender_tick()
{
    // Quiet tcp destinations go back to udp; the connection stays open for reuse.
    routes_.for_each([&](int dest, Route &r) {
        if (r.switching == Switching::None && r.path == Path::Tcp && promotion_.quiet(r.score))
            demote(dest, r);
    });
    std::vector<std::pair<uint64_t, int>> candidates;
    routes_.for_each([&](int dest, const Route &r) {
        if (r.switching == Switching::None && r.path == Path::Udp && promotion_.busy(r.score))
            candidates.push_back({r.score, dest});
    });
    std::sort(candidates.begin(), candidates.end(), [](const auto &a, const auto &b) { return a.first > b.first; });
    for (const auto &c : candidates) {
        Route &r = *routes_.peek(c.second);
        if (connected_slots_.try_take(ConnectedDir::Out)) {
            promote(c.second, r);
            continue;
        }
        // Full: evict the least busy tcp destination if this one is clearly busier.
        Route *victim = nullptr;
        int victim_rank = -1;
        routes_.for_each([&](int dest, Route &v) {
            if (v.switching == Switching::None && v.path == Path::Tcp && (!victim || v.score < victim->score)) {
                victim = &v;
                victim_rank = dest;
            }
        });
        if (!victim || !BusyPromotion::displaces(c.first, victim->score, BusyPromotion::AtTwice::Stays)) {
            stats_.rc_slots_full++;
            break;
        }
        demote(victim_rank, *victim); // gives its slot back
        if (!connected_slots_.try_take(ConnectedDir::Out)) {   // another process of the node took it meanwhile
            stats_.rc_slots_full++;
            break;
        }
        promote(c.second, r);
    }
}

// ------------------------------------------------------------------ receiver-driven
//
// The receiver counts messages per source per period (ReceiveHistory), and
// every period asks the SwitchPolicy which sources should move between the
// connected class (tcp) and the connectionless class (udp), within the
// connected slots it holds plus those its node has free (connected_slots_).
// It asks each such source on the switching channel (switch_asks.hpp: a
// datagram outside the numbered stream, resent until answered); the source
// runs the switching protocol above, or refuses, and answers either way.
// The receiver waits for nothing: it learns where a source sends from the
// path its messages (or its Switch marker) arrive on; a refusal gives the
// slot back at once (on_switch_answer); an ask that is never answered
// expires after kRequestPatience periods.

void NetRouter::count_arrival(int src, Arrival path, uint64_t bytes)
{
    Source &s = sources_.get_or_create(src, [this](int) { return Source(history_periods_); },
                                       [this](int, const Source &v) { return source_droppable(v); });
    s.history.record(bytes);
    s.seen = path;
    s.last_tick = hybrid_ticks_;
    if (path == Arrival::Tcp && s.ring_on) {
        // It moved to tcp (the answer to our ask was lost): it stopped ring
        // addressing when it accepted, and its udp stream is drained.  The
        // ring now serves its tcp stream (udp has nothing in it).
        s.ring_on = false;
        stats_.dc_rdma_exits++;
        if (udp_)
            udp_->detach_landing(src);
        landing_epoch_++;
    }
}

void NetRouter::receiver_tick()
{
    period_++;
    std::vector<SourceLoad> loads;
    loads.reserve(sources_.size());
    sources_.erase_if([&](int src, Source &s) {
        s.history.close_period();
        // Granted (a ring ask: by its answer), or refused (silently) / overtaken.
        const bool granted = s.ring_asked ? s.ring_on : s.asked == s.seen;
        if (s.asked_period != 0 && (granted || period_ - s.asked_period > kRequestPatience)) {
            s.asked_period = 0;
            s.ring_asked = false; // an unanswered ring ask: its ring goes back below
        }
        if ((s.ring_on || s.ring_asked) && udp_->failed(src)) {
            s.ring_on = s.ring_asked = false; // nothing more will come: its ring goes back below
            s.asked_period = 0;
        }
        bool pending = s.asked_period != 0;
        // Forget a quiet source, unless it is on tcp and was never asked to
        // leave it, or is ring-addressed (asked back to plain udp first).
        // A source on udp whose ring is about to go back (its ask expired) is
        // kept until the ring loop below has returned it.
        if (s.history.quiet() && !pending && !s.ring_on && (s.seen == Arrival::Udp || s.asked == Arrival::Udp) &&
            !(s.seen == Arrival::Udp && rings_.count(src)))
            return true;
        Arrival where = pending ? s.asked : s.seen;
        loads.push_back(SourceLoad{src, s.history.predicted_load(), s.history.mean_bytes(), where == Arrival::Tcp,
                                   s.ring_on || (pending && s.ring_asked)});
        return false;
    });
    // Rings of sources that will send nothing more on tcp: the request was
    // refused (expired while the source stayed on udp), or its marker came.
    for (auto it = rings_.begin(); it != rings_.end();) {
        if (ring_still_needed(it->first)) {
            ++it;
            continue;
        }
        if (udp_)
            udp_->detach_landing(it->first); // what its slots still hold is copied out first
        it = rings_.erase(it); // returns the ring (no transport is reading: between progress steps)
        landing_epoch_++;
    }
    // One node slot per source on tcp or asked to move there: give back
    // those of sources that left (or refused), count any found on tcp unasked.
    size_t on_connected =
        size_t(std::count_if(loads.begin(), loads.end(), [](const SourceLoad &l) { return l.on_connected; }));
    while (connected_slots_.held(ConnectedDir::In) > on_connected)
        connected_slots_.give(ConnectedDir::In);
    while (connected_slots_.held(ConnectedDir::In) < on_connected)
        connected_slots_.take_anyway(ConnectedDir::In);
    // This receiver may use its own slots and any the node has free; with
    // the ring pool, each new tcp source also needs a free ring, so the pool
    // is part of the cap: when rings are the limit, a much busier source
    // can still displace a quieter one (decide() evicts within the cap),
    // and the promotions held back for lack of a ring are counted.
    // Slots counted anyway (sources found on tcp beyond the cap, e.g. after
    // an eviction whose victim had not left yet) are not part of the cap:
    // decide() must see the node over it and send the least busy back.
    size_t cap = connected_slots_.may_hold(ConnectedDir::In);
    std::vector<SwitchDecision> connected_moves = switch_policy_->decide(loads, cap);
    if (ring_pool_.rings() > 0) {
        // Sources ring-addressed now (ring landing) take their ring with them to tcp.
        size_t free_rings = ring_pool_.rings() - std::min(ring_pool_.rings(), ring_pool_.in_use());
        size_t own_rings = size_t(std::count_if(loads.begin(), loads.end(),
                                                [](const SourceLoad &l) { return l.on_ring_landing && !l.on_connected; }));
        size_t ring_cap = connected_slots_.held(ConnectedDir::In) + free_rings + own_rings;
        if (ring_cap < cap) {
            auto promotions = [](const std::vector<SwitchDecision> &ds) {
                return size_t(std::count_if(ds.begin(), ds.end(),
                                            [](const SwitchDecision &d) { return channel_is_connected(d.want); }));
            };
            size_t by_slots = promotions(connected_moves);
            connected_moves = switch_policy_->decide(loads, ring_cap);
            stats_.ring_pool_empty += by_slots - std::min(by_slots, promotions(connected_moves));
        }
    }
    for (const SwitchDecision &d : connected_moves) {
        Arrival want = channel_is_connected(d.want) ? Arrival::Tcp : Arrival::Udp;
        Source &s = *sources_.peek(d.source); // decide() lists only sources in loads
        if (s.asked_period != 0 && s.asked == want)
            continue;
        if (want == Arrival::Tcp) {
            if (!connected_slots_.try_take(ConnectedDir::In)) { // another process of the node took the last one
                stats_.rc_slots_full++;
                continue;
            }
            // With the pool: a ring for its stream to land in, or no request.
            // A source still holding one (asked back before its marker came) keeps it.
            if (ring_pool_.rings() > 0 && !rings_.count(d.source)) {
                RingLease ring = ring_pool_.try_lease();
                if (!ring) {
                    stats_.ring_pool_empty++;
                    connected_slots_.give(ConnectedDir::In);
                    continue;
                }
                rings_.emplace(d.source, std::move(ring));
                landing_epoch_++;
            }
        }
        try {
            udp_->ask_switch(d.source, want == Arrival::Tcp ? SwitchWant::Tcp : SwitchWant::Udp, period_);
        } catch (const Error &) {
            if (want == Arrival::Tcp) {
                connected_slots_.give(ConnectedDir::In);
                return_ring_now(d.source); // the source failed: nothing will land
            }
            continue; // the source failed (reported by the transport): nothing to ask
        }
        if (want == Arrival::Udp)
            connected_slots_.give(ConnectedDir::In); // asked to leave tcp: no longer counted as on_connected next period
        s.asked = want;
        s.asked_period = period_;
        s.ring_asked = false; // a ring-addressed source asked to tcp stops ring addressing when it accepts
        stats_.rc_requests_sent++;
    }
    ring_landing_tick(loads, connected_moves);
}

// ------------------------------------------------------------------ ring landing
//
// Ring landing is the paper's DC RDMA: ring-addressed udp datagrams landing
// in a ring leased for their source.  Among the sources that stay on the
// connectionless class (udp), the policy picks it for steady ones with large
// messages (SwitchPolicy::connectionless_moves).  Such a source
// gets a ring from the node's pool (none free: not asked, ring_pool_empty)
// and is asked on the switching channel to address its udp datagrams to the
// ring's slots (SwitchWant::UdpRing, with the ring's geometry); one that no
// longer qualifies is asked back to plain udp (SwitchWant::Udp) and its ring
// goes back once it accepted.  A refusal, an ask given up or expired, or a
// failed source returns the ring (the ring loop of receiver_tick).  The
// udp transport lands each ring-addressed datagram by its own flag, so
// nothing depends on when the answer arrives (udp_ring_landing.hpp).

void NetRouter::ring_landing_tick(const std::vector<SourceLoad> &loads,
                                  const std::vector<SwitchDecision> &connected_moves)
{
    if (!config_.hybrid_dc_rdma || ring_pool_.rings() == 0)
        return;
    for (const SwitchDecision &d : switch_policy_->connectionless_moves(loads, connected_moves)) {
        Source &s = *sources_.peek(d.source); // connectionless_moves() lists only sources in loads
        if (s.asked_period != 0)
            continue; // one request at a time
        if (d.want == Channel::RingLanding) {
            ask_ring(d.source, s);
            continue;
        }
        try {
            udp_->ask_switch(d.source, SwitchWant::Udp, period_);
        } catch (const Error &) {
            continue; // failed: its ring goes back at the next period
        }
        s.asked = Arrival::Udp;
        s.asked_period = period_;
        s.ring_asked = false;
    }
    // A source found ring-addressed without a ring (its answer came after
    // the ask had expired and its ring had gone back): a ring for it, or it
    // is asked back to plain udp.
    for (const SourceLoad &l : loads) {
        Source &s = *sources_.peek(l.source);
        if (!s.ring_on || l.on_connected || s.asked_period != 0 || rings_.count(l.source))
            continue;
        RingLease ring = ring_pool_.try_lease();
        if (ring) {
            rings_.emplace(l.source, std::move(ring));
            landing_epoch_++;
            continue;
        }
        stats_.ring_pool_empty++;
        try {
            udp_->ask_switch(l.source, SwitchWant::Udp, period_);
            s.asked = Arrival::Udp;
            s.asked_period = period_;
        } catch (const Error &) {
        }
    }
}

void NetRouter::ask_ring(int src, Source &s)
{
    if (std::find(rings_retiring_.begin(), rings_retiring_.end(), src) != rings_retiring_.end())
        return; // its tcp stream's ring is on its way back: next period
    if (!rings_.count(src)) {
        RingLease ring = ring_pool_.try_lease();
        if (!ring) {
            stats_.ring_pool_empty++; // no ring, no ask
            return;
        }
        rings_.emplace(src, std::move(ring));
        landing_epoch_++;
    }
    RingAddressing geometry{uint32_t(config_.ring_slots), uint32_t(config_.ring_slot_bytes)};
    try {
        udp_->ask_switch(src, SwitchWant::UdpRing, period_, geometry.pack());
    } catch (const Error &) {
        return_ring_now(src); // the source failed
        return;
    }
    s.asked = Arrival::Udp;
    s.asked_period = period_;
    s.ring_asked = true;
    stats_.dc_rdma_requests_sent++;
}

void NetRouter::return_ring_now(int src)
{
    if (!rings_.count(src))
        return;
    if (udp_)
        udp_->detach_landing(src);
    rings_.erase(src);
    landing_epoch_++;
}

// A ring is needed while its source may still send on tcp: it was last seen
// there, or a request to move there is pending.  A source forgotten by the
// table (quiet, asked to leave tcp) keeps its ring until its marker comes or
// its connection fails.
bool NetRouter::ring_still_needed(int src) const
{
    const Source *s = static_cast<const PeerTable<Source> &>(sources_).peek(src);
    if (!s)
        return true;
    return s->seen == Arrival::Tcp || (s->asked_period != 0 && s->asked == Arrival::Tcp) || s->ring_on ||
           (s->asked_period != 0 && s->ring_asked);
}

bool NetRouter::ring_for_udp(int src) const
{
    const Source *s = static_cast<const PeerTable<Source> &>(sources_).peek(src);
    return s && (s->ring_on || (s->asked_period != 0 && s->ring_asked));
}

void NetRouter::retire_ring(int src)
{
    if (std::find(rings_retiring_.begin(), rings_retiring_.end(), src) == rings_retiring_.end())
        rings_retiring_.push_back(src);
    landing_epoch_++; // the transport stops reading into it at its next read
}

void NetRouter::return_retired_rings()
{
    for (int src : rings_retiring_) {
        if (udp_ && rings_.count(src))
            udp_->detach_landing(src);
        rings_.erase(src); // ~RingLease: pages and index back to the pool
    }
    rings_retiring_.clear();
}

char *NetRouter::landing_for(int src, size_t &bytes)
{
    auto it = rings_.find(src);
    if (it == rings_.end() || ring_for_udp(src) ||
        std::find(rings_retiring_.begin(), rings_retiring_.end(), src) != rings_retiring_.end()) {
        bytes = 0;
        return nullptr;
    }
    bytes = it->second.size();
    return it->second.data();
}

char *NetRouter::udp_landing_for(int src, size_t &bytes)
{
    auto it = rings_.find(src);
    if (it == rings_.end() || !ring_for_udp(src) ||
        std::find(rings_retiring_.begin(), rings_retiring_.end(), src) != rings_retiring_.end()) {
        bytes = 0;
        return nullptr;
    }
    bytes = it->second.size();
    return it->second.data();
}

void NetRouter::on_tcp_source_failed(int src)
{
    // (A ring-addressed source's old connection may break: its ring serves udp.)
    if (rings_.count(src) && !ring_for_udp(src))
        retire_ring(src);
}

} // namespace llc
