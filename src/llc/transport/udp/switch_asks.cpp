// switch_asks.cpp - see switch_asks.hpp.
#include "transport/udp/switch_asks.hpp"

#include <algorithm>

namespace llc {

SwitchAsks::Ask &SwitchAsks::add(int dest, uint64_t number, uint64_t want, const sockaddr_in &addr, uint64_t now_us,
                                 uint64_t detail)
{
    auto it = std::find_if(asks_.begin(), asks_.end(), [dest](const Ask &a) { return a.dest == dest; });
    if (it == asks_.end()) {
        asks_.emplace_back();
        it = asks_.end() - 1;
    }
    *it = Ask{dest, number, want, addr, detail, now_us, 0};
    return *it;
}

bool SwitchAsks::answered(int src, uint64_t number, uint64_t *want)
{
    // false: a duplicate answer, or one to an ask that was replaced
    return remove_first([&](const Ask &a) {
        if (a.dest != src || a.number != number)
            return false;
        if (want)
            *want = a.want;
        return true;
    });
}

void SwitchAsks::drop(int dest)
{
    remove_first([dest](const Ask &a) { return a.dest == dest; });
}

} // namespace llc
