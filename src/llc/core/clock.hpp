// clock.hpp - monotonic time in microseconds.
#pragma once

#include <time.h>

#include <cstdint>

namespace llc {

inline uint64_t monotonic_us()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000000u + uint64_t(ts.tv_nsec) / 1000u;
}

// A duration of `us` microseconds, for nanosleep/ppoll.
inline timespec timespec_of_us(uint64_t us) { return timespec{time_t(us / 1000000), long(us % 1000000) * 1000}; }

inline void sleep_us(uint64_t us)
{
    const timespec ts = timespec_of_us(us);
    nanosleep(&ts, nullptr);
}

} // namespace llc
