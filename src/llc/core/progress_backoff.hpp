// progress_backoff.hpp - decides what an idle llc_progress call does:
// nothing (spin) for `spin_count` calls, then sched_yield(), and once idle for
// `idle_sleep_us` a short blocking sleep.  A call may stand for several idle
// polls (the caller's polls that llc_fast_poll_skip left out count too).
//
// Idle calls count as one wait only while they come back to back: a call
// that comes more than `away_us` after the previous one's wait ended (the
// caller went off to compute, or made progress of its own that libllc does
// not see, such as a copy into a window of shared memory, between two
// MPI_Test or MPI_Win_flush calls) starts the count again with spinning.
// Without that, a program that polls now and then would sleep in every poll
// once it had polled idle often enough.
#pragma once

#include "core/clock.hpp"
#include "core/config.hpp"

#include <cstdint>

namespace llc {

// How long an idle wait spins and when it sleeps.  With more processes on
// the node than CPUs, a process that spins or yields for long takes turns
// from those that have work (sched_yield may well pick it again): there the
// wait sleeps soon.
struct IdlePolicy {
    uint64_t spin_count;
    uint64_t idle_sleep_us;
    bool oversubscribed;
};
// From LLC_OVERSUBSCRIBED and the figures it picks between (config.hpp).
IdlePolicy idle_policy(const Config &config, int processes_on_node, long online_cpus);
// This machine's online CPUs (sysconf), at least 1.
long online_cpus();

class ProgressBackoff {
public:
    enum class Action { Spin, Yield, Sleep };
    using Clock = uint64_t (*)();

    ProgressBackoff(uint64_t spin_count, uint64_t idle_sleep_us, uint64_t away_us = 0,
                    Clock clock = monotonic_us)
        : spin_count_(spin_count), idle_sleep_us_(idle_sleep_us), away_us_(away_us), clock_(clock)
    {
    }

    void on_activity() { idle_calls_ = 0; }

    // calls: idle polls this call stands for (itself and the polls its
    // caller left out before it, llc_fast_poll_skip).
    Action on_idle(uint64_t calls = 1)
    {
        if (idle_calls_ < spin_count_) {
            if (calls <= spin_count_ - idle_calls_) {
                idle_calls_ += calls;
                return Action::Spin;
            }
            idle_calls_ = spin_count_; // the spinning is over with this call
        }
        uint64_t now = clock_();
        if (idle_calls_ > spin_count_ && away_us_ != 0 && now - wait_end_us_ > away_us_) {
            // back after being away: a new wait, which spins first
            idle_calls_ = spin_count_ == 0 ? 0 : 1;
            if (spin_count_ != 0)
                return Action::Spin;
        }
        if (idle_calls_ == spin_count_) {
            ++idle_calls_;
            idle_since_us_ = now;
        }
        wait_end_us_ = now;
        return now - idle_since_us_ >= idle_sleep_us_ ? Action::Sleep : Action::Yield;
    }

    // The yield or sleep that on_idle asked for is over.
    void wait_ended() { wait_end_us_ = clock_(); }

private:
    uint64_t spin_count_;
    uint64_t idle_sleep_us_;
    uint64_t away_us_;
    Clock clock_;
    uint64_t idle_calls_ = 0;
    uint64_t idle_since_us_ = 0;
    uint64_t wait_end_us_ = 0;
};

} // namespace llc
