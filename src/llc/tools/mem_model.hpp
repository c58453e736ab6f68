// mem_model.hpp - per-node memory of the communication library as a function
// of the job size: the analytic model of Yamaguchi et al. (baseline and
// designed, errata applied; doc/references.md) and libllc's own model built from the sizeof of
// its real structures (MemWalk::struct_sizes).  Used by llc_memmodel and the
// unit tests.  Bytes are per node; n = m * nodes processes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace llc {

struct ModelParams {
    double m = 4;          // processes per node
    double c = 10;         // communicators of world size
    double gamma = 1024;   // live high-level contexts (per node in the paper, per process in libllc)
    double ring_bytes = 256 * 1024; // libllc: LLC_SHM_RING_BYTES
    double udp_mtu = 16 * 1024;     // libllc: LLC_UDP_MTU
    // libllc's hybrid (llc_hybrid_model): LLC_MAX_RC_PER_NODE, and the ring
    // pool's LLC_RING_POOL rings of LLC_RING_SLOTS x LLC_RING_SLOT_BYTES.
    double max_rc_per_node = 128;
    double ring_pool = 1024;
    double ring_pool_ring_bytes = 16 * 4096;
};

struct ModelTerm {
    std::string component;
    double bytes = 0;      // per node
    double n_coeff = 0;    // bytes per node per process of the job (the n-proportional term)
};

// Paper, equations (1)-(7) with the errata: baseline implementation.
std::vector<ModelTerm> paper_baseline(double nodes, const ModelParams &p);
// Paper, equations (8)-(11), (13)-(15) and (7) with the errata: the design.
std::vector<ModelTerm> paper_designed(double nodes, const ModelParams &p);

// libllc as built: every remote peer connected over tcp (all-pairs traffic),
// or, with capped = true, at most gamma connected peers per process (what
// evicting idle connections would give; tcp has no close handshake for it
// yet).  The rank -> node table is node-shared (once per node), the tcp and
// shm rank tables hold entries for connected and local peers only; the
// sequence numbers are the one n-sized per-process table left.  Kernel
// socket buffers are not included.
std::vector<ModelTerm> llc_model(double nodes, const ModelParams &p, bool capped);

// libllc with LLC_NET=udp (the DC-class path): every remote peer talked to
// keeps its idle udp state (Peer, hash node, list slot, one bucket), at most
// gamma of them have had traffic in the last second and also hold a send-side
// object (Tx with its empty deques) and a stream decoder; per process one
// receive buffer and a full pool of free datagram buffers.  No n-entry
// rank -> peer table.  Datagrams in flight and kernel socket buffers are not
// included.
std::vector<ModelTerm> llc_udp_model(double nodes, const ModelParams &p);

// libllc with LLC_NET=hybrid and the receiver driver, at its bounds: the
// udp model (every peer is reachable on the DC class), plus per process the
// hybrid's capped route and source tables (gamma slots each, the bucket
// heads and predictor ghosts allocated up front), a receive history of the
// paper's length (history_periods(n) x 8 bytes) for each of gamma tracked
// sources (the worst case: every one of them heard in two periods or more;
// a source heard once keeps 64 bytes), and per node LLC_MAX_RC_PER_NODE tcp
// connections in each direction with their state, one tcp staging buffer
// per process, the connected slot page, and the ring pool with every ring leased
// and written (its header and rings x slots x slot bytes).  Kernel socket
// buffers are not included.
std::vector<ModelTerm> llc_hybrid_model(double nodes, const ModelParams &p);

double model_total(const std::vector<ModelTerm> &terms);

} // namespace llc
