// udp_ring_landing.cpp - slot bookkeeping of a ring-addressed udp stream.
#include "transport/udp/udp_ring_landing.hpp"

#include <cstring>

namespace llc {

UdpRingLanding::UdpRingLanding(char *base, size_t slots, size_t slot_bytes)
    : base_(base), slot_bytes_(slot_bytes), psn_(slots, kEmpty), len_(slots, 0)
{
}

bool UdpRingLanding::fits(uint64_t psn, uint32_t slot, size_t len, uint64_t rx_next) const
{
    const size_t n = psn_.size();
    return n != 0 && psn >= rx_next && psn - rx_next < n && slot == psn % n && len <= slot_bytes_ &&
           psn_[slot] == kEmpty;
}

void UdpRingLanding::land(uint64_t psn, const char *data, size_t len)
{
    const size_t s = size_t(psn % psn_.size());
    std::memcpy(base_ + s * slot_bytes_, data, len);
    psn_[s] = psn;
    len_[s] = uint32_t(len);
    occupied_++;
}

bool UdpRingLanding::holds(uint64_t psn) const { return !psn_.empty() && psn_[psn % psn_.size()] == psn; }

const char *UdpRingLanding::find(uint64_t psn, size_t &len) const
{
    if (!holds(psn))
        return nullptr;
    const size_t s = size_t(psn % psn_.size());
    len = len_[s];
    return base_ + s * slot_bytes_;
}

void UdpRingLanding::release(uint64_t psn)
{
    if (!holds(psn))
        return;
    psn_[psn % psn_.size()] = kEmpty;
    occupied_--;
}

uint64_t UdpRingLanding::sack_bits(uint64_t rx_next) const
{
    uint64_t bits = 0;
    if (occupied_ == 0)
        return 0;
    for (uint64_t psn : psn_) {
        if (psn == kEmpty || psn <= rx_next || psn - rx_next - 1 >= 64)
            continue;
        bits |= uint64_t(1) << (psn - rx_next - 1);
    }
    return bits;
}

void UdpRingLanding::clear()
{
    for (uint64_t &p : psn_)
        p = kEmpty;
    occupied_ = 0;
}

} // namespace llc
