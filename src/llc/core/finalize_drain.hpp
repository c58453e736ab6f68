// finalize_drain.hpp - llc_finalize's protocol over the transports, before
// its last fence: routers finish the route changes under way, every
// transport says goodbye behind its data, and progress runs until nothing is
// pending and nothing more can arrive, or until the time limit.  One round
// at a time, so that llc_finalize_all can drain several contexts of a
// process together before any of them blocks in its fence.
#pragma once

#include "transport/transport.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace llc {

class FinalizeDrain {
public:
    // round: one llc_progress; true while sends are still pending.  note: the
    // first error met (a time-out is LLC_ERR_TIMEOUT, with each transport's
    // close_state report; it is also printed on stderr, whole, for rank `rank`).
    // Queues the goodbyes (a router first finishes its switches).
    FinalizeDrain(std::vector<Transport *> transports, uint64_t timeout_ms, int rank, std::function<bool()> round,
                  std::function<void(int, const std::string &)> note);
    // One round of progress; true once drained or timed out (then it stays true).
    bool step();

private:
    bool flush_all();
    bool quiet() const;

    std::vector<Transport *> transports_;
    uint64_t timeout_ms_;
    int rank_;
    std::function<bool()> round_;
    std::function<void(int, const std::string &)> note_;
    uint64_t deadline_;
    uint64_t next_running_check_ = 0;
    bool flushed_ = false;
    bool done_ = false;
};

} // namespace llc
