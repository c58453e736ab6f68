// progress_backoff.hpp - decides what an idle llc_progress call does:
// nothing (spin) for `spin_count` calls, then sched_yield(), and once idle for
// `idle_sleep_us` a short blocking sleep.
#pragma once

#include "core/clock.hpp"

#include <cstdint>

namespace llc {

class ProgressBackoff {
public:
    enum class Action { Spin, Yield, Sleep };

    ProgressBackoff(uint64_t spin_count, uint64_t idle_sleep_us)
        : spin_count_(spin_count), idle_sleep_us_(idle_sleep_us) {}

    void on_activity() { idle_calls_ = 0; }

    Action on_idle()
    {
        if (idle_calls_ < spin_count_) {
            ++idle_calls_;
            return Action::Spin;
        }
        uint64_t now = monotonic_us();
        if (idle_calls_ == spin_count_) {
            ++idle_calls_;
            idle_since_us_ = now;
        }
        return now - idle_since_us_ >= idle_sleep_us_ ? Action::Sleep : Action::Yield;
    }

private:
    uint64_t spin_count_;
    uint64_t idle_sleep_us_;
    uint64_t idle_calls_ = 0;
    uint64_t idle_since_us_ = 0;
};

} // namespace llc
