// config.cpp - parse the LLC_* environment variables.
#include "config.hpp"

#include "errors.hpp"
#include "llc.h"

#include <cerrno>
#include <cstdlib>

namespace llc {
namespace {

// Unsigned integer with optional k/m/g suffix (powers of 1024).
bool read_unsigned(const char *name, uint64_t &out, uint64_t min, uint64_t max)
{
    const char *text = std::getenv(name);
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
    read_unsigned("LLC_SPIN_COUNT", c.spin_count, 0, uint64_t(1) << 40);
    read_unsigned("LLC_IDLE_SLEEP_US", c.idle_sleep_us, 0, uint64_t(1) << 40);
    read_unsigned("LLC_SLEEP_US", c.sleep_us, 1, 1000000);
    read_unsigned("LLC_CONNECT_TIMEOUT_MS", c.connect_timeout_ms, 1, uint64_t(1) << 40);
    read_unsigned("LLC_FINALIZE_TIMEOUT_MS", c.finalize_timeout_ms, 1, uint64_t(1) << 40);
    if (const char *addr = std::getenv("LLC_TCP_ADDR"))
        c.tcp_addr = addr;

    if (const char *net = std::getenv("LLC_NET"); net && *net) {
        std::string n = net;
        if (n == "tcp")
            c.net = Net::Tcp;
        else if (n == "udp")
            c.net = Net::Udp;
        else if (n == "hybrid")
            c.net = Net::Hybrid;
        else
            throw Error(LLC_ERR_INVALID, "environment variable LLC_NET=\"" + n +
                                             "\" is not valid: expected tcp, udp or hybrid");
    }
    bool hybrid = false;
    if (read_bool("LLC_HYBRID", hybrid) && hybrid) {
        if (c.net == Net::Udp)
            throw Error(LLC_ERR_INVALID, "LLC_HYBRID=1 contradicts LLC_NET=udp");
        c.net = Net::Hybrid;
    }
    if (const char *addr = std::getenv("LLC_UDP_ADDR"))
        c.udp_addr = addr;
    if (read_unsigned("LLC_UDP_MTU", v, 512, 65000))
        c.udp_mtu = v;
    read_unsigned("LLC_UDP_WINDOW", c.udp_window, 2, 4096);
    read_unsigned("LLC_UDP_RTO_US", c.udp_rto_us, 100, 10000000);
    read_unsigned("LLC_UDP_PEER_TIMEOUT_MS", c.udp_peer_timeout_ms, 10, uint64_t(1) << 40);
    if (read_unsigned("LLC_UDP_SOCKBUF", v, 0, uint64_t(1) << 30))
        c.udp_sockbuf = v;
    read_unsigned("LLC_UDP_DROP_PERMILLE", c.udp_drop_permille, 0, 1000);
    read_unsigned("LLC_UDP_REORDER", c.udp_reorder_permille, 0, 1000);
    read_unsigned("LLC_HYBRID_PERIOD_MS", c.hybrid_period_ms, 1, uint64_t(1) << 40);
    read_unsigned("LLC_HYBRID_PROMOTE_MSGS", c.hybrid_promote_msgs, 1, uint64_t(1) << 40);
    read_unsigned("LLC_MAX_RC_PER_NODE", c.max_rc_per_node, 0, uint64_t(1) << 30);
    return c;
}

} // namespace llc
