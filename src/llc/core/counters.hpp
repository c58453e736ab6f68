// counters.hpp - libllc's counters (core/counters.def and its fragments) as
// a constexpr table of descriptors indexed like llc_counters.h (the order of
// llc_stats_t's members), each with its member's offset in llc_stats_t.
#pragma once

#include "llc.h"
#include "llc_counters.h"

#include <array>
#include <cstddef>

namespace llc {

struct CounterDesc {
    const char *name;
    size_t offset; // of the uint64_t member in llc_stats_t
    int counter_class;
    const char *component;
    const char *help;
};

namespace detail {

// The rows in the order core/counters.def and its fragments list them.
inline constexpr CounterDesc kCounterRows[] = {
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

inline constexpr size_t kCounterRowCount = sizeof(kCounterRows) / sizeof(kCounterRows[0]);

// The rows ordered by their members' offsets (an insertion sort, at compile
// time): llc_stats_t's order, whichever fragment each row comes from.
constexpr std::array<CounterDesc, kCounterRowCount> rows_by_offset()
{
    std::array<CounterDesc, kCounterRowCount> sorted{};
    for (size_t i = 0; i < kCounterRowCount; i++) {
        size_t j = i;
        for (; j > 0 && sorted[j - 1].offset > kCounterRows[i].offset; j--)
            sorted[j] = sorted[j - 1];
        sorted[j] = kCounterRows[i];
    }
    return sorted;
}

} // namespace detail

// Indexed like llc_counters.h: entry i is the i-th member of llc_stats_t.
inline constexpr std::array<CounterDesc, detail::kCounterRowCount> kCounters = detail::rows_by_offset();

inline constexpr size_t kCounterCount = kCounters.size();

// The table names every member of llc_stats_t once, in the struct's order.
constexpr bool counters_cover_the_struct()
{
    for (size_t i = 0; i < kCounterCount; i++)
        if (kCounters[i].offset != i * sizeof(uint64_t))
            return false;
    return kCounterCount * sizeof(uint64_t) == sizeof(llc_stats_t);
}
static_assert(
    counters_cover_the_struct(),
    "core/counters.def and its fragments must list every llc_stats_t member exactly once (a member was added, "
    "or a row is missing or repeated)");

} // namespace llc
