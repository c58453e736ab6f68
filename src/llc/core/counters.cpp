// counters.cpp - llc_counters.h: libllc's counters by index, read from the
// same llc_stats_t snapshot llc_get_stats returns.
#include "core/counters.hpp"

#include <cstring>

namespace llc {
namespace {

bool index_ok(int index) { return index >= 0 && size_t(index) < kCounterCount; }

} // namespace
} // namespace llc

extern "C" {

int llc_counter_count(void) { return int(llc::kCounterCount); }

int llc_counter_info(int index, llc_counter_info_t *out)
{
    if (!out || !llc::index_ok(index))
        return LLC_ERR_INVALID;
    const llc::CounterDesc &d = llc::kCounters[index];
    *out = llc_counter_info_t{d.name, d.component, d.help, d.counter_class};
    return LLC_OK;
}

int llc_counter_read(const llc_context_t *ctx, int first, int n, uint64_t *values)
{
    if (!ctx || !values || n < 0 || first < 0 || size_t(first) + size_t(n) > llc::kCounterCount)
        return LLC_ERR_INVALID;
    llc_stats_t all{};
    int rc = llc_get_stats(ctx, &all);
    if (rc != LLC_OK)
        return rc;
    const char *base = reinterpret_cast<const char *>(&all);
    for (int i = 0; i < n; i++)
        std::memcpy(&values[i], base + llc::kCounters[first + i].offset, sizeof(uint64_t));
    return LLC_OK;
}

} // extern "C"
