// verbs_recv_pool.cpp - see verbs_recv_pool.hpp.
#include "transport/verbs/verbs_recv_pool.hpp"

#include <algorithm>
#include <stdexcept>

namespace llc {

RecvBufferPool::RecvBufferPool(size_t count, size_t buffer_bytes, size_t post_bound)
    : buffer_bytes_(buffer_bytes), post_bound_(post_bound)
{
    if (count == 0 || buffer_bytes == 0 || post_bound == 0 || post_bound > count || count > UINT32_MAX)
        throw std::invalid_argument("RecvBufferPool: need 0 < post_bound <= count (< 2^32) and buffer_bytes > 0");
    states_.assign(count, State::Idle);
    used_before_.assign(count, 0);
    idle_.resize(count);
    for (size_t i = 0; i < count; i++)
        idle_[i] = uint32_t(i);
    idle_count_ = count;
}

size_t RecvBufferPool::postable() const { return std::min(idle_count_, post_bound_ - posted_); }

void RecvBufferPool::push_idle(uint32_t id)
{
    idle_[(idle_head_ + idle_count_) % idle_.size()] = id;
    idle_count_++;
}

std::vector<uint32_t> RecvBufferPool::take_to_post(size_t max)
{
    size_t n = std::min(max, postable());
    std::vector<uint32_t> ids;
    ids.reserve(n);
    for (size_t i = 0; i < n; i++) {
        uint32_t id = idle_[idle_head_];
        idle_head_ = (idle_head_ + 1) % idle_.size();
        idle_count_--;
        states_[id] = State::Posted;
        if (used_before_[id])
            reposts_++;
        posted_++;
        ids.push_back(id);
    }
    return ids;
}

bool RecvBufferPool::unpost(uint32_t id)
{
    if (id >= states_.size() || states_[id] != State::Posted) {
        refused_++;
        return false;
    }
    states_[id] = State::Idle;
    posted_--;
    if (used_before_[id])
        reposts_--;
    push_idle(id);
    return true;
}

bool RecvBufferPool::on_completion(uint32_t id)
{
    if (id >= states_.size() || states_[id] != State::Posted) {
        refused_++;
        return false;
    }
    states_[id] = State::Consumed;
    used_before_[id] = 1;
    posted_--;
    consumed_++;
    return true;
}

bool RecvBufferPool::release(uint32_t id)
{
    if (id >= states_.size() || states_[id] != State::Consumed) {
        refused_++;
        return false;
    }
    states_[id] = State::Idle;
    consumed_--;
    push_idle(id);
    return true;
}

} // namespace llc
