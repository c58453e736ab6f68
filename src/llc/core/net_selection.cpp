// net_selection.cpp - see net_selection.hpp.
#include "core/net_selection.hpp"

#include "core/errors.hpp"
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

namespace {

VerbsDiscoveryFn discovery_override = nullptr;

Config::Net fallback_net(Config::VerbsFallback f)
{
    switch (f) {
    case Config::VerbsFallback::Udp: return Config::Net::Udp;
    case Config::VerbsFallback::Hybrid: return Config::Net::Hybrid;
    case Config::VerbsFallback::Tcp:
    case Config::VerbsFallback::None: break;
    }
    return Config::Net::Tcp;
}

} // namespace

void set_verbs_discovery_for_testing(VerbsDiscoveryFn fn) { discovery_override = fn; }

VerbsDiscovery discover_for_init() { return discovery_override ? discovery_override() : discover_verbs_devices(); }

NetChoice choose_net(const Config &config, const VerbsDiscovery &found)
{
    NetChoice choice;
    choice.net = config.net;
    if (!config.net_verbs)
        return choice;

    // The action comes before the (possibly long) device text: callers such
    // as MPICH's error stack truncate long messages.
    if (const VerbsDevice *dev = found.first_usable()) {
        if (!kVerbsDataPathBuilt)
            throw Error(LLC_ERR_UNSUPPORTED,
                        "LLC_NET=verbs: this libllc has no verbs data path (it was built without mlx5dv, which the "
                        "DC queue pairs need: install libibverbs-dev with libmlx5 and rebuild); use LLC_NET=tcp, udp "
                        "or hybrid. Usable RDMA device: " + dev->summary());
        choice.verbs = true;
        choice.device = *dev;
        choice.net = fallback_net(config.verbs_fallback); // if the transport fails to start
        return choice;
    }

    const std::string why = "no usable RDMA device (devices found: " +
                            (found.devices.empty() ? std::string("none") : found.devices_text()) +
                            "; reason: " + found.unusable_reason() + ")";
    if (config.verbs_fallback == Config::VerbsFallback::None)
        throw Error(LLC_ERR_UNSUPPORTED,
                    "LLC_NET=verbs with LLC_VERBS_FALLBACK=none: no usable RDMA device; set LLC_VERBS_FALLBACK=tcp, "
                    "udp or hybrid to fall back (or LLC_NET=tcp, udp or hybrid). Details: " + why);
    choice.net = fallback_net(config.verbs_fallback);
    choice.notice = std::string("libllc: LLC_NET=verbs: ") + why + "; using " + net_name(choice.net) +
                    " instead (LLC_VERBS_FALLBACK=" + fallback_name(config.verbs_fallback) +
                    "; set LLC_VERBS_FALLBACK=tcp|udp|hybrid|none to change this)";
    return choice;
}

NetChoice fall_back_after_failure(const Config &config, const std::string &device, int status,
                                  const std::string &error)
{
    if (config.verbs_fallback == Config::VerbsFallback::None)
        throw Error(status, "LLC_NET=verbs with LLC_VERBS_FALLBACK=none: the verbs transport could not start on " +
                                device + " (set LLC_VERBS_FALLBACK=tcp, udp or hybrid to fall back): " + error);
    NetChoice choice;
    choice.net = fallback_net(config.verbs_fallback);
    choice.notice = "libllc: LLC_NET=verbs: the verbs transport could not start on " + device + " (" + error +
                    "); using " + net_name(choice.net) + " instead (LLC_VERBS_FALLBACK=" +
                    fallback_name(config.verbs_fallback) + "; set LLC_VERBS_FALLBACK=tcp|udp|hybrid|none to change this)";
    return choice;
}

} // namespace llc
