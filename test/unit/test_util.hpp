// test_util.hpp - helpers shared by the libllc tests: payload patterns,
// bounded progress loops, context setup.
#pragma once

#include "llc.h"
#include "test_bootstrap.hpp"

#include <gtest/gtest.h>
#include <time.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace llctest {

inline uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// Deterministic content: byte i of a payload with `seed`.
inline void fill_pattern(char *buf, size_t len, uint64_t seed)
{
    uint64_t state = mix64(seed);
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        std::memcpy(buf + i, &state, 8);
    }
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    for (; i < len; i++)
        buf[i] = char(state >> (8 * (i % 8)));
}

inline bool check_pattern(const void *data, size_t len, uint64_t seed)
{
    std::vector<char> expect(len);
    fill_pattern(expect.data(), len, seed);
    return len == 0 || std::memcmp(expect.data(), data, len) == 0;
}

inline double now_s()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// Call llc_progress until pred() holds; fail (and return false) on an error
// or after timeout_s.
template <class Pred> bool progress_until(llc_context_t *ctx, Pred pred, double timeout_s = 30)
{
    double end = now_s() + timeout_s;
    while (!pred()) {
        int rc = llc_progress(ctx, nullptr);
        if (rc != LLC_OK) {
            ADD_FAILURE() << "llc_progress: " << llc_strerror(rc) << ": " << llc_last_error(ctx);
            return false;
        }
        if (now_s() > end) {
            ADD_FAILURE() << "progress_until timed out after " << timeout_s << " s";
            return false;
        }
    }
    return true;
}

inline llc_context_t *init_or_fail(TestProcess &p)
{
    llc_init_params_t params = p.params();
    llc_context_t *ctx = nullptr;
    int rc = llc_init(&params, &ctx);
    EXPECT_EQ(rc, LLC_OK) << llc_last_error(nullptr);
    return ctx;
}

inline void finalize_ok(llc_context_t *ctx)
{
    int rc = llc_finalize(ctx);
    EXPECT_EQ(rc, LLC_OK) << llc_last_error(nullptr);
}

inline JobOptions job(std::vector<int> nodes, unsigned timeout_s = 60)
{
    JobOptions o;
    o.nodes = std::move(nodes);
    o.timeout_s = timeout_s;
    return o;
}

} // namespace llctest
