// am_records.hpp - active-message records from rank 5 for the tests that feed
// OutgoingMessage bytes to a decoder or a ring (wire/stream_decoder_test.cpp,
// transport/shm/shm_ring_test.cpp).
#pragma once

#include "wire/outgoing_message.hpp"

#include <memory>
#include <string>
#include <vector>

namespace llctest {

// A record for `handler` with sequence number `seq`, AM header `hdr` and
// the pieces as the payload's iovec.
inline std::unique_ptr<llc::OutgoingMessage> make_msg(unsigned handler, uint64_t seq, const std::string &hdr,
                                                      const std::vector<std::string> &pieces)
{
    std::vector<llc_iov_t> iov;
    for (const auto &p : pieces)
        iov.push_back({p.data(), p.size()});
    return llc::OutgoingMessage::make_am(5, handler, seq, hdr.data(), hdr.size(), iov.data(), int(iov.size()),
                                         nullptr, nullptr);
}

} // namespace llctest
