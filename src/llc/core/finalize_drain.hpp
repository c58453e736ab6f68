// finalize_drain.hpp - llc_finalize's protocol over the transports, before
// its last fence: routers finish the route changes under way, every
// transport says goodbye behind its data, and progress runs until nothing is
// pending and nothing more can arrive, or until the time limit.
#pragma once

#include "transport/transport.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace llc {

// round: one llc_progress; true while sends are still pending.  note: the
// first error met (a time-out is LLC_ERR_TIMEOUT, with each transport's
// close_state report; it is also printed on stderr, whole, for rank `rank`).
void drain_for_finalize(const std::vector<Transport *> &transports, uint64_t timeout_ms, int rank,
                        const std::function<bool()> &round, const std::function<void(int, const std::string &)> &note);

} // namespace llc
