// config.cpp - parse the LLC_* environment variables.
#include "config.hpp"

#include "errors.hpp"
#include "llc.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace llc {

const std::vector<EnvVarInfo> &env_vars()
{
    static const std::vector<EnvVarInfo> table = {
        {"LLC_SHM_RING_BYTES", "256k", "bytes of each shared-memory receive ring (rounded up to a power of two, >= 4096)"},
        {"LLC_CMA", "1", "1: large node-local payloads are copied once with process_vm_readv; 0: always through the ring"},
        {"LLC_CMA_THRESHOLD", "64k", "smallest node-local payload sent by single copy (CMA)"},
        {"LLC_CMA_SIMULATE_EPERM", "0", "testing: make every CMA read fail with EPERM to exercise the fallback"},
        {"LLC_COPY_MAX", "16k", "payloads up to this size are copied at send time, so llc_am_send returns LLC_OK"},
        {"LLC_TAG_EAGER_BYTES", "16k", "tagged messages (MPI point-to-point) up to this size travel whole and are copied into the receive buffer (or held until a receive matches); larger ones send a request-to-send and the receiver pulls the payload into its buffer once matched (one copy with process_vm_readv on the same node, streamed after a clear-to-send elsewhere)"},
        {"LLC_SPIN_COUNT", "1000", "idle llc_progress calls that spin before the progress loop starts yielding"},
        {"LLC_IDLE_SLEEP_US", "1000", "idle time (us) after which llc_progress sleeps instead of yielding"},
        {"LLC_SLEEP_US", "100", "length (us) of one idle sleep (a poll on the sockets when tcp is in use)"},
        {"LLC_CONNECT_TIMEOUT_MS", "30000", "give up connecting to a remote peer after this many ms"},
        {"LLC_FINALIZE_TIMEOUT_MS", "10000", "llc_finalize gives up flushing and draining after this many ms"},
        {"LLC_TCP_PEER_TIMEOUT_MS", "10000", "a tcp peer that consumes nothing for this long while data to it is outstanding is dead (LLC_ERR_PEER)"},
        {"LLC_TCP_AUTH_TIMEOUT_MS", "30000", "an accepted tcp connection that has not proven within this many ms that it belongs to the job (HMAC over the job secret, doc/reliability.md) is closed and counted (auth_rejected), never an error"},
        {"LLC_TCP_ADDR", "auto", "IPv4 address to publish for tcp (auto: first UP non-loopback IPv4 interface, else 127.0.0.1)"},
        {"LLC_MEM_REPORT", "0", "1: llc_finalize prints the memory table of llc_mem_report to stderr"},
        {"LLC_MAX_CONTEXTS", "1024", "gamma: most live per-peer contexts: udp peer states (a PeerTable, hashed rank table), open outgoing tcp connections, and the hybrid's routes and receive histories (PeerTables); idle ones are evicted beyond it (tcp: closed with a Close record, reopened on the next send)"},
        {"LLC_NODE_SHARED", "1", "1: the rank -> node table (and the hybrid's RC slot count) is held once per node, in shared memory created by the node leader; 0: every process keeps a private copy (and its share of LLC_MAX_RC_PER_NODE) (also the fallback when shared memory fails; LLC_MEM_REPORT says which)"},
        {"LLC_NET", "tcp", "inter-node path: tcp (RC-class), udp (DC-class reliable datagrams), hybrid (udp, busy peers promoted to tcp) or verbs (mlx5 DC queue pairs when a usable RDMA device is found and libllc was built with mlx5dv; never run on hardware; otherwise falls back as LLC_VERBS_FALLBACK says)"},
        {"LLC_VERBS_FALLBACK", "tcp", "LLC_NET=verbs without a usable RDMA device, or when the verbs transport cannot start: use tcp, udp or hybrid instead (said on stderr), or none: llc_init fails"},
        {"LLC_VERBS_RNDV_BYTES", "64k", "LLC_NET=verbs: active messages with at least this many payload bytes go by zero-copy rendezvous (the payload registered through the registration cache, read by the receiver with RDMA READ; the send completes when it has been read) instead of being copied through the send slots; 0: never; must be the same on every process (tested over a fake device only, never run on hardware)"},
        {"LLC_HYBRID", "0", "1: same as LLC_NET=hybrid"},
        {"LLC_UDP_ADDR", "auto", "IPv4 address to publish for udp (auto: as LLC_TCP_ADDR)"},
        {"LLC_UDP_MTU", "16k", "payload bytes per udp datagram (512 .. 65000)"},
        {"LLC_UDP_WINDOW", "64", "unacknowledged datagrams per udp peer (flow control)"},
        {"LLC_UDP_RTO_US", "5000", "minimum udp retransmission timeout (us)"},
        {"LLC_UDP_PEER_TIMEOUT_MS", "10000", "a udp peer that acknowledges nothing for this long is dead (LLC_ERR_PEER)"},
        {"LLC_UDP_EVICT_IDLE_MS", "3200", "a udp peer idle this long may have its state evicted when more than LLC_MAX_CONTEXTS peers are live (bounds the life of a stray old datagram, like TCP's TIME_WAIT); hybrid routes and receive histories need this long (in whole LLC_HYBRID_PERIOD_MS periods) without traffic to be evicted"},
        {"LLC_UDP_SOCKBUF", "4m", "SO_SNDBUF/SO_RCVBUF requested for the udp socket"},
        {"LLC_UDP_SHARED_RECV", "0", "1: one udp socket per node, shared by its processes (the DC-class shared receive queue): the node leader passes it to the others at init; a datagram read by another process than its destination is handed over on a local unix socket; one udp address and one kernel receive buffer per node. 0: one socket per process"},
        {"LLC_UDP_HANDOVER_SLOTS", "32", "LLC_UDP_SHARED_RECV=1: datagram buffers per process in the node's shared receive buffers (rounded up to a power of two, 2 .. 4096); a datagram for a process whose buffers are full is dropped and resent"},
        {"LLC_UDP_DROP_PERMILLE", "0", "testing: drop this many of every 1000 outgoing udp datagrams"},
        {"LLC_UDP_DROP_ONLY", "all", "testing: which datagrams LLC_UDP_DROP_PERMILLE drops: all, or switch (the hybrid's switch asks and answers only)"},
        {"LLC_UDP_REORDER", "0", "testing: delay this many of every 1000 outgoing udp datagrams behind the next one"},
        {"LLC_HYBRID_DRIVER", "receiver", "hybrid: who decides switches: receiver (per-source receive history and cost model; asks the sender on the switching channel) or sender (per-destination send counts)"},
        {"LLC_HYBRID_PERIOD_MS", "2000", "hybrid: length of one counting period (ms): receive counts per source (receiver driver) or send counts per destination (sender driver)"},
        {"LLC_HYBRID_PROMOTE_MSGS", "256", "hybrid: small messages per period (decayed history) that make a peer worth a tcp slot; the receiver driver needs fewer for larger messages"},
        {"LLC_HYBRID_HISTORY_PERIODS", "paper", "hybrid (receiver driver): periods of receive counts kept per source (8 .. 65536; 8 bytes each); unset: the paper's count, 1024 for jobs of at most 2^13 processes, halved per doubling above (at least 8); the recent 8 feed the short-term load, the whole history the recurrence predictor"},
        {"LLC_MAX_RC_PER_NODE", "128", "hybrid: most tcp (RC-class) routes per node in each direction (destinations sent to, sources received from), a count shared by its processes (LLC_NODE_SHARED=0: split evenly among them); 0: no promotion"},
        {"LLC_RING_POOL", "1024", "hybrid (receiver driver): ring buffers in the node's pool, shared by its processes (LLC_NODE_SHARED=0: split evenly among them); a source is asked to move to tcp, or to address its udp datagrams to a ring (DC RDMA), only with a ring leased for it (the landing zone of its stream); 0: no pool (promotions without rings, streams read through the staging buffer; no DC RDMA)"},
        {"LLC_RING_SLOTS", "16", "slots per ring of the ring pool (1 .. 4096)"},
        {"LLC_RING_SLOT_BYTES", "4k", "bytes per ring slot (a power of two, 1k .. 1m); rings x slots x slot bytes is at most 64 GiB of address space (pages are committed only while a ring is leased and written)"},
        {"LLC_HYBRID_DC_RDMA", "1", "hybrid (receiver driver): 1: a busy udp source of large messages (mean above ~6 KB, the cost model's DC RDMA choice) is asked to address its datagrams to a ring leased for it from the node's pool (DC RDMA: no connection, no RC slot, flow control by the ring's slots); 0: DC RDMA is only modelled (such a source stays on plain udp)"},
        {"LLC_KVS", "dist", "where endpoint addresses live: pmi (every process puts/gets through the bootstrap) or dist (KVS on the node leaders, bootstrap only for their addresses)"},
        {"LLC_KVS_TIMEOUT_MS", "10000", "dist: a KVS put/lookup whose server does not answer for this many ms fails (LLC_ERR_PEER)"},
        {"LLC_KVS_CACHE", "LLC_MAX_CONTEXTS", "dist: peer address entries cached after lookup (least recently used evicted; 0: no cache); unset: as many as LLC_MAX_CONTEXTS (1024 by default)"},
        {"LLC_REG_CACHE_MAX", "65536", "most memory registrations the registration cache keeps (least recently used unpinned ones deregistered beyond it; 0: register on every use, deregister on release); used by the verbs transport's rendezvous (LLC_VERBS_RNDV_BYTES: senders' payloads and receivers' landing buffers), one cache per process; no other path registers memory"},
    };
    return table;
}

const char *env_get(const char *name)
{
    for (const EnvVarInfo &v : env_vars())
        if (std::strcmp(v.name, name) == 0)
            return std::getenv(name);
    throw std::logic_error(std::string("libllc reads environment variable ") + name +
                           " but it is not in the table of config.cpp");
}

namespace {

// Unsigned integer with optional k/m/g suffix (powers of 1024).
bool read_unsigned(const char *name, uint64_t &out, uint64_t min, uint64_t max)
{
    const char *text = env_get(name);
    if (!text || !*text)
        return false;
    errno = 0;
    char *end = nullptr;
    unsigned long long value = std::strtoull(text, &end, 10);
    bool ok = errno == 0 && end != text && text[0] != '-';
    if (ok && *end) {
        switch (*end) {
        case 'k': case 'K': value <<= 10; break;
        case 'm': case 'M': value <<= 20; break;
        case 'g': case 'G': value <<= 30; break;
        default: ok = false;
        }
        if (ok && end[1] != '\0')
            ok = false;
    }
    if (!ok || value < min || value > max)
        throw Error(LLC_ERR_INVALID, std::string("environment variable ") + name + "=\"" + text +
                                         "\" is not valid: expected an integer in [" +
                                         std::to_string(min) + ", " + std::to_string(max) + "]");
    out = value;
    return true;
}

bool read_bool(const char *name, bool &out)
{
    uint64_t v;
    if (!read_unsigned(name, v, 0, 1))
        return false;
    out = v != 0;
    return true;
}

} // namespace

Config Config::from_environment()
{
    Config c;
    uint64_t v;
    if (read_unsigned("LLC_SHM_RING_BYTES", v, 4096, uint64_t(1) << 30))
        c.shm_ring_bytes = v;
    size_t pow2 = 4096;
    while (pow2 < c.shm_ring_bytes)
        pow2 <<= 1;
    c.shm_ring_bytes = pow2;
    read_bool("LLC_CMA", c.cma_enabled);
    if (read_unsigned("LLC_CMA_THRESHOLD", v, 1, uint64_t(1) << 40))
        c.cma_threshold = v;
    read_bool("LLC_CMA_SIMULATE_EPERM", c.cma_simulate_eperm);
    if (read_unsigned("LLC_COPY_MAX", v, 0, uint64_t(1) << 30))
        c.copy_max = v;
    if (read_unsigned("LLC_TAG_EAGER_BYTES", v, 0, uint64_t(1) << 30))
        c.tag_eager_bytes = v;
    read_unsigned("LLC_SPIN_COUNT", c.spin_count, 0, uint64_t(1) << 40);
    read_unsigned("LLC_IDLE_SLEEP_US", c.idle_sleep_us, 0, uint64_t(1) << 40);
    read_unsigned("LLC_SLEEP_US", c.sleep_us, 1, 1000000);
    read_unsigned("LLC_CONNECT_TIMEOUT_MS", c.connect_timeout_ms, 1, uint64_t(1) << 40);
    read_unsigned("LLC_FINALIZE_TIMEOUT_MS", c.finalize_timeout_ms, 1, uint64_t(1) << 40);
    if (const char *addr = env_get("LLC_TCP_ADDR"))
        c.tcp_addr = addr;
    read_unsigned("LLC_TCP_PEER_TIMEOUT_MS", c.tcp_peer_timeout_ms, 10, 2147483647); // TCP_USER_TIMEOUT takes an int
    read_unsigned("LLC_TCP_AUTH_TIMEOUT_MS", c.tcp_auth_timeout_ms, 1, uint64_t(1) << 40);

    if (const char *net = env_get("LLC_NET"); net && *net) {
        std::string n = net;
        if (n == "tcp")
            c.net = Net::Tcp;
        else if (n == "udp")
            c.net = Net::Udp;
        else if (n == "hybrid")
            c.net = Net::Hybrid;
        else if (n == "verbs")
            c.net_verbs = true;
        else
            throw Error(LLC_ERR_INVALID, "environment variable LLC_NET=\"" + n +
                                             "\" is not valid: expected tcp, udp, hybrid or verbs");
    }
    if (const char *fb = env_get("LLC_VERBS_FALLBACK"); fb && *fb) {
        std::string f = fb;
        if (f == "tcp")
            c.verbs_fallback = VerbsFallback::Tcp;
        else if (f == "udp")
            c.verbs_fallback = VerbsFallback::Udp;
        else if (f == "hybrid")
            c.verbs_fallback = VerbsFallback::Hybrid;
        else if (f == "none")
            c.verbs_fallback = VerbsFallback::None;
        else
            throw Error(LLC_ERR_INVALID, "environment variable LLC_VERBS_FALLBACK=\"" + f +
                                             "\" is not valid: expected tcp, udp, hybrid or none");
    }
    bool hybrid = false;
    if (read_bool("LLC_HYBRID", hybrid) && hybrid) {
        if (c.net == Net::Udp)
            throw Error(LLC_ERR_INVALID, "LLC_HYBRID=1 contradicts LLC_NET=udp");
        if (c.net_verbs)
            throw Error(LLC_ERR_INVALID,
                        "LLC_HYBRID=1 contradicts LLC_NET=verbs (for a hybrid fallback set LLC_VERBS_FALLBACK=hybrid)");
        c.net = Net::Hybrid;
    }
    if (const char *addr = env_get("LLC_UDP_ADDR"))
        c.udp_addr = addr;
    if (read_unsigned("LLC_UDP_MTU", v, 512, 65000))
        c.udp_mtu = v;
    read_unsigned("LLC_UDP_WINDOW", c.udp_window, 2, 4096);
    read_unsigned("LLC_UDP_RTO_US", c.udp_rto_us, 100, 10000000);
    read_unsigned("LLC_UDP_PEER_TIMEOUT_MS", c.udp_peer_timeout_ms, 10, uint64_t(1) << 40);
    read_unsigned("LLC_UDP_EVICT_IDLE_MS", c.udp_evict_idle_ms, 0, uint64_t(1) << 40);
    if (read_unsigned("LLC_UDP_SOCKBUF", v, 0, uint64_t(1) << 30))
        c.udp_sockbuf = v;
    read_unsigned("LLC_UDP_DROP_PERMILLE", c.udp_drop_permille, 0, 1000);
    read_unsigned("LLC_UDP_REORDER", c.udp_reorder_permille, 0, 1000);
    if (const char *only = env_get("LLC_UDP_DROP_ONLY")) {
        std::string o = only;
        if (o == "all" || o == "switch")
            c.udp_drop_switch_only = o == "switch";
        else
            throw Error(LLC_ERR_INVALID, "environment variable LLC_UDP_DROP_ONLY=\"" + o +
                                             "\" is not valid: expected all or switch");
    }
    read_unsigned("LLC_HYBRID_PERIOD_MS", c.hybrid_period_ms, 1, uint64_t(1) << 40);
    read_unsigned("LLC_HYBRID_PROMOTE_MSGS", c.hybrid_promote_msgs, 1, uint64_t(1) << 40);
    read_unsigned("LLC_HYBRID_HISTORY_PERIODS", c.hybrid_history_periods, 8, 65536);
    read_unsigned("LLC_MAX_RC_PER_NODE", c.max_rc_per_node, 0, uint64_t(1) << 30);
    read_unsigned("LLC_RING_POOL", c.ring_pool, 0, uint64_t(1) << 20);
    read_unsigned("LLC_RING_SLOTS", c.ring_slots, 1, 4096);
    read_bool("LLC_HYBRID_DC_RDMA", c.hybrid_dc_rdma);
    if (read_unsigned("LLC_RING_SLOT_BYTES", c.ring_slot_bytes, 1024, uint64_t(1) << 20) &&
        (c.ring_slot_bytes & (c.ring_slot_bytes - 1)) != 0)
        throw Error(LLC_ERR_INVALID, "environment variable LLC_RING_SLOT_BYTES=\"" +
                                         std::string(env_get("LLC_RING_SLOT_BYTES")) +
                                         "\" is not valid: expected a power of two in [1024, 1048576]");
    if (c.ring_pool * c.ring_slots * c.ring_slot_bytes > (uint64_t(1) << 36))
        throw Error(LLC_ERR_INVALID, "LLC_RING_POOL x LLC_RING_SLOTS x LLC_RING_SLOT_BYTES = " +
                                         std::to_string(c.ring_pool) + " x " + std::to_string(c.ring_slots) +
                                         " x " + std::to_string(c.ring_slot_bytes) +
                                         " bytes is more than the ring pool's limit of 64 GiB of address space");
    if (const char *driver = env_get("LLC_HYBRID_DRIVER"); driver && *driver) {
        std::string d = driver;
        if (d == "receiver")
            c.hybrid_driver = HybridDriver::Receiver;
        else if (d == "sender")
            c.hybrid_driver = HybridDriver::Sender;
        else
            throw Error(LLC_ERR_INVALID, "environment variable LLC_HYBRID_DRIVER=\"" + d +
                                             "\" is not valid: expected receiver or sender");
    }
    if (const char *kvs = env_get("LLC_KVS"); kvs && *kvs) {
        std::string k = kvs;
        if (k == "pmi")
            c.kvs = Kvs::Pmi;
        else if (k == "dist")
            c.kvs = Kvs::Dist;
        else
            throw Error(LLC_ERR_INVALID, "environment variable LLC_KVS=\"" + k +
                                             "\" is not valid: expected pmi or dist");
    }
    read_unsigned("LLC_KVS_TIMEOUT_MS", c.kvs_timeout_ms, 1, uint64_t(1) << 40);
    read_bool("LLC_MEM_REPORT", c.mem_report);
    read_bool("LLC_NODE_SHARED", c.node_shared);
    read_bool("LLC_UDP_SHARED_RECV", c.udp_shared_recv);
    if (read_unsigned("LLC_UDP_HANDOVER_SLOTS", v, 2, 4096)) {
        uint64_t p = 2;
        while (p < v)
            p <<= 1;
        c.udp_handover_slots = p;
    }
    if (read_unsigned("LLC_MAX_CONTEXTS", v, 1, uint64_t(1) << 24))
        c.max_contexts = v;
    // The address cache is one more per-peer table: capped at gamma too unless set.
    c.kvs_cache = c.max_contexts;
    if (read_unsigned("LLC_KVS_CACHE", v, 0, uint64_t(1) << 24))
        c.kvs_cache = v;
    if (read_unsigned("LLC_REG_CACHE_MAX", v, 0, uint64_t(1) << 24))
        c.reg_cache_max = v;
    if (read_unsigned("LLC_VERBS_RNDV_BYTES", v, 0, uint64_t(1) << 62))
        c.verbs_rndv_bytes = v;
    return c;
}

} // namespace llc
