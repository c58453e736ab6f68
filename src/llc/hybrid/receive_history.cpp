// receive_history.cpp - one source's per-period receive counts and the two
// predictors the receiver-driven hybrid reads from them.
#include "hybrid/receive_history.hpp"

#include <algorithm>

namespace llc {

size_t history_periods(uint64_t p)
{
    constexpr size_t kPaperPeriods = 1024;
    constexpr unsigned kFullUpToLog2 = 13; // 2^13 processes x 1024 periods x 8 B = 64 MiB
    unsigned log2_ceil = 0;
    while (log2_ceil < 63 && (uint64_t(1) << log2_ceil) < p)
        log2_ceil++;
    size_t periods = kPaperPeriods;
    if (log2_ceil > kFullUpToLog2)
        periods = log2_ceil - kFullUpToLog2 >= 10 ? 1 : kPaperPeriods >> (log2_ceil - kFullUpToLog2);
    return std::max(periods, ReceiveHistory::kRecent);
}

ReceiveHistory::ReceiveHistory(size_t periods) : full_(std::max(periods, kRecent)), counts_(kRecent, 0) {}

// The ring of kRecent periods becomes one of full_ periods, keeping every
// period it holds (ages 0 .. kRecent - 1).
void ReceiveHistory::grow()
{
    std::vector<uint64_t> longer(full_, 0);
    for (uint64_t age = 0; age < kRecent && age <= closed_; age++)
        longer[(closed_ - age) % full_] = counts_[(closed_ - age) % kRecent];
    counts_.swap(longer);
}

void ReceiveHistory::record(uint64_t bytes)
{
    // Heard in a second period (the first may have left the short ring:
    // the long history starts from what the short one still holds).
    if (counts_.size() < full_ && heard_ && last_heard_ != closed_)
        grow();
    counts_[closed_ % counts_.size()]++;
    bytes_[closed_ % kRecent] += bytes;
    last_heard_ = closed_;
    heard_ = true;
}

void ReceiveHistory::close_period()
{
    closed_++;
    counts_[closed_ % counts_.size()] = 0;
    bytes_[closed_ % kRecent] = 0;
}

uint64_t ReceiveHistory::count_ago(size_t age) const
{
    if (age >= counts_.size() || age > closed_)
        return 0;
    return counts_[(closed_ - age) % counts_.size()];
}

double ReceiveHistory::load() const
{
    double sum = 0, weight = 1;
    for (size_t age = 1; age < kRecent; age++) {
        sum += weight * double(count_ago(age));
        weight /= 2;
    }
    return sum;
}

// Mean message size over ages first_age .. kRecent - 1 (0 if no message).
double ReceiveHistory::mean_bytes_from(size_t first_age) const
{
    uint64_t msgs = 0, bytes = 0;
    for (size_t age = first_age; age < kRecent && age <= closed_; age++) {
        msgs += count_ago(age);
        bytes += bytes_[(closed_ - age) % kRecent];
    }
    return msgs ? double(bytes) / double(msgs) : 0.0;
}

// Cycles 1, 2 and 3 back (ages 1..K, K+1..2K, 2K+1..3K) agree on which
// periods had messages, each with the next one, up to K / 4 positions.
bool ReceiveHistory::pattern_repeats(size_t cycle) const
{
    const size_t allowed = cycle / 4;
    for (size_t back = 0; back + 1 < kCycles; back++) {
        size_t differ = 0;
        for (size_t i = 1; i <= cycle; i++) {
            size_t age = back * cycle + i;
            if (active(age) != active(age + cycle) && ++differ > allowed)
                return false;
        }
    }
    return true;
}

ReceiveHistory::Recurrence ReceiveHistory::recurrence() const
{
    // Ages 1 .. depth are closed periods still in the ring.
    const size_t depth = size_t(std::min<uint64_t>(closed_, counts_.size() - 1));
    size_t first_quiet = 0; // youngest closed period without messages (0: none within depth)
    for (size_t age = 1; age <= depth; age++) {
        if (!active(age)) {
            first_quiet = age;
            break;
        }
    }
    if (first_quiet == 0)
        return {};
    for (size_t cycle = std::max<size_t>(2, first_quiet); cycle * kCycles <= depth; cycle++) {
        uint64_t least = count_ago(cycle);
        for (size_t k = 2; k <= kCycles && least != 0; k++)
            least = std::min(least, count_ago(k * cycle));
        if (least != 0 && pattern_repeats(cycle))
            return {least, cycle};
    }
    return {};
}

double ReceiveHistory::predicted_load() const
{
    return std::max(load(), double(recurrence().count));
}

} // namespace llc
