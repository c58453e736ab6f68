// mem_model.cpp - see mem_model.hpp.  Equation numbers are those of Yamaguchi et al.
// (doc/references.md).
#include "mem_model.hpp"

#include "mem/mem_accounting.hpp"
#include "hybrid/receive_history.hpp"
#include "hybrid/ring_pool.hpp"

#include <algorithm>
#include <cmath>

namespace llc {

std::vector<ModelTerm> paper_baseline(double nodes, const ModelParams &p)
{
    const double m = p.m, c = p.c, n = m * nodes;
    std::vector<ModelTerm> t;
    // (1) communicator tables: VC pointer tables, intranode/internode tables, LLC comm tables
    t.push_back({"communicator tables",
                 ((16 * c + 32) * m + (8 * c + 16) / m) * n + (8 * c + 16) * m * m + (848 * c + 2256) * m + 408 * c + 816,
                 (16 * c + 32) * m + (8 * c + 16) / m});
    // (2) high-level contexts: n VCs, their header buffers, n BoCs, rank -> BoC table
    t.push_back({"high-level contexts (VC/BoC)", (480 * n + 16 + 64 * (n - 1) + 396 * n + 8 * n + 16) * m, 948 * m});
    // (3) low-level contexts: n-m RC QPs and the rank -> QP table
    t.push_back({"low-level contexts (QPs)", (672 + 31152 * (n - m) + 8 * n + 16) * m, 31160 * m});
    // (4, errata) communication buffers: a 16 x 4 KB ring per remote process, registration cache
    t.push_back({"communication buffers",
                 (1360 * (n - m) + 16 + 4096.0 * 16 * (n - m) + 16078021 + 327680) * m, 66896 * m});
    t.push_back({"transport/buffer switching", 0, 0});
    // (5) shared-memory comm: rank/local-index tables, queue and free-list pointer tables, sequence numbers
    t.push_back({"shared-memory comm", 30 * m * n + 65716 * m * m + 4129094 * m + 2256, 30 * m});
    // (6) process manager: the KVS with fixed-size pairs
    t.push_back({"process manager (KVS)",
                 179384 + 1096 * (14 * n + 2 * n / m) + 32272 + (64 + 8) * (14 * n + 2 * n / m),
                 1168 * (14 + 2 / m)});
    // (7, errata) other
    t.push_back({"other", 65540 * m * m + 13067907 * m, 0});
    return t;
}

std::vector<ModelTerm> paper_designed(double nodes, const ModelParams &p)
{
    const double m = p.m, c = p.c, g = p.gamma, n = m * nodes;
    std::vector<ModelTerm> t;
    // (8) hashed, node-shared rank translation; gamma lists for the context pointers
    t.push_back({"communicator tables",
                 (4 * c + 8) * n + ((40 * g + 856) * c + 104 * g + 2208) * m + (448 + 20 * g) * c + 40 * g + 960,
                 4 * c + 8});
    // (9) at most gamma high-level contexts; the rank -> context table stays (8n)
    t.push_back({"high-level contexts (VC/BoC)", 480 * g + 16 + 64 * (g - 1) + (380 + 16) * g + 8 * n + 16, 8});
    // (10) 4 DC QPs, <= 128 RC QPs, gamma address lists, switching-QP address table (24n)
    t.push_back({"low-level contexts (QPs)", 24 * n + 168 * g + 5092928, 24});
    // (11, errata) shared DC receive buffers, a pool of 1024 rings, registration cache
    t.push_back({"communication buffers",
                 16785408 + 1360 * 1024 + 16 + 65536.0 * 1024 + (16078021 + 327680) * m, 0});
    // (12), (13) receive-count history (capped at 64 MB per process) and the selection tables
    const double history = n <= 8192 ? 8 * 1024 * m * n : 67108864 * m;
    t.push_back({"transport/buffer switching",
                 history + ((8 * 1024 + (4 + 4 + 8) * 1024 + 16) * (3 + 13) + 8 * n + 16 + 165008 + 524304) * m,
                 (n <= 8192 ? 8 * 1024 * m : 0) + 8 * m});
    // (14) m-entry local tables, hashed rank -> local index
    t.push_back({"shared-memory comm", 6 * m * n + 65756 * m * m + 4129094 * m + 2256, 6 * m});
    // (15) KVS pairs spread over the nodes by key hash, allocated by real size
    t.push_back({"process manager (KVS)", 179384 + (64 + 8) * (13 * m + 2) + 32272, 0});
    // (7, errata) other, unchanged
    t.push_back({"other", 65540 * m * m + 13067907 * m, 0});
    return t;
}

namespace {
// rank -> node: one node-shared table per node (NodeMap; a private copy when
// the node has a single process, which is the same bytes per node).
ModelTerm rank_table_term(double n, double m, const MemWalk::StructSizes &s)
{
    return {"rank_table", double(s.node_entry) * n + (m > 1 ? double(s.node_map_header) : 0),
            double(s.node_entry)};
}
} // namespace

std::vector<ModelTerm> llc_model(double nodes, const ModelParams &p, bool capped)
{
    const MemWalk::StructSizes s = MemWalk::struct_sizes();
    const double m = p.m, n = m * nodes;
    const double remote = std::max(0.0, n - m);
    const double k = capped ? std::min(remote, p.gamma) : remote; // connected tcp peers per process
    const double local_peers = std::max(0.0, m - 1);
    const double ptr = double(s.pointer);
    constexpr double kTcpStaging = 64 * 1024; // kStagingBytes in tcp_rx.cpp (first read)

    std::vector<ModelTerm> t;
    auto add = [&](const char *name, double per_process_fixed, double per_process_n_coeff, double per_peer, double peers) {
        t.push_back({name, m * (per_process_fixed + per_process_n_coeff * n + per_peer * peers), m * per_process_n_coeff});
    };
    add("context", double(s.context - s.handler_table + s.self_transport + s.tcp_transport + s.net_router + s.shm_transport), 0, 0, 0);
    add("handler_table", double(s.handler_table), 0, 0, 0);
    t.push_back(rank_table_term(n, m, s));
    // Sequence numbers: two lazily committed n-entry arrays (LazyZeroArray).
    // With every peer used all pages are resident; capped, at most one page
    // per peer used (gamma remote + the local ones; worst case: all in
    // different pages).
    {
        const double page = 4096;
        const double full = std::ceil(n * double(s.seq_entry) / page) * page;
        const double touched = (k + m) * page;
        const bool all_pages = !capped || full <= touched;
        t.push_back({"seq_numbers", m * 2.0 * (all_pages ? full : touched),
                     all_pages ? m * 2.0 * double(s.seq_entry) : 0});
    }
    // rank -> connection: a hash map with an entry per destination sent to
    // (hash node + one bucket, libstdc++ keeps buckets >= elements) and the
    // connection list.  Capped: at most gamma connected destinations (idle
    // connections beyond LLC_MAX_CONTEXTS are evicted with a Close record).
    add("tcp_rank_table", 0, 0, double(s.tcp_out_entry) + 2 * ptr, k);
    add("tcp_conn_state", 0, 0,
        double(s.tcp_out_conn + s.empty_deque_heap + s.tcp_in_conn + s.stream_decoder), k);
    add("tcp_buffers", nodes > 1 ? kTcpStaging + double(s.pollfd) : 0, 0, ptr + 2.0 * double(s.pollfd), k);
    add("shm_segment", m > 1 ? double(s.segment_header) + m * (double(s.ring_control) + p.ring_bytes) : 0, 0, 0, 0);
    add("shm_peer_state", 0, 0, double(s.shm_peer + 2 * s.empty_deque_heap + s.stream_decoder), local_peers);
    // the node's ranks (m ints, binary-searched) and the local peer list
    add("shm_rank_table", m > 1 ? 4 * m : 0, 0, ptr, local_peers);
    // Uncapped, the per-peer terms grow with n too (k = n - m).
    if (!capped && nodes > 1) {
        for (ModelTerm &term : t) {
            if (term.component == "tcp_conn_state")
                term.n_coeff = m * double(s.tcp_out_conn + s.empty_deque_heap + s.tcp_in_conn + s.stream_decoder);
            else if (term.component == "tcp_buffers")
                term.n_coeff = m * (ptr + 2.0 * double(s.pollfd));
            else if (term.component == "tcp_rank_table")
                term.n_coeff = m * (double(s.tcp_out_entry) + 2 * ptr);
        }
    }
    return t;
}

std::vector<ModelTerm> llc_udp_model(double nodes, const ModelParams &p)
{
    const MemWalk::StructSizes s = MemWalk::struct_sizes();
    const double m = p.m, n = m * nodes;
    const double remote = std::max(0.0, n - m);
    const double active = std::min(remote, p.gamma); // peers with traffic in the last second
    const double local_peers = std::max(0.0, m - 1);
    const double ptr = double(s.pointer);
    const double page = 4096;
    // A peer with traffic in the last second also has these (freed after 1 s idle).
    const double busy_extra = double(s.udp_tx + s.stream_decoder);
    const bool inter = nodes > 1;

    std::vector<ModelTerm> t;
    auto add = [&](const char *name, double per_process, double n_coeff_per_process) {
        t.push_back({name, m * per_process, m * n_coeff_per_process});
    };
    add("context", double(s.context - s.handler_table + s.self_transport + (inter ? s.udp_transport + s.net_router : 0) +
                          s.shm_transport),
        0);
    add("handler_table", double(s.handler_table), 0);
    t.push_back(rank_table_term(n, m, s));
    // Every peer used: all pages of both sequence-number arrays are resident.
    add("seq_numbers", 2.0 * std::ceil(n * double(s.seq_entry) / page) * page, 2.0 * double(s.seq_entry));
    // The capped peer table (LLC_MAX_CONTEXTS = gamma slots, allocated up
    // front) and at most gamma live Peers: idle ones are evicted to make room.
    const double live = std::min(remote, p.gamma);
    add("udp_peer_table", inter ? double(s.udp_peer_entry) * p.gamma : 0, 0);
    add("udp_peer_state", double(s.udp_peer) * live + busy_extra * active,
        inter && remote < p.gamma ? double(s.udp_peer) + busy_extra : 0);
    add("udp_buffers",
        inter ? double(s.udp_rx_buffer) + double(s.udp_free_buffers) * (double(s.udp_header) + p.udp_mtu + ptr) : 0, 0);
    add("shm_segment", m > 1 ? double(s.segment_header) + m * (double(s.ring_control) + p.ring_bytes) : 0, 0);
    add("shm_peer_state", double(s.shm_peer + 2 * s.empty_deque_heap + s.stream_decoder) * local_peers, 0);
    add("shm_rank_table", m > 1 ? 4 * m + ptr * local_peers : 0, 0);
    return t;
}

std::vector<ModelTerm> llc_hybrid_model(double nodes, const ModelParams &p)
{
    const MemWalk::StructSizes s = MemWalk::struct_sizes();
    const double m = p.m, n = m * nodes;
    const double remote = std::max(0.0, n - m);
    const double tracked = std::min(remote, p.gamma); // routes and sources per process, at most gamma
    const double ptr = double(s.pointer);
    const double page = 4096;
    constexpr double kTcpStaging = 64 * 1024; // kStagingBytes in tcp_rx.cpp
    const bool inter = nodes > 1;

    std::vector<ModelTerm> t = llc_udp_model(nodes, p);
    if (!inter)
        return t;
    auto add = [&](const char *name, double per_node) { t.push_back({name, per_node, 0}); };
    // Two PeerTables of gamma (routes_, sources_) and their live entries; the node's connected slot page.
    add("hybrid_routes",
        m * (2 * p.gamma * double(s.hybrid_table_per_cap) + tracked * double(s.hybrid_route + s.hybrid_source)) + page);
    add("receive_history", m * tracked * double(history_periods(uint64_t(n))) * 8);
    // Connected class (tcp; the paper's RC): at most max_rc_per_node connections per node in each direction
    // (never more than there are remote processes to connect to).
    const double rc = std::min(p.max_rc_per_node, m * remote);
    add("tcp_rank_table", rc * (double(s.tcp_out_entry) + 2 * ptr));
    add("tcp_conn_state", rc * double(s.tcp_out_conn + s.empty_deque_heap) + rc * double(s.tcp_in_conn + s.stream_decoder));
    add("tcp_buffers", m * (kTcpStaging + double(s.pollfd)) + 2 * rc * (ptr + 2.0 * double(s.pollfd)));
    // The node's ring pool, every ring leased (pages exist only while leased and written).
    const double header = std::ceil((double(sizeof(RingPoolShared)) + p.ring_pool * 4) / page) * page;
    add("ring_pool", header + p.ring_pool * p.ring_pool_ring_bytes);
    return t;
}

double model_total(const std::vector<ModelTerm> &terms)
{
    double sum = 0;
    for (const ModelTerm &t : terms)
        sum += t.bytes;
    return sum;
}

} // namespace llc
