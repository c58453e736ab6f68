// liveness_util.hpp - for the tests of peer liveness (tcp_liveness_test.cpp,
// udp_liveness_test.cpp): an inbox that checks the pattern of numbered
// messages, and the state of another process.
#pragma once

#include "common/test_util.hpp"

#include <llc.h>

#include <sys/types.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>

namespace llctest {

// Messages numbered from 0, each payload in the pattern seeded by its number
// (fill_pattern); on_inbox_msg counts them (register it with an Inbox).
struct Inbox {
    int n = 0;
    size_t bytes = 0;
    uint64_t word = 0; // first 8 bytes of the last header
    bool bad = false;
};
inline void on_inbox_msg(llc_context_t *, void *arg, int, const void *hdr, size_t hdr_len, const void *data, size_t len)
{
    auto *in = static_cast<Inbox *>(arg);
    if (hdr_len >= sizeof(uint64_t))
        std::memcpy(&in->word, hdr, sizeof(uint64_t));
    if (len > 0 && !check_pattern(data, len, uint64_t(in->n)))
        in->bad = true;
    in->n++;
    in->bytes += len;
}

// State letter of /proc/<pid>/stat ('T': stopped), or 0.
inline char process_state(pid_t pid)
{
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(f, line))
        return 0;
    size_t paren = line.rfind(')');
    return paren == std::string::npos || paren + 2 >= line.size() ? 0 : line[paren + 2];
}

} // namespace llctest
