// config.hpp - tunables read from the environment at llc_init (settings.def, doc/settings.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace llc {

struct Config {
    size_t shm_ring_bytes = 256 * 1024;   // LLC_SHM_RING_BYTES (rounded up to a power of two)
    bool cma_enabled = true;              // LLC_CMA
    bool fast_path = true;                // LLC_FAST_PATH
    uint32_t fast_poll_period = 16;       // LLC_FAST_POLL_PERIOD
    size_t cma_threshold = 256 * 1024;    // LLC_CMA_THRESHOLD
    bool cma_simulate_eperm = false;      // LLC_CMA_SIMULATE_EPERM (testing)
    size_t tag_split_bytes = 64 * 1024;   // LLC_TAG_SPLIT_BYTES: split copy into an offer from this size (0: off)
    size_t tag_split_rts_bytes = 64 * 1024; // LLC_TAG_SPLIT_RTS_BYTES: split copy after a request-to-send (0: off)
    uint32_t tag_split_percent = 50;        // LLC_TAG_SPLIT_PERCENT: the sender's share of a split copy
    size_t copy_max = 16 * 1024;          // LLC_COPY_MAX
    bool tag_offer = true;                // LLC_TAG_OFFER: offer receives posted first to their sender
    size_t tag_eager_bytes = 16 * 1024;   // LLC_TAG_EAGER_BYTES: larger tagged messages go by request-to-send
    uint64_t spin_count = 1000;           // LLC_SPIN_COUNT
    uint64_t idle_sleep_us = 1000;        // LLC_IDLE_SLEEP_US
    uint64_t idle_away_us = 50;           // LLC_IDLE_AWAY_US
    uint64_t sleep_us = 100;              // LLC_SLEEP_US
    enum class Oversubscribed { Auto, Off, On };
    Oversubscribed oversubscribed = Oversubscribed::Auto; // LLC_OVERSUBSCRIBED
    uint64_t oversub_spin_count = 100;                    // LLC_OVERSUB_SPIN_COUNT
    uint64_t oversub_idle_sleep_us = 300;                 // LLC_OVERSUB_IDLE_SLEEP_US
    uint64_t connect_timeout_ms = 30000;  // LLC_CONNECT_TIMEOUT_MS
    uint64_t finalize_timeout_ms = 10000; // LLC_FINALIZE_TIMEOUT_MS
    std::string tcp_addr;                 // LLC_TCP_ADDR (empty: auto-detect)
    uint64_t tcp_peer_timeout_ms = 10000; // LLC_TCP_PEER_TIMEOUT_MS
    bool tcp_bidi = true;                 // LLC_TCP_BIDI: one connection per pair carries both directions (tcp_transport.hpp)
    uint64_t tcp_auth_timeout_ms = 30000; // LLC_TCP_AUTH_TIMEOUT_MS: an accepted connection must authenticate within it
    bool mem_report = false;              // LLC_MEM_REPORT
    size_t max_contexts = 1024;           // LLC_MAX_CONTEXTS (gamma: live per-peer contexts)
    bool node_shared = true;              // LLC_NODE_SHARED: rank -> node table once per node (node_map.hpp)
    size_t reg_cache_max = 65536;         // LLC_REG_CACHE_MAX: registration cache entries (reg_cache.hpp; 0: no caching)
    uint64_t verbs_rndv_bytes = 64 * 1024; // LLC_VERBS_RNDV_BYTES: verbs rendezvous threshold (0: off)

    // Inter-node path (LLC_NET; LLC_HYBRID=1 is a synonym for LLC_NET=hybrid).
    enum class Net { Tcp, Udp, Hybrid };
    Net net = Net::Tcp;
    // LLC_NET=verbs: llc_init runs device discovery; with a usable device
    // (and a build with the data path) it creates the verbs transport, else
    // it sets `net` from LLC_VERBS_FALLBACK (net_selection.hpp).
    bool net_verbs = false;
    enum class VerbsFallback { Tcp, Udp, Hybrid, None };
    VerbsFallback verbs_fallback = VerbsFallback::Tcp; // LLC_VERBS_FALLBACK
    std::string udp_addr;                 // LLC_UDP_ADDR (empty: LLC_TCP_ADDR, else auto-detect)
    size_t udp_mtu = 16 * 1024;           // LLC_UDP_MTU: payload bytes per datagram (stream bytes)
    uint64_t udp_window = 64;             // LLC_UDP_WINDOW: unacknowledged datagrams per peer
    uint64_t udp_rto_us = 5000;           // LLC_UDP_RTO_US: minimum retransmission timeout
    uint64_t udp_probe_us = 500;          // LLC_UDP_PROBE_US: loss probe before the retransmission timeout (0: off)
    uint64_t udp_peer_timeout_ms = 10000; // LLC_UDP_PEER_TIMEOUT_MS
    uint64_t udp_evict_idle_ms = 3200;    // LLC_UDP_EVICT_IDLE_MS: a udp peer idle this long may be evicted
    uint64_t udp_idle_probe_ms = 1000;    // LLC_UDP_IDLE_PROBE_MS: probe a silent peer this often (0: off)
    bool udp_shared_recv = false;         // LLC_UDP_SHARED_RECV: one udp socket per node (udp_node_socket.hpp)
    uint64_t udp_handover_slots = 32;     // LLC_UDP_HANDOVER_SLOTS: receive buffers per process of the node (a power of two)
    size_t udp_sockbuf = 4u << 20;        // LLC_UDP_SOCKBUF: SO_SNDBUF/SO_RCVBUF request
    uint64_t udp_drop_permille = 0;       // LLC_UDP_DROP_PERMILLE (testing)
    uint64_t udp_reorder_permille = 0;    // LLC_UDP_REORDER (testing)
    bool udp_drop_switch_only = false;    // LLC_UDP_DROP_ONLY=switch (testing): drop only switch asks/answers
    uint64_t hybrid_period_ms = 2000;     // LLC_HYBRID_PERIOD_MS
    uint64_t hybrid_promote_msgs = 256;   // LLC_HYBRID_PROMOTE_MSGS
    uint64_t hybrid_history_periods = 0;  // LLC_HYBRID_HISTORY_PERIODS: per source (0: the paper's count, history_periods())
    uint64_t max_rc_per_node = 128;       // LLC_MAX_RC_PER_NODE
    // The node pool of ring buffers (ring_pool.hpp): rings per node (0: no
    // pool), slots per ring, bytes per slot (a power of two >= 1024).
    uint64_t ring_pool = 1024;            // LLC_RING_POOL
    uint64_t ring_slots = 16;             // LLC_RING_SLOTS
    uint64_t ring_slot_bytes = 4096;      // LLC_RING_SLOT_BYTES
    // Receiver-driven hybrid: DC RDMA as a path of its own (ring-addressed
    // udp datagrams for steady sources of large messages); false: modelled only.
    bool hybrid_dc_rdma = true;           // LLC_HYBRID_DC_RDMA
    // Who decides the hybrid's switches (LLC_HYBRID_DRIVER): each receiver
    // from its per-source receive history, asking the senders (switch asks, switch_asks.hpp),
    // or each sender from its per-destination send counts.
    enum class HybridDriver { Receiver, Sender };
    HybridDriver hybrid_driver = HybridDriver::Receiver;

    // Where endpoint addresses are published (doc/libllc-kvs.md).
    enum class Kvs { Pmi, Dist };
    Kvs kvs = Kvs::Dist;                  // LLC_KVS
    uint64_t kvs_timeout_ms = 10000;      // LLC_KVS_TIMEOUT_MS
    size_t kvs_cache = 1024;              // LLC_KVS_CACHE: cached peer entries (0: no cache); default: max_contexts

    // Throws Error(LLC_ERR_INVALID) naming the variable on a malformed value.
    static Config from_environment();
};

// Every environment variable libllc reads, in the order of settings.def (the
// single declaration of each setting: name, type, default, allowed values,
// component, help; settings_table.hpp has the typed descriptors).  llc_info
// prints it, and a unit test checks that no other file of src/llc calls getenv.
struct EnvVarInfo {
    const char *name;
    const char *default_text;
    const char *description;
};
const std::vector<EnvVarInfo> &env_vars();
// getenv() for a listed variable; throws std::logic_error for an unlisted one.
const char *env_get(const char *name);

} // namespace llc
