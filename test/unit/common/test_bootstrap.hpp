// test_bootstrap.hpp - runs a "job" of forked child processes for libllc tests.
//
// The children share an anonymous MAP_SHARED region holding a key-value store
// and a barrier (process-shared mutex + polling), which back the
// llc_bootstrap_ops_t given to llc_init.  Each child runs the test body with
// an alarm() armed, so a hang fails the test instead of blocking CI.  GoogleTest
// assertions work inside the body: a child exits non-zero if any failed.
#pragma once

#include "llc.h"

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace llctest {

// Bootstrap calls made by all the children of a job (filled in by run_job).
struct BootstrapCounts {
    long puts = 0;
    long gets = 0;   // including failed ones
    long fences = 0; // fence calls (one per process per fence)
};

struct JobOptions {
    std::vector<int> nodes;                                // node_of_rank; its size is the job size
    int processes = 0;                                     // children to fork, ranks 0..processes-1 (0: all);
                                                           // the other ranks never run (fences count the children)
    unsigned timeout_s = 60;                               // alarm() in every child
    std::vector<std::pair<std::string, std::string>> env;  // set in the children before the body
    BootstrapCounts *counts = nullptr;                     // if set, receives the job's bootstrap call counts
};

class TestProcess {
public:
    int rank = 0;
    int size = 0;
    std::vector<int> nodes;
    std::string job_id;

    // Parameters for llc_init using this job's bootstrap.
    llc_init_params_t params();
    // This process leaves without llc_finalize: later fences do not wait for it.
    void depart();
    // Make this process's bootstrap get of (src_rank, key) return `value`.
    void override_key(int src_rank, const std::string &key, const std::string &value)
    {
        overrides_[{src_rank, key}] = value;
    }

    // bootstrap callbacks
    static int put(void *arg, const char *key, const void *value, size_t len);
    static int get(void *arg, int src_rank, const char *key, void *value, size_t *len);
    static int fence(void *arg);
    // The same barrier, calling poll() while it waits: a test body that has
    // a context passes its llc_progress, so that a peer still waiting on
    // this process (for an acknowledgement over udp, say) is answered
    // instead of timing out while both wait for each other.
    static int fence_polling(void *arg, const std::function<void()> &poll);

    struct Shared;
    Shared *shared = nullptr;

private:
    std::map<std::pair<int, std::string>, std::string> overrides_;
};

// Fork nodes.size() (or options.processes) children running body; returns one line per failed child
// (empty when all exited 0).
std::vector<std::string> run_job(const JobOptions &options, const std::function<void(TestProcess &)> &body);

// Convenience: run and assert that every child succeeded.
#define LLC_EXPECT_JOB_OK(options, ...)                                                        \
    do {                                                                                       \
        auto llc_failures_ = ::llctest::run_job((options), (__VA_ARGS__));                     \
        EXPECT_TRUE(llc_failures_.empty()) << ::llctest::join_lines(llc_failures_);            \
    } while (0)

std::string join_lines(const std::vector<std::string> &lines);

} // namespace llctest
