// net_selection.hpp - resolving LLC_NET=verbs at llc_init.
//
// LLC_NET=verbs runs device discovery.  With a usable device and a libllc
// built with the verbs data path (LLC_VERBS_DATA_PATH: libibverbs and
// mlx5dv), the choice is the verbs transport on that device; when that
// transport then cannot be created (no DC support, limits), the fallback
// applies after all (fall_back_after_failure).  With no usable device,
// LLC_VERBS_FALLBACK decides: tcp, udp or hybrid instead, or none (llc_init
// fails).  A usable device in a build without the data path (libibverbs
// without mlx5dv) makes llc_init fail rather than pretend to use it.
#pragma once

#include "core/config.hpp"
#include "transport/verbs/verbs_devices.hpp"

#include <string>

namespace llc {

struct NetChoice {
    Config::Net net = Config::Net::Tcp; // the inter-node path to build (with verbs: the fallback's)
    bool verbs = false;                 // build the verbs transport on `device` (LLC_VERBS_DATA_PATH only)
    VerbsDevice device;                 // when verbs
    std::string notice;                 // one line for stderr, empty when there is nothing to say
};

// For config.net_verbs: the verbs transport, or the fallback and its notice,
// or throws Error (LLC_ERR_UNSUPPORTED) for LLC_VERBS_FALLBACK=none without a
// usable device, and for a usable device in a build without the data path.
// Without net_verbs: config.net, no notice.
NetChoice choose_net(const Config &config, const VerbsDiscovery &found);

// The verbs transport on `device` failed to start with `error`: the fallback
// (LLC_VERBS_FALLBACK) and a notice naming the device and the error, or
// throws Error (the error's status) for LLC_VERBS_FALLBACK=none.
NetChoice fall_back_after_failure(const Config &config, const std::string &device, int status,
                                  const std::string &error);

// The discovery llc_init runs: discover_verbs_devices(), unless a test has
// replaced it (set_verbs_discovery_for_testing; nullptr restores it).  The
// seam lets the unit tests make llc_init see a usable device on a machine
// without one, so that the verbs transport's failure to start, and the
// fallback after it, run for real.
using VerbsDiscoveryFn = VerbsDiscovery (*)();
void set_verbs_discovery_for_testing(VerbsDiscoveryFn fn);
VerbsDiscovery discover_for_init();

// "tcp", "udp", "hybrid"; and "tcp", "udp", "hybrid", "none".
const char *net_name(Config::Net net);
const char *fallback_name(Config::VerbsFallback fallback);

} // namespace llc
