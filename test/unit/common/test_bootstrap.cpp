// test_bootstrap.cpp - shared-memory KVS + barrier, and the fork/wait harness.
#include "common/test_bootstrap.hpp"

#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

namespace llctest {

namespace {
constexpr int kMaxEntries = 1024;
constexpr unsigned kFenceTimeoutS = 60;
std::atomic<int> job_counter{0};

uint64_t now_ms()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000 + uint64_t(ts.tv_nsec) / 1000000;
}
} // namespace

struct TestProcess::Shared {
    struct Entry {
        int rank;
        char key[65];
        size_t len;
        char value[1024];
    };
    pthread_mutex_t lock;
    int size;
    int arrived;
    int departed;
    unsigned generation;
    int nentries;
    long puts, gets, fences;
    Entry entries[kMaxEntries];
};

llc_init_params_t TestProcess::params()
{
    llc_init_params_t p{};
    p.api_version = LLC_API_VERSION;
    p.rank = rank;
    p.size = size;
    p.node_of_rank = nodes.data();
    p.job_id = job_id.c_str();
    p.boot.arg = this;
    p.boot.put = &TestProcess::put;
    p.boot.get = &TestProcess::get;
    p.boot.fence = &TestProcess::fence;
    p.boot.allgather = nullptr;
    return p;
}

int TestProcess::put(void *arg, const char *key, const void *value, size_t len)
{
    auto *self = static_cast<TestProcess *>(arg);
    Shared *s = self->shared;
    if (std::strlen(key) > 64 || len > 1024)
        return -1;
    pthread_mutex_lock(&s->lock);
    s->puts++;
    int rc = -1;
    if (s->nentries < kMaxEntries) {
        Shared::Entry &e = s->entries[s->nentries++];
        e.rank = self->rank;
        std::strcpy(e.key, key);
        e.len = len;
        std::memcpy(e.value, value, len);
        rc = 0;
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

int TestProcess::get(void *arg, int src_rank, const char *key, void *value, size_t *len)
{
    auto *self = static_cast<TestProcess *>(arg);
    pthread_mutex_lock(&self->shared->lock);
    self->shared->gets++;
    pthread_mutex_unlock(&self->shared->lock);
    auto o = self->overrides_.find({src_rank, key});
    if (o != self->overrides_.end()) {
        if (o->second.size() > *len)
            return -1;
        std::memcpy(value, o->second.data(), o->second.size());
        *len = o->second.size();
        return 0;
    }
    Shared *s = self->shared;
    int rc = -1;
    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < s->nentries; i++) {
        const Shared::Entry &e = s->entries[i];
        if (e.rank == src_rank && std::strcmp(e.key, key) == 0 && e.len <= *len) {
            std::memcpy(value, e.value, e.len);
            *len = e.len;
            rc = 0;
            break;
        }
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

int TestProcess::fence(void *arg) { return fence_polling(arg, {}); }

int TestProcess::fence_polling(void *arg, const std::function<void()> &poll)
{
    Shared *s = static_cast<TestProcess *>(arg)->shared;
    pthread_mutex_lock(&s->lock);
    unsigned my_generation = s->generation;
    s->arrived++;
    s->fences++;
    pthread_mutex_unlock(&s->lock);
    uint64_t deadline = now_ms() + kFenceTimeoutS * 1000;
    for (;;) {
        pthread_mutex_lock(&s->lock);
        if (s->generation != my_generation) {
            pthread_mutex_unlock(&s->lock);
            return 0;
        }
        if (s->arrived >= s->size - s->departed) {
            s->arrived = 0;
            s->generation++;
            pthread_mutex_unlock(&s->lock);
            return 0;
        }
        pthread_mutex_unlock(&s->lock);
        if (now_ms() > deadline)
            return -1;
        if (poll)
            poll();
        else
            usleep(50);
    }
}

void TestProcess::depart()
{
    pthread_mutex_lock(&shared->lock);
    shared->departed++;
    pthread_mutex_unlock(&shared->lock);
}

std::string join_lines(const std::vector<std::string> &lines)
{
    std::string out;
    for (const auto &l : lines)
        out += l + "\n";
    return out;
}

std::vector<std::string> run_job(const JobOptions &options, const std::function<void(TestProcess &)> &body)
{
    int size = int(options.nodes.size());
    int children = options.processes > 0 && options.processes < size ? options.processes : size;
    size_t bytes = sizeof(TestProcess::Shared);
    void *mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return {"mmap of the test bootstrap region failed"};
    auto *shared = new (mem) TestProcess::Shared;
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
    pthread_mutex_init(&shared->lock, &attr);
    pthread_mutexattr_destroy(&attr);
    shared->size = children;
    shared->arrived = shared->departed = shared->nentries = 0;
    shared->generation = 0;
    shared->puts = shared->gets = shared->fences = 0;

    std::string job_id = "gtest-" + std::to_string(getpid()) + "-" + std::to_string(job_counter++);
    std::fflush(stdout);
    std::fflush(stderr);
    std::vector<pid_t> pids(size_t(children), -1);
    for (int r = 0; r < children; r++) {
        pid_t pid = fork();
        if (pid == 0) {
            alarm(options.timeout_s);
            for (const auto &kv : options.env)
                setenv(kv.first.c_str(), kv.second.c_str(), 1);
            TestProcess proc;
            proc.rank = r;
            proc.size = size;
            proc.nodes = options.nodes;
            proc.job_id = job_id;
            proc.shared = shared;
            body(proc);
            bool failed = ::testing::Test::HasFailure();
            if (failed)
                std::fprintf(stderr, "[child rank %d of %d failed]\n", r, size);
            std::fflush(stdout);
            std::fflush(stderr);
            _exit(failed ? 1 : 0);
        }
        pids[r] = pid;
    }
    std::vector<std::string> failures;
    for (int r = 0; r < children; r++) {
        int status = 0;
        if (pids[r] < 0) {
            failures.push_back("rank " + std::to_string(r) + ": fork failed");
            continue;
        }
        waitpid(pids[r], &status, 0);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
            continue;
        if (WIFSIGNALED(status))
            failures.push_back("rank " + std::to_string(r) + ": killed by signal " + std::to_string(WTERMSIG(status)) +
                               (WTERMSIG(status) == SIGALRM ? " (SIGALRM: timed out)" : ""));
        else
            failures.push_back("rank " + std::to_string(r) + ": exit status " + std::to_string(WEXITSTATUS(status)));
    }
    if (options.counts) {
        options.counts->puts = shared->puts;
        options.counts->gets = shared->gets;
        options.counts->fences = shared->fences;
    }
    pthread_mutex_destroy(&shared->lock);
    munmap(mem, bytes);
    return failures;
}

} // namespace llctest
