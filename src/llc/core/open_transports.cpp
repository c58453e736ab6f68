// open_transports.cpp - see open_transports.hpp.
#include "core/open_transports.hpp"

#include "core/context.hpp"
#include "core/errors.hpp"
#include "hybrid/net_router.hpp"
#include "transport/self/self_transport.hpp"
#include "transport/shm/shm_transport.hpp"
#include "transport/verbs/verbs_transport.hpp"

#include <atomic>
#include <string>
#include <cstdio>

namespace llc {

std::unique_ptr<Transport> open_self_transport(Context &ctx) { return std::make_unique<SelfTransport>(ctx); }

std::unique_ptr<Transport> open_node_transport(Context &ctx, const std::string &job_id,
                                               const std::vector<int> &local_ranks)
{
    return std::make_unique<ShmTransport>(ctx, job_id, local_ranks);
}

NetChoice choose_inter_node(Config &config, int rank)
{
    if (!config.net_verbs)
        return NetChoice{};
    NetChoice choice = choose_net(config, discover_for_init());
    config.net = choice.net;
    static std::atomic<bool> said{false};
    if (rank == 0 && !choice.notice.empty() && !said.exchange(true))
        std::fprintf(stderr, "%s\n", choice.notice.c_str());
    return choice;
}

std::unique_ptr<Transport> open_inter_node(Context &ctx, Config &config, const NetChoice &choice,
                                           const std::vector<int> &local_ranks)
{
    if (choice.verbs) {
        try {
            return open_verbs_transport(ctx, choice.device);
        } catch (const Error &e) {
            // Said by every process it happens on: it may be one node only.
            NetChoice fb = fall_back_after_failure(config, choice.device.summary(), e.status(), e.what());
            config.net = fb.net;
            std::fprintf(stderr, "%s (rank %d)\n", fb.notice.c_str(), ctx.rank());
        }
    }
    return std::make_unique<NetRouter>(ctx, local_ranks);
}

void require_in_order_delivery(const Transport &t)
{
    const TransportCaps &caps = t.caps();
    if (caps.has(CapOrdered | CapReliable))
        return;
    std::string lacks = caps.has(CapOrdered) ? "reliable delivery" : caps.has(CapReliable) ? "ordered delivery"
                                                                                           : "ordered, reliable delivery";
    throw Error(LLC_ERR_UNSUPPORTED, std::string("transport ") + caps.name + " does not promise " + lacks +
                                         ", which libllc's per-peer sequence numbers need");
}

} // namespace llc
