// llc_info - what this libllc offers: version, transports and their
// capability bits, every environment variable it reads (current value,
// default, meaning), the same for the collectives of libllccoll (src/coll),
// and with --sizes the per-peer structure sizes behind the memory model
// (doc/memory.md), and the verbs section: whether libllc was built with
// libibverbs, the RDMA devices found and what LLC_NET=verbs would do.
#include "core/build_info.hpp"
#include "core/config.hpp"
#include "core/errors.hpp"
#include "llc.h"
#include "llc_coll.h"
#include "mem/mem_accounting.hpp"
#include "core/net_selection.hpp"
#include "counters_doc.hpp"
#include "settings_doc.hpp"
#include "transport/verbs/verbs_devices.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

void usage(FILE *out)
{
    std::fputs("usage: llc_info [--env] [--transports] [--verbs] [--sizes] [--settings-markdown] [--counters-markdown] [--help]\n"
               "  (no option: version, transports, verbs and environment)\n"
               "  --env         only the environment variables libllc and libllccoll read\n"
               "  --transports  only the transports built and their capability bits\n"
               "  --verbs       only the verbs section: libibverbs in the build, RDMA devices, LLC_NET=verbs fallback\n"
               "  --sizes       sizeof of libllc's per-process and per-peer structures\n"
               "  --settings-markdown  the table of every setting as markdown (doc/settings.md)\n"
               "  --counters-markdown  the table of every counter (MPI_T performance variable) as markdown (doc/counters.md)\n",
               out);
}

void print_transports()
{
    std::printf("transports built:\n");
    for (const llc::TransportInfo &t : llc::built_transports())
        std::printf("  %-5s %-11s caps=0x%02x (%s)  %s\n", t.name, t.kind, unsigned(t.caps),
                    llc::caps_text(t.caps).c_str(), t.description);
}

void print_verbs()
{
    const llc::VerbsDiscovery found = llc::discover_verbs_devices();
    std::printf("verbs (RDMA through rdma-core; DC data path when built with mlx5dv, never run on hardware):\n");
    std::printf("  built with libibverbs: %s, mlx5dv: %s, verbs data path: %s\n", found.built_with_verbs ? "yes" : "no",
                found.built_with_mlx5dv ? "yes" : "no", llc::kVerbsDataPathBuilt ? "yes" : "no");
    if (found.devices.empty())
        std::printf("  devices: none (%s)\n", found.no_device_reason.c_str());
    else {
        std::printf("  devices: %zu\n", found.devices.size());
        for (const llc::VerbsDevice &d : found.devices)
            std::printf("    %s\n", d.summary().c_str());
    }
    // What llc_init would do with LLC_NET=verbs and the current environment.
    std::string effect;
    try {
        llc::Config config = llc::Config::from_environment();
        config.net_verbs = true;
        try {
            llc::NetChoice choice = llc::choose_net(config, found);
            if (choice.verbs)
                effect = "uses the verbs transport on " + choice.device.summary() + " (if it cannot start there: " +
                         llc::net_name(choice.net) + ", LLC_VERBS_FALLBACK=" +
                         llc::fallback_name(config.verbs_fallback) + ")";
            else
                effect = std::string("falls back to ") + llc::net_name(choice.net) + " (LLC_VERBS_FALLBACK=" +
                         llc::fallback_name(config.verbs_fallback) + "): " + found.unusable_reason();
        } catch (const llc::Error &e) {
            effect = std::string("llc_init fails (") + llc_strerror(e.status()) + "): " + e.what();
        }
    } catch (const llc::Error &e) {
        effect = std::string("unknown: the environment is not valid: ") + e.what();
    }
    std::printf("  LLC_NET=verbs: %s\n", effect.c_str());
}

void print_env()
{
    std::printf("environment variables read by libllc (name, current value, default, meaning):\n");
    for (const llc::EnvVarInfo &v : llc::env_vars()) {
        const char *cur = llc::env_get(v.name);
        std::printf("  %-24s %-10s default %-7s %s\n", v.name, cur ? cur : "(unset)", v.default_text, v.description);
    }
}

void print_coll_env()
{
    const llc_coll_env_var_t *vars = nullptr;
    const size_t n = llc_coll_env_vars(&vars);
    int width = 24;
    for (size_t i = 0; i < n; i++)
        width = std::max(width, int(std::strlen(vars[i].name)));
    std::printf("collectives (libllccoll): environment variables read (name, current value, default, meaning):\n");
    for (size_t i = 0; i < n; i++) {
        const char *cur = llc_coll_env_get(vars[i].name);
        std::printf("  %-*s %-10s default %-8s %s\n", width, vars[i].name, cur ? cur : "(unset)",
                    vars[i].default_text, vars[i].description);
    }
}

void print_sizes()
{
    llc::MemWalk::StructSizes s = llc::MemWalk::struct_sizes();
    std::printf("structure sizes (bytes, this build):\n");
    std::printf("  %-34s %6zu\n", "Context (with handler table)", s.context);
    std::printf("  %-34s %6zu\n", "  handler table", s.handler_table);
    std::printf("  %-34s %6zu\n", "SelfTransport", s.self_transport);
    std::printf("  %-34s %6zu\n", "TcpTransport", s.tcp_transport);
    std::printf("  %-34s %6zu\n", "ShmTransport", s.shm_transport);
    std::printf("  %-34s %6zu\n", "tcp OutConn (per peer sent to)", s.tcp_out_conn);
    std::printf("  %-34s %6zu\n", "tcp InConn (per peer received from)", s.tcp_in_conn);
    std::printf("  %-34s %6zu\n", "StreamDecoder (per incoming stream)", s.stream_decoder);
    std::printf("  %-34s %6zu\n", "shm Peer (per local peer)", s.shm_peer);
    std::printf("  %-34s %6zu\n", "empty send queue (deque heap)", s.empty_deque_heap);
    std::printf("  %-34s %6zu\n", "OutgoingMessage (per queued record)", s.outgoing_message);
    std::printf("  %-34s %6zu\n", "RingControl (per shm ring)", s.ring_control);
    std::printf("  %-34s %6zu\n", "shm segment header", s.segment_header);
    std::printf("  %-34s %6zu\n", "UdpTransport", s.udp_transport);
    std::printf("  %-34s %6zu\n", "udp Peer (per peer talked to)", s.udp_peer);
    std::printf("  %-34s %6zu\n", "  its slot in the capped table", s.udp_peer_entry);
    std::printf("  %-34s %6zu\n", "udp Tx + empty deques (busy peer)", s.udp_tx);
    std::printf("  %-34s %6zu\n", "udp TxPacket (per unacked datagram)", s.udp_tx_packet);
    std::printf("  %-34s %6zu\n", "udp datagram header", s.udp_header);
    std::printf("  %-34s %6zu\n", "udp receive buffer", s.udp_rx_buffer);
    std::printf("  %-34s %6zu\n", "udp free datagram buffers kept", s.udp_free_buffers);
    std::printf("  %-34s %6zu\n", "hybrid Route table slot", s.hybrid_route);
    std::printf("  %-34s %6zu\n", "hybrid Source table slot", s.hybrid_source);
    std::printf("  %-34s %6zu\n", "  either table, per unit of gamma", s.hybrid_table_per_cap);
    std::printf("  %-34s %6zu\n", "tcp rank -> connection hash node", s.tcp_out_entry);
    std::printf("  %-34s %6zu\n", "node-shared rank table header", s.node_map_header);
    std::printf("  n-sized tables: sequence numbers %zu bytes per rank of the job per process (lazily committed"
                " pages); rank -> node %zu bytes per rank per node (node-shared, LLC_NODE_SHARED=1; per process"
                " when private)\n",
                2 * s.seq_entry, s.node_entry);
}

} // namespace

int main(int argc, char **argv)
{
    bool env = false, transports = false, sizes = false, verbs = false;
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--env"))
            env = true;
        else if (!std::strcmp(argv[i], "--transports"))
            transports = true;
        else if (!std::strcmp(argv[i], "--verbs"))
            verbs = true;
        else if (!std::strcmp(argv[i], "--sizes"))
            sizes = true;
        else if (!std::strcmp(argv[i], "--settings-markdown")) {
            std::fputs(llc::tools::settings_markdown().c_str(), stdout);
            return 0;
        } else if (!std::strcmp(argv[i], "--counters-markdown")) {
            std::fputs(llc::tools::counters_markdown().c_str(), stdout);
            return 0;
        }
        else if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else {
            std::fprintf(stderr, "llc_info: unknown option %s\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    bool all = !env && !transports && !sizes && !verbs;
    if (all)
        std::printf("libllc %s (C API version %d, llc_mem_report %s)\n", llc::package_version(), LLC_API_VERSION,
                    LLC_HAVE_MEM_REPORT ? "yes" : "no");
    if (all || transports)
        print_transports();
    if (all || verbs)
        print_verbs();
    if (all || env) {
        print_env();
        print_coll_env();
    }
    if (sizes)
        print_sizes();
    return 0;
}
