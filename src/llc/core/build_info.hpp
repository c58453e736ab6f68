// build_info.hpp - what this libllc build offers: version and transports
// (printed by llc_info).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace llc {

struct TransportInfo {
    const char *name;
    const char *kind;         // "self", "node-local", "RC-class", "DC-class"
    uint32_t caps;            // LLC_CAP_* bits the transport provides
    const char *description;
};

// The transports compiled into this libllc, in the order Context tries them.
const std::vector<TransportInfo> &built_transports();
// "0.1.0" (the package version) or "unknown".
const char *package_version();
// Names of the bits set in caps, e.g. "AM|RMA".
std::string caps_text(uint32_t caps);

} // namespace llc
