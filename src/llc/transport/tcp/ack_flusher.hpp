// ack_flusher.hpp - a thread that answers for a process that has left the
// library: it writes the StreamAcks the process holds back, and it tells
// the senders of bytes the process has not read yet that it is alive
// (tcp_transport.hpp, "Held acknowledgements" and "Computing receivers").
//
// The transport holds a StreamAck owed on a connection that carries both
// directions, so that the next record it writes there carries it in the
// same sendmsg.  A process that reads a message and then computes for a long
// time without calling into the library would leave that acknowledgement
// unwritten, and its peer would take it for stopped.  This thread wakes
// every `period_us`; if the transport said it holds some (note_held) and its
// lock is free (the process is not inside the transport), it calls `flush`
// with the lock held.  While the process is inside the transport it holds
// the lock and writes them itself.
//
// Every `alive_period_us` it also calls `keep_alive` with the lock held
// (when free): a process that computes before it reads what was sent to it
// is alive, and only a process whose threads all stopped (SIGSTOP, a
// debugger) leaves its senders without an answer.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

namespace llc {

class AckFlusher {
public:
    // flush(): called with `lock` held; returns true if acknowledgements are
    // still held afterwards.  keep_alive(): called with `lock` held every
    // alive_period_us (rounded up to a multiple of period_us).
    AckFlusher(std::recursive_mutex &lock, uint64_t period_us, uint64_t alive_period_us, std::function<bool()> flush,
               std::function<void()> keep_alive);
    ~AckFlusher(); // stops and joins the thread
    AckFlusher(const AckFlusher &) = delete;
    AckFlusher &operator=(const AckFlusher &) = delete;

    void note_held() { held_.store(true, std::memory_order_relaxed); }
    uint64_t period_us() const { return period_us_; }
    uint64_t flushes() const { return flushes_.load(std::memory_order_relaxed); }

private:
    void run();

    std::recursive_mutex &lock_;
    const uint64_t period_us_;
    const uint64_t alive_period_us_;
    std::function<bool()> flush_;
    std::function<void()> keep_alive_;
    std::atomic<bool> held_{false};
    std::atomic<uint64_t> flushes_{0};
    std::mutex stop_mu_;
    std::condition_variable stop_cv_;
    bool stop_ = false;
    std::thread thread_;
};

} // namespace llc
