// net_router_account.cpp - what the router holds, for the memory accounting
// (mem/mem_accounting.hpp): its transports' figures, then its own.
#include "hybrid/net_router.hpp"

#include "mem/mem_accounting.hpp"
#include "transport/tcp/tcp_transport.hpp"
#include "transport/udp/udp_transport.hpp"

namespace llc {

void NetRouter::account(MemRegistry &r) const
{
    using M = MemComponent;
    if (tcp_)
        tcp_->account(r);
    if (udp_)
        udp_->account(r);
    r.add(M::Context, sizeof(NetRouter));
    // The capped tables (LLC_MAX_CONTEXTS): bucket heads and predictor ghosts
    // sized by the cap, slots made on demand (at most the cap, more only after
    // an overflow).  Only where they are used: hybrid with remote peers; the
    // sources with the receiver driver.
    if (hybrid_)
        r.add(M::HybridRoutes, routes_.memory_bytes() - sizeof(routes_), routes_.size());
    // receiver-driven: per recently heard source, its receive history; the policy object
    if (hybrid_ && switch_policy_) {
        r.add(M::HybridRoutes, sources_.memory_bytes() - sizeof(sources_), sources_.size());
        sources_.for_each([&](int, const Source &s) { r.add(M::ReceiveHistory, s.history.heap_bytes(), 1); });
    }
    if (switch_policy_)
        r.add(M::HybridRoutes, sizeof(*switch_policy_));
    // The node's connected (tcp) slot count (ConnectedSlots): one page per node, counted by the leader that
    // created it (the others' mappings of it are not in their totals).
    if (connected_slots_.created_here())
        r.add(M::HybridRoutes, connected_slots_.mapped_bytes(), 1);
    r.add(M::Context, heap_bytes(connected_slots_.name()));
    if (connected_slots_.cap() > 0)
        r.add_note(connected_slots_.describe());
    // The ring pool: the rings held here (their pages are this process's
    // doing while it holds them) and the header, counted by its creator.
    if (ring_pool_.rings() > 0) {
        r.add(M::RingPool, uint64_t(rings_.size()) * ring_pool_.ring_bytes(), rings_.size());
        if (ring_pool_.created_here() || !ring_pool_.shared())
            r.add(M::RingPool, ring_pool_.header_bytes());
        r.add(M::Context, heap_bytes(ring_pool_.name()) + heap_bytes(rings_) + heap_bytes(rings_retiring_));
        r.add_note(ring_pool_.describe());
    }
    routes_.for_each([&](int, const Route &route) {
        if (const auto *held = route.held.get()) {
            r.add(M::HybridRoutes, sizeof(*held) + heap_bytes(*held));
            account_queue(r, *held);
        }
    });
}

void NetRouter::struct_sizes(StructSizes &s)
{
    s.net_router = sizeof(NetRouter);
    s.hybrid_route = PeerTable<Route>::slot_bytes();
    s.hybrid_source = PeerTable<Source>::slot_bytes();
    s.hybrid_table_per_cap = sizeof(int32_t) + PeerTable<Route>::ghost_bytes();
}

} // namespace llc
