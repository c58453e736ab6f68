// test_util.hpp - helpers shared by the libllc tests: payload patterns,
// bounded progress loops, context setup.
#pragma once

#include "llc.h"
#include "llc_counters.h"
#include "common/test_bootstrap.hpp"

#include <gtest/gtest.h>
#include <time.h>

#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <list>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace llctest {

// text contains needle (error messages in assertions)
inline bool contains(const std::string &text, const std::string &needle) { return text.find(needle) != std::string::npos; }

// An active-message handler that counts the messages it gets (arg: int *).
inline void count_message(llc_context_t *, void *arg, int, const void *, size_t, const void *, size_t)
{
    ++*static_cast<int *>(arg);
}

// Sum over the job of one value per process (a bootstrap put/fence/get round).
inline uint64_t job_sum(TestProcess &p, const char *key, uint64_t mine)
{
    EXPECT_EQ(TestProcess::put(&p, key, &mine, sizeof(mine)), 0);
    EXPECT_EQ(TestProcess::fence(&p), 0);
    uint64_t total = 0;
    for (int r = 0; r < p.size; r++) {
        uint64_t v = 0;
        size_t len = sizeof(v);
        EXPECT_EQ(TestProcess::get(&p, r, key, &v, &len), 0);
        total += v;
    }
    return total;
}

// llc_mem_report's rows by name (the second call must fill as many rows as
// the first one counted).
inline std::map<std::string, llc_mem_entry_t> mem_report(llc_context_t *ctx)
{
    std::map<std::string, llc_mem_entry_t> out;
    int count = llc_mem_report(ctx, nullptr, 0);
    std::vector<llc_mem_entry_t> entries(size_t(count > 0 ? count : 0));
    EXPECT_EQ(llc_mem_report(ctx, entries.data(), count), count);
    for (const auto &e : entries)
        out[e.name] = e;
    return out;
}

// The items of one row of llc_mem_report (a failure when there is no such row).
inline uint64_t mem_items(llc_context_t *ctx, const std::string &row)
{
    const auto rows = mem_report(ctx);
    const auto it = rows.find(row);
    if (it != rows.end())
        return it->second.items;
    ADD_FAILURE() << "no " << row << " row";
    return 0;
}

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

// How many times the bounds in time of a test that measures detection or
// progress (a peer timeout, "reported within 1 s") stretch in a build whose
// every memory access a sanitizer checks: ThreadSanitizer slows such code 5-15
// times, AddressSanitizer about 2; 1 in a plain build.  Only for bounds that
// stand for "soon"; what a test counts or orders is never scaled.
#if defined(__SANITIZE_THREAD__)
#define LLC_TEST_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LLC_TEST_UNDER_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define LLC_TEST_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LLC_TEST_UNDER_ASAN 1
#endif
#endif
#if defined(LLC_TEST_UNDER_TSAN)
constexpr unsigned kSanitizerTimeScale = 5;
#elif defined(LLC_TEST_UNDER_ASAN)
constexpr unsigned kSanitizerTimeScale = 2;
#else
constexpr unsigned kSanitizerTimeScale = 1;
#endif

// A setting in milliseconds, stretched by kSanitizerTimeScale, as text for JobOptions::env.
inline std::string scaled_ms(unsigned ms) { return std::to_string(ms * kSanitizerTimeScale); }

// A bootstrap for a one-process job (no fork needed): nothing to exchange.
inline int solo_put(void *, const char *, const void *, size_t) { return 0; }
inline int solo_get(void *, int, const char *, void *, size_t *) { return -1; }
// "name value, ..." of every counter of one component ("udp", "tcp", ...)
// of ctx, from libllc's counter table: what a failed wait can print.
inline std::string component_counters(const llc_context_t *ctx, const char *component)
{
    const int n = llc_counter_count();
    std::vector<uint64_t> values(size_t(n), 0);
    if (llc_counter_read(ctx, 0, n, values.data()) != LLC_OK)
        return "(counters not readable)";
    std::string out;
    for (int i = 0; i < n; i++) {
        llc_counter_info_t info{};
        if (llc_counter_info(i, &info) != LLC_OK || std::strcmp(info.component, component) != 0)
            continue;
        out += (out.empty() ? "" : ", ") + std::string(info.name) + " " + std::to_string(values[size_t(i)]);
    }
    return out;
}

inline int solo_fence(void *) { return 0; }

// A job id that no other test process uses at the same time: `name` and
// this process's id (shards of one test program run side by side, and a
// job's shared segments are named from its id).  Kept for the process's life.
inline const char *process_job_id(const char *name)
{
    static std::mutex lock;
    static std::list<std::string> ids;
    std::lock_guard<std::mutex> hold(lock);
    ids.push_back(std::string(name) + "-" + std::to_string(getpid()));
    return ids.back().c_str();
}

// llc_init parameters of a one-process job on node nodes[0].
inline llc_init_params_t solo_params(const int *nodes, const char *job_id = "init-test")
{
    llc_init_params_t p{};
    p.api_version = LLC_API_VERSION;
    p.rank = 0;
    p.size = 1;
    p.node_of_rank = nodes;
    p.job_id = process_job_id(job_id);
    p.boot.put = solo_put;
    p.boot.get = solo_get;
    p.boot.fence = solo_fence;
    return p;
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

// Two processes on two emulated nodes of this host, over tcp / over udp (loopback).
inline JobOptions tcp_pair_job()
{
    JobOptions o = job({0, 1});
    o.env = {{"LLC_TCP_ADDR", "127.0.0.1"}};
    return o;
}

inline JobOptions udp_pair_job()
{
    JobOptions o = job({0, 1});
    o.env = {{"LLC_NET", "udp"}, {"LLC_TCP_ADDR", "127.0.0.1"}, {"LLC_UDP_ADDR", "127.0.0.1"}};
    return o;
}

// The leaving rank of a peer-death test: one message to `to`, wait for the
// one `to` sends back (counted in got), 0.2 s more of progress so that `to`
// has the acknowledgement of ours, then leave the job's fences.  The caller
// then goes silent or exits.
inline void greet_then_depart(TestProcess &p, llc_context_t *ctx, int to, const int &got)
{
    EXPECT_EQ(llc_am_send(ctx, to, 1, nullptr, 0, nullptr, 0, nullptr, nullptr), LLC_OK);
    progress_until(ctx, [&] { return got == 1; });
    double end = now_s() + 0.2;
    while (now_s() < end)
        llc_progress(ctx, nullptr);
    p.depart();
}

// Send 1 MiB (more than a udp window) to dest with handler 1 and progress
// until llc_progress reports an error or 10 s pass.
struct SendToGonePeer {
    int err = LLC_OK;  // what llc_progress returned
    double took = 0;   // seconds until then
    int callbacks = 0; // completions of the send (one more llc_progress call after the error)
    int status = LLC_OK;
};
inline SendToGonePeer send_big_until_error(llc_context_t *ctx, int dest)
{
    SendToGonePeer r;
    std::vector<char> big(1 << 20, 'b');
    llc_iov_t iov{big.data(), big.size()};
    int rc = llc_am_send(ctx, dest, 1, nullptr, 0, &iov, 1,
                         [](void *arg, int status) {
                             auto *q = static_cast<SendToGonePeer *>(arg);
                             q->callbacks++;
                             q->status = status;
                         },
                         &r);
    EXPECT_EQ(rc, LLC_INPROGRESS); // 1 MiB does not fit in the window
    double start = now_s();
    while (r.err == LLC_OK && now_s() - start < 10)
        r.err = llc_progress(ctx, nullptr);
    r.took = now_s() - start;
    llc_progress(ctx, nullptr);
    return r;
}

} // namespace llctest
