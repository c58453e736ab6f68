// idle_hook_test.cpp - llc_set_idle_hook: an idle llc_progress hands its
// yields and sleeps to the caller's hook once it has left the context, so
// that another thread can use the context while the caller's lock is free.
#include "common/test_util.hpp"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

using namespace llctest;

namespace {

// A one-process job: messages to itself go through the self transport.
struct SoloContext {
    int nodes[1] = {0};
    llc_context_t *ctx = nullptr;
    SoloContext()
    {
        llc_init_params_t p = solo_params(nodes, "idle-hook-test");
        EXPECT_EQ(llc_init(&p, &ctx), LLC_OK) << llc_last_error(nullptr);
    }
    ~SoloContext()
    {
        if (ctx)
            finalize_ok(ctx);
    }
};

// Settings for one test, restored after it.
struct ScopedEnv {
    std::vector<std::string> names;
    void set(const char *name, const char *value)
    {
        setenv(name, value, 1);
        names.push_back(name);
    }
    ~ScopedEnv()
    {
        for (auto &n : names)
            unsetenv(n.c_str());
    }
};

// The caller's side: a lock the hook releases while it waits, as an MPI
// library's global critical section; another thread sends to ourselves
// under the same lock while the waiting thread is in the hook.
struct Caller {
    std::mutex lock;
    llc_context_t *ctx = nullptr;
    std::vector<unsigned> calls; // sleep_us of each hook call
    int take = 1;                // what the hook returns
    int sends_in_hook = 0;       // sends made by the other thread
    int send_failures = 0;

    static int hook(void *arg, unsigned sleep_us)
    {
        auto *c = static_cast<Caller *>(arg);
        c->calls.push_back(sleep_us);
        if (!c->take)
            return 0;
        c->lock.unlock();
        if (c->sends_in_hook < 3) {
            std::thread other([c] {
                std::lock_guard<std::mutex> g(c->lock);
                int v = 7;
                int rc = llc_am_send(c->ctx, 0, 3, &v, sizeof(v), nullptr, 0, nullptr, nullptr);
                if (rc != LLC_OK)
                    c->send_failures++;
                else
                    c->sends_in_hook++;
            });
            other.join();
        }
        if (sleep_us == 0)
            sched_yield();
        else
            usleep(sleep_us);
        c->lock.lock();
        return 1;
    }
};

} // namespace

TEST(IdleHook, YieldsAndSleepsGoToTheHookOutsideTheContext)
{
    ScopedEnv env;
    env.set("LLC_SPIN_COUNT", "2");
    env.set("LLC_IDLE_SLEEP_US", "0");
    env.set("LLC_SLEEP_US", "250");
    Caller caller; // outlives the context: llc_finalize must not call its hook
    SoloContext solo;
    ASSERT_NE(solo.ctx, nullptr);
    caller.ctx = solo.ctx;
    int got = 0;
    ASSERT_EQ(llc_am_register(solo.ctx, 3, count_message, &got), LLC_OK);
    ASSERT_EQ(llc_set_idle_hook(solo.ctx, Caller::hook, &caller), LLC_OK);

    llc_stats_t before;
    ASSERT_EQ(llc_get_stats(solo.ctx, &before), LLC_OK);
    std::lock_guard<std::mutex> g(caller.lock);
    // 2 spins, then a yield (the first idle call after the spins), then
    // sleeps; the other thread's sends (made inside the hook, while the
    // context is left) are delivered by the calls after.
    for (int i = 0; i < 40 && got < 3; i++)
        ASSERT_EQ(llc_progress(solo.ctx, nullptr), LLC_OK) << llc_last_error(solo.ctx);
    EXPECT_EQ(caller.send_failures, 0) << llc_last_error(solo.ctx);
    EXPECT_EQ(caller.sends_in_hook, 3);
    EXPECT_EQ(got, 3);
    ASSERT_GE(caller.calls.size(), 2u);
    EXPECT_EQ(caller.calls[0], 250u) << "LLC_IDLE_SLEEP_US=0: the first idle action after the spins is a sleep";
    for (unsigned us : caller.calls)
        EXPECT_TRUE(us == 0 || us == 250u) << us;

    llc_stats_t after;
    ASSERT_EQ(llc_get_stats(solo.ctx, &after), LLC_OK);
    EXPECT_EQ(after.idle_sleeps + after.idle_yields - before.idle_sleeps - before.idle_yields, caller.calls.size())
        << "every wait the hook took is counted";
    ASSERT_EQ(llc_set_idle_hook(solo.ctx, nullptr, nullptr), LLC_OK);
    const size_t n = caller.calls.size();
    for (int i = 0; i < 5; i++)
        ASSERT_EQ(llc_progress(solo.ctx, nullptr), LLC_OK);
    EXPECT_EQ(caller.calls.size(), n) << "a removed hook is not called";
}

TEST(IdleHook, YieldBeforeSleepAndAHookThatDeclines)
{
    ScopedEnv env;
    env.set("LLC_SPIN_COUNT", "1");
    env.set("LLC_IDLE_SLEEP_US", "1000000"); // only yields within this test
    Caller caller; // outlives the context: llc_finalize must not call its hook
    SoloContext solo;
    ASSERT_NE(solo.ctx, nullptr);
    caller.ctx = solo.ctx;
    caller.take = 0; // llc_progress waits itself
    ASSERT_EQ(llc_set_idle_hook(solo.ctx, Caller::hook, &caller), LLC_OK);
    llc_stats_t before, after;
    ASSERT_EQ(llc_get_stats(solo.ctx, &before), LLC_OK);
    for (int i = 0; i < 5; i++)
        ASSERT_EQ(llc_progress(solo.ctx, nullptr), LLC_OK);
    ASSERT_EQ(llc_get_stats(solo.ctx, &after), LLC_OK);
    // call 1 spins; calls 2..5 yield, offered to the hook first
    ASSERT_EQ(caller.calls.size(), 4u);
    for (unsigned us : caller.calls)
        EXPECT_EQ(us, 0u);
    EXPECT_EQ(after.idle_yields - before.idle_yields, 4u) << "a declined wait is still taken, by llc_progress";
    EXPECT_EQ(caller.sends_in_hook, 0);
    const size_t n = caller.calls.size();
    llc_context_t *ctx = solo.ctx;
    solo.ctx = nullptr;
    finalize_ok(ctx);
    EXPECT_EQ(caller.calls.size(), n) << "llc_finalize's own progress keeps the caller's lock";
}

TEST(IdleHook, NullContextIsAnError)
{
    EXPECT_EQ(llc_set_idle_hook(nullptr, Caller::hook, nullptr), LLC_ERR_INVALID);
}

// llc_note_activity: progress the caller made on its own ends the wait; the
// next idle calls spin again before they yield.
TEST(IdleHook, NoteActivityStartsANewWait)
{
    ScopedEnv env;
    env.set("LLC_SPIN_COUNT", "2");
    env.set("LLC_IDLE_SLEEP_US", "1000000"); // only yields within this test
    env.set("LLC_IDLE_AWAY_US", "0");         // gaps between the calls do not count
    Caller caller;
    SoloContext solo;
    ASSERT_NE(solo.ctx, nullptr);
    caller.ctx = solo.ctx;
    caller.take = 0;
    ASSERT_EQ(llc_set_idle_hook(solo.ctx, Caller::hook, &caller), LLC_OK);
    for (int i = 0; i < 4; i++)
        ASSERT_EQ(llc_progress(solo.ctx, nullptr), LLC_OK);
    EXPECT_EQ(caller.calls.size(), 2u) << "2 spins, then yields";
    ASSERT_EQ(llc_note_activity(solo.ctx), LLC_OK);
    for (int i = 0; i < 2; i++)
        ASSERT_EQ(llc_progress(solo.ctx, nullptr), LLC_OK);
    EXPECT_EQ(caller.calls.size(), 2u) << "after llc_note_activity the idle calls spin again";
    ASSERT_EQ(llc_progress(solo.ctx, nullptr), LLC_OK);
    EXPECT_EQ(caller.calls.size(), 3u) << "and yield after LLC_SPIN_COUNT of them";
    EXPECT_EQ(llc_note_activity(nullptr), LLC_ERR_INVALID);
}
