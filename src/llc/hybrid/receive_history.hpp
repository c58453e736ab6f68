// receive_history.hpp - what the receiver-driven hybrid remembers of one
// source: its receive count in each period, as far back as the paper keeps
// it, and what the policy reads from it.
//
// The paper records, per source and per period, the number of messages
// received as a 64-bit integer, for 1024 periods while the job has at most
// 2^13 processes and for fewer above (history_periods()), so that a dense
// table of every source would stay at 64 MiB per process.  Here only the
// sources the receiver has heard from are tracked (Context::sources_, capped
// at LLC_MAX_CONTEXTS), each with its own ring of that many periods:
// periods x 8 bytes per tracked source (8 KiB with the defaults).  A ring
// starts at kRecent periods (64 bytes) and grows to its full length when
// the source is heard in a second period: a source heard once (one
// all-pairs exchange, say) costs 64 bytes and is forgotten after kRecent
// quiet periods, and only a recurring one pays for the long history.
//
// Two readings of the history feed the policy:
//   load():       the recent periods, newest first with weights 1, 1/2,
//                 1/4, ... over kRecent - 1 closed periods (the short-term
//                 predictor; the same quantity as the sender driver's score);
//   recurrence(): the count the long history predicts for the next period
//                 when the source's on/off pattern has repeated with a fixed
//                 cycle over the last kCycles cycles (a source that sends a
//                 burst every K periods is predicted to send one again one
//                 cycle after the last, so the policy can move it before the
//                 burst instead of after it).
// Message sizes are kept for the recent periods only (the mean size).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace llc {

// The paper's number of periods per source for a job of p processes:
// 1024 if p <= 2^13, else 1024 / 2^(ceil(log2 p) - 13), and never fewer
// than ReceiveHistory::kRecent (the short-term predictor's span).
size_t history_periods(uint64_t p);

class ReceiveHistory {
public:
    static constexpr size_t kRecent = 8;  // periods load() and mean_bytes() read (the open one included)
    static constexpr size_t kCycles = 3;  // repetitions a recurrence needs

    // periods: how many periods the ring keeps once the source has been
    // heard in two periods (at least kRecent; kRecent until then).
    explicit ReceiveHistory(size_t periods = kRecent);

    void record(uint64_t bytes);
    // Ends the current period: it becomes the most recent closed one.
    void close_period();

    // Messages in the period age periods ago (0: the open one; 0 beyond the history).
    uint64_t count_ago(size_t age) const;
    uint64_t current_count() const { return count_ago(0); }

    // Weighted load of the recent closed periods (see the top of the file).
    double load() const;
    // Mean message size over the recent closed periods (0 if none).
    double mean_bytes() const { return mean_bytes_from(1); }
    // The same with the open period counted too (weight 1, as the newest
    // closed one): what a source's history says right now, between periods.
    double load_now() const { return load() + double(count_ago(0)); }
    double mean_bytes_now() const { return mean_bytes_from(0); }

    // The count predicted for the next period by a repeating on/off pattern,
    // and the cycle (in periods) it repeats with; {0, 0} if there is none.
    // A cycle K qualifies when the activity (count > 0) of each of the last
    // K closed periods matches that of the same period one and two cycles
    // earlier (a quarter of the positions may differ, for bursts that
    // straddle a period boundary), the cycle contains a quiet period (a
    // source busy throughout is load()'s business), and the periods one,
    // two and three cycles back (those that line up with the next one) all
    // had messages; the prediction is the least of those three counts.
    // The shortest qualifying cycle wins.
    struct Recurrence {
        uint64_t count = 0;
        size_t cycle = 0;
    };
    Recurrence recurrence() const;
    // What the policy reads: the larger of load() and recurrence().count.
    double predicted_load() const;

    // No message in any period kept.
    bool quiet() const { return !heard_ || closed_ - last_heard_ >= counts_.size(); }

    size_t periods() const { return counts_.size(); } // now (kRecent until the ring has grown)
    size_t full_periods() const { return full_; }
    // Heap bytes of the ring (for the memory report).
    size_t heap_bytes() const { return counts_.capacity() * sizeof(uint64_t); }

private:
    bool active(size_t age) const { return count_ago(age) != 0; }
    bool pattern_repeats(size_t cycle) const;
    double mean_bytes_from(size_t first_age) const;
    void grow();

    size_t full_;                            // periods once grown
    std::vector<uint64_t> counts_;           // counts_[closed_ % periods()] is the open period
    std::array<uint64_t, kRecent> bytes_{};  // bytes_[closed_ % kRecent] is the open period
    uint64_t closed_ = 0;                    // periods closed so far
    uint64_t last_heard_ = 0;                // closed_ when the latest message was recorded
    bool heard_ = false;
};

} // namespace llc
