// open_transports.hpp - the transports a Context gets at llc_init: the one
// place that names the concrete transports (transport/transport.hpp).
#pragma once

#include "core/config.hpp"
#include "core/net_selection.hpp"
#include "transport/transport.hpp"

#include <memory>
#include <string>
#include <vector>

namespace llc {

class Context;

// To this process itself.
std::unique_ptr<Transport> open_self_transport(Context &ctx);

// To the other processes of this node (local_ranks: all of the node's, this
// one included, ascending): creates this process's shared segment; attach()
// maps the others' after the first init fence.
std::unique_ptr<Transport> open_node_transport(Context &ctx, const std::string &job_id,
                                               const std::vector<int> &local_ranks);

// LLC_NET=verbs: device discovery, then the verbs transport's device, or
// the fallback (config.net set to it; said once per process, by rank 0), or
// throws Error.  Otherwise config.net as it is.  Before any transport.
NetChoice choose_inter_node(Config &config, int rank);

// With choice.verbs: the verbs transport on choice.device; when that fails,
// the fallback LLC_VERBS_FALLBACK names (config.net is set to it and a
// notice goes to stderr) or the Error.  Otherwise, or after the fallback, the
// NetRouter over the socket transports config.net asks for.  local_ranks:
// the processes of this node.  Call before the first init fence.
std::unique_ptr<Transport> open_inter_node(Context &ctx, Config &config, const NetChoice &choice,
                                           const std::vector<int> &local_ranks);

// The Context numbers the records to each peer and takes them from each
// peer in that order (Context::take_sequence): a transport without
// CapOrdered and CapReliable would fail that check at its first gap.
// Throws Error (LLC_ERR_UNSUPPORTED) naming the transport and what it lacks.
void require_in_order_delivery(const Transport &t);

} // namespace llc
