// finalize_drain.cpp - see finalize_drain.hpp.
#include "core/finalize_drain.hpp"

#include "core/clock.hpp"

#include <algorithm>
#include <cstdio>

namespace llc {

using Detail = Transport::CloseDetail;

FinalizeDrain::FinalizeDrain(std::vector<Transport *> transports, uint64_t timeout_ms, int rank,
                             std::function<bool()> round, std::function<void(int, const std::string &)> note)
    : transports_(std::move(transports)), timeout_ms_(timeout_ms), rank_(rank), round_(std::move(round)),
      note_(std::move(note)), deadline_(monotonic_us() + timeout_ms * 1000)
{
    // Before the first round: a router finishes the switches in flight (no
    // new ones) before its goodbye, so that nothing is sent on a path after
    // its goodbye; every other transport queues its goodbye now, behind any
    // data still pending.
    flushed_ = flush_all();
}

bool FinalizeDrain::flush_all()
{
    bool flushed = true;
    for (Transport *t : transports_)
        flushed &= t->flush(); // every one, whatever the others say
    return flushed;
}

bool FinalizeDrain::quiet() const
{
    return std::all_of(transports_.begin(), transports_.end(),
                       [](const Transport *t) { return t->close_state(Detail::Quiet).quiet; });
}

bool FinalizeDrain::step()
{
    if (done_)
        return true;
    // A local peer that is still running (computing, writing its output) has
    // not begun to finalize: not a failure, however long it takes; the time
    // limit counts from when it begins.  Looked at every kRunningCheckUs (a
    // look may cost a kill(pid, 0) per peer), and the deadline kept at least
    // the limit beyond the last look that found one, so that a peer which
    // begins just before the deadline still has the whole limit to drain.
    constexpr uint64_t kRunningCheckUs = 10000;
    bool pending = round_();
    // Done only after a round that began flushed: a goodbye queued by the
    // flush() after it is pending until the next round has sent it.
    bool began_flushed = flushed_;
    flushed_ = flush_all();
    if (!pending && began_flushed && quiet())
        return done_ = true;
    uint64_t now = monotonic_us();
    if (!pending && began_flushed && now >= next_running_check_) {
        next_running_check_ = now + kRunningCheckUs;
        if (std::any_of(transports_.begin(), transports_.end(),
                        [](const Transport *t) { return t->close_state(Detail::Full).peer_running; }))
            deadline_ = std::max(deadline_, now + timeout_ms_ * 1000);
    }
    if (now <= deadline_)
        return false;
    std::string peers;
    for (const Transport *t : transports_) {
        std::string r = t->close_state(Detail::Full).report;
        if (!r.empty())
            peers += (peers.empty() ? "" : "; ") + r;
    }
    std::string msg = "llc_finalize: gave up after " + std::to_string(timeout_ms_) +
                      " ms (LLC_FINALIZE_TIMEOUT_MS) with " +
                      (pending ? "sends still pending (a peer is not progressing or is gone)"
                               : "peers still sending to this process") +
                      (peers.empty() ? std::string() : " [" + peers + "]");
    // The caller may truncate the message (MPICH keeps about 256
    // characters): the whole of it, with the state of each peer, on stderr.
    std::fprintf(stderr, "llc rank %d: %s\n", rank_, msg.c_str());
    note_(LLC_ERR_TIMEOUT, msg);
    return done_ = true;
}

} // namespace llc
