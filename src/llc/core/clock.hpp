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

} // namespace llc
