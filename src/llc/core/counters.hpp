// counters.hpp - libllc's counters (core/counters.def) as a constexpr table
// of descriptors indexed like llc_counters.h, each with its member's offset
// in llc_stats_t.
#pragma once

#include "llc.h"
#include "llc_counters.h"

#include <cstddef>

namespace llc {

struct CounterDesc {
    const char *name;
    size_t offset; // of the uint64_t member in llc_stats_t
    int counter_class;
    const char *component;
    const char *help;
};

inline constexpr CounterDesc kCounters[] = {
#define LLC_COUNTER(MEMBER, NAME, CLASS, COMPONENT, HELP) \
    {#NAME, offsetof(llc_stats_t, MEMBER), LLC_COUNTER_##CLASS, COMPONENT, HELP},
#define LLC_COUNTER_Counter LLC_COUNTER_COUNT
#define LLC_COUNTER_Level LLC_COUNTER_LEVEL
#define LLC_COUNTER_HighWater LLC_COUNTER_HIGH_WATER
#include "core/counters.def"
#undef LLC_COUNTER_Counter
#undef LLC_COUNTER_Level
#undef LLC_COUNTER_HighWater
#undef LLC_COUNTER
};

inline constexpr size_t kCounterCount = sizeof(kCounters) / sizeof(kCounters[0]);

// The table names every member of llc_stats_t once, in the struct's order.
constexpr bool counters_cover_the_struct()
{
    for (size_t i = 0; i < kCounterCount; i++)
        if (kCounters[i].offset != i * sizeof(uint64_t))
            return false;
    return kCounterCount * sizeof(uint64_t) == sizeof(llc_stats_t);
}
static_assert(counters_cover_the_struct(),
              "core/counters.def must list every llc_stats_t member, in order (a member was added or moved)");

} // namespace llc
