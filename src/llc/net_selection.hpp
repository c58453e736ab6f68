// net_selection.hpp - resolving LLC_NET=verbs at llc_init.
//
// libllc has no verbs data path yet.  LLC_NET=verbs therefore runs device
// discovery and either falls back to the transport named by
// LLC_VERBS_FALLBACK (tcp, udp or hybrid) when no device is usable, fails
// llc_init when LLC_VERBS_FALLBACK=none, or fails llc_init when a usable
// device IS found (rather than pretend to use it).
#pragma once

#include "config.hpp"
#include "verbs_devices.hpp"

#include <string>

namespace llc {

struct NetChoice {
    Config::Net net = Config::Net::Tcp; // the inter-node path to build
    std::string notice;                 // one line for stderr, empty when there is nothing to say
};

// For config.net_verbs: the fallback and its notice, or throws Error
// (LLC_ERR_UNSUPPORTED) for LLC_VERBS_FALLBACK=none and for a usable device.
// Without net_verbs: config.net, no notice.
NetChoice choose_net(const Config &config, const VerbsDiscovery &found);

// "tcp", "udp", "hybrid"; and "tcp", "udp", "hybrid", "none".
const char *net_name(Config::Net net);
const char *fallback_name(Config::VerbsFallback fallback);

} // namespace llc
