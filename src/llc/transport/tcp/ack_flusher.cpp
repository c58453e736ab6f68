// ack_flusher.cpp - see ack_flusher.hpp.
#include "transport/tcp/ack_flusher.hpp"

#include <pthread.h>
#include <signal.h>

#include <chrono>

namespace llc {

AckFlusher::AckFlusher(std::recursive_mutex &lock, uint64_t period_us, uint64_t alive_period_us,
                       std::function<bool()> flush, std::function<void()> keep_alive)
    : lock_(lock), period_us_(period_us), alive_period_us_(alive_period_us), flush_(std::move(flush)),
      keep_alive_(std::move(keep_alive))
{
    // The thread blocks every signal (it inherits the mask it is created
    // with): the application's handlers keep running on its own threads.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    try {
        thread_ = std::thread([this] { run(); });
    } catch (...) {
        pthread_sigmask(SIG_SETMASK, &old, nullptr);
        throw;
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

AckFlusher::~AckFlusher()
{
    {
        std::lock_guard<std::mutex> g(stop_mu_);
        stop_ = true;
    }
    stop_cv_.notify_one();
    thread_.join();
}

void AckFlusher::run()
{
    std::unique_lock<std::mutex> s(stop_mu_);
    uint64_t since_alive_us = 0;
    for (;;) {
        stop_cv_.wait_for(s, std::chrono::microseconds(period_us_), [this] { return stop_; });
        if (stop_)
            return;
        since_alive_us += period_us_;
        const bool held = held_.load(std::memory_order_relaxed);
        const bool alive_due = since_alive_us >= alive_period_us_;
        if (!held && !alive_due)
            continue;
        std::unique_lock<std::recursive_mutex> l(lock_, std::try_to_lock);
        if (!l.owns_lock())
            continue; // the process is inside the transport: it writes them itself
        if (held) {
            held_.store(false, std::memory_order_relaxed);
            if (flush_())
                held_.store(true, std::memory_order_relaxed);
            flushes_.fetch_add(1, std::memory_order_relaxed);
        }
        if (alive_due) {
            since_alive_us = 0;
            keep_alive_();
        }
    }
}

} // namespace llc
