// build_info.cpp - see build_info.hpp.  A new transport adds its row here.
#include "core/build_info.hpp"

#include "llc.h"

#include <cstdio>

namespace llc {

const std::vector<TransportInfo> &built_transports()
{
    static const std::vector<TransportInfo> table = {
        {"self", "self", LLC_CAP_AM, "messages to the own rank, delivered by the next llc_progress"},
        {"shm", "node-local", LLC_CAP_AM,
         "shared-memory byte rings per sender, single copy (process_vm_readv) for large payloads"},
        {"tcp", "RC-class", LLC_CAP_AM, "one lazily opened TCP connection per pair, both directions (LLC_TCP_BIDI; one per direction under LLC_NET=hybrid or a cap below ranks - 1)"},
    };
    return table;
}

const char *package_version()
{
#ifdef PACKAGE_VERSION
    return PACKAGE_VERSION;
#else
    return "unknown";
#endif
}

std::string caps_text(uint32_t caps)
{
    static const struct {
        uint32_t bit;
        const char *name;
    } names[] = {{LLC_CAP_AM, "AM"}, {LLC_CAP_TAGGED, "TAGGED"}, {LLC_CAP_REMOTE_WRITE, "REMOTE_WRITE"}, {LLC_CAP_RMA, "RMA"}};
    std::string text;
    for (const auto &n : names)
        if (caps & n.bit)
            text += (text.empty() ? "" : "|") + std::string(n.name);
    uint32_t known = LLC_CAP_AM | LLC_CAP_TAGGED | LLC_CAP_REMOTE_WRITE | LLC_CAP_RMA;
    if (caps & ~known)
    {
        char hex[16];
        std::snprintf(hex, sizeof(hex), "0x%x", unsigned(caps & ~known));
        text += (text.empty() ? "" : "|") + std::string(hex);
    }
    return text.empty() ? "none" : text;
}

} // namespace llc
