// verbs_credits.cpp - see verbs_credits.hpp.
#include "transport/verbs/verbs_credits.hpp"

namespace llc {

bool SendCredits::consume()
{
    if (available_ == 0) {
        stalls_++;
        return false;
    }
    available_--;
    return true;
}

bool SendCredits::on_return(uint32_t n)
{
    if (n > initial_ - available_)
        return false;
    available_ += n;
    return true;
}

bool RecvCredits::on_frame()
{
    if (outstanding_ >= initial_)
        return false;
    outstanding_++;
    return true;
}

void RecvCredits::on_buffer_reposted()
{
    if (owed_ < outstanding_)
        owed_++;
}

uint32_t RecvCredits::take_return(bool flush)
{
    if (owed_ == 0 || (owed_ < batch_ && !flush))
        return 0;
    uint32_t n = owed_;
    owed_ = 0;
    outstanding_ -= n;
    return n;
}

} // namespace llc
