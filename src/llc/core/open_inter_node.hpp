// open_inter_node.hpp - the inter-node transport LLC_NET gets at llc_init.
#pragma once

#include "core/config.hpp"
#include "core/net_selection.hpp"
#include "transport/inter_node.hpp"

#include <memory>
#include <vector>

namespace llc {

class Context;

// LLC_NET=verbs: device discovery, then the verbs transport's device, or
// the fallback (config.net set to it; said once per process, by rank 0), or
// throws Error.  Otherwise config.net as it is.  Before any transport.
NetChoice choose_inter_node(Config &config, int rank);

// With choice.verbs: the verbs transport on choice.device; when that fails,
// the fallback LLC_VERBS_FALLBACK names (config.net is set to it and a
// notice goes to stderr) or the Error.  Otherwise, or after the fallback, the
// NetRouter over the socket transports config.net asks for.  local_ranks:
// the processes of this node.  Call before the first init fence.
std::unique_ptr<InterNodeTransport> open_inter_node(Context &ctx, Config &config, const NetChoice &choice,
                                                    const std::vector<int> &local_ranks);

} // namespace llc
