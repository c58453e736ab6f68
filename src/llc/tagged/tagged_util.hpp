// tagged_util.hpp - small helpers shared by the tagged protocol's files
// (tagged.cpp, tagged_offers.cpp).
#pragma once

#include "tagged/tag_matcher.hpp"

#include <cstdint>
#include <cstdio>
#include <string>

namespace llc {

// The bit of an Await in a mask of accepted ones (Tagged::awaiting_request).
constexpr unsigned bit(TreqState::Await a) { return 1u << a; }

inline std::string hex(uint64_t v)
{
    char b[24];
    std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
    return b;
}

} // namespace llc
