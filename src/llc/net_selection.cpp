// net_selection.cpp - see net_selection.hpp.
#include "net_selection.hpp"

#include "errors.hpp"
#include "llc.h"

namespace llc {

const char *net_name(Config::Net net)
{
    switch (net) {
    case Config::Net::Tcp: return "tcp";
    case Config::Net::Udp: return "udp";
    case Config::Net::Hybrid: return "hybrid";
    }
    return "?";
}

const char *fallback_name(Config::VerbsFallback fallback)
{
    switch (fallback) {
    case Config::VerbsFallback::Tcp: return "tcp";
    case Config::VerbsFallback::Udp: return "udp";
    case Config::VerbsFallback::Hybrid: return "hybrid";
    case Config::VerbsFallback::None: return "none";
    }
    return "?";
}

NetChoice choose_net(const Config &config, const VerbsDiscovery &found)
{
    NetChoice choice;
    choice.net = config.net;
    if (!config.net_verbs)
        return choice;

    // The action comes before the (possibly long) device text: callers such
    // as MPICH's error stack truncate long messages.
    if (const VerbsDevice *dev = found.first_usable())
        throw Error(LLC_ERR_UNSUPPORTED,
                    "LLC_NET=verbs: this libllc has no verbs data path (RC/DC queue pairs and shared receive "
                    "queues are not implemented in this version); use LLC_NET=tcp, udp or hybrid. Usable RDMA device: " +
                        dev->summary());

    const std::string why = "no usable RDMA device (devices found: " +
                            (found.devices.empty() ? std::string("none") : found.devices_text()) +
                            "; reason: " + found.unusable_reason() + ")";
    switch (config.verbs_fallback) {
    case Config::VerbsFallback::None:
        throw Error(LLC_ERR_UNSUPPORTED,
                    "LLC_NET=verbs with LLC_VERBS_FALLBACK=none: no usable RDMA device; set LLC_VERBS_FALLBACK=tcp, "
                    "udp or hybrid to fall back (or LLC_NET=tcp, udp or hybrid). Details: " + why);
    case Config::VerbsFallback::Tcp: choice.net = Config::Net::Tcp; break;
    case Config::VerbsFallback::Udp: choice.net = Config::Net::Udp; break;
    case Config::VerbsFallback::Hybrid: choice.net = Config::Net::Hybrid; break;
    }
    choice.notice = std::string("libllc: LLC_NET=verbs: ") + why + "; using " + net_name(choice.net) +
                    " instead (LLC_VERBS_FALLBACK=" + fallback_name(config.verbs_fallback) +
                    "; set LLC_VERBS_FALLBACK=tcp|udp|hybrid|none to change this)";
    return choice;
}

} // namespace llc
