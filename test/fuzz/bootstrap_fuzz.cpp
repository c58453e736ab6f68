// bootstrap_fuzz.cpp - libFuzzer target: what the caller's bootstrap (PMI
// under MPICH) hands back to libllc (src/llc/core/bootstrap.*): a value of any
// bytes and any claimed length, read as the hex job secret (job_secret.*).
#include "core/errors.hpp"
#include "fake_bootstrap.hpp"
#include "auth/job_secret.hpp"

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    fuzz::FakeBootstrap fb;
    // first two bytes: the length the get callback claims (0xffff: the true length)
    uint16_t claim = uint16_t(data[0] | data[1] << 8);
    fb.value.assign(reinterpret_cast<const char *>(data + 2), size - 2);
    if (claim != 0xffff)
        fb.claimed_len = std::min<size_t>(claim, fb.value.size() + 4096); // may exceed the buffer
    llc_bootstrap_ops_t ops = fb.ops();
    llc::Bootstrap boot(ops);
    try {
        std::string v = boot.get(0, "llc-key");
        if (v.size() > 1024)
            std::abort(); // more than the bootstrap buffer
    } catch (const llc::Error &) {
    }
    try {
        llc::JobSecret secret(boot, 1, "llc-secret");
        const auto &k = secret.secret();
        // accepted: it was 64 hex digits, and these are their bytes
        if (fb.value.size() < 64)
            std::abort();
        static const char hex[] = "0123456789abcdef";
        for (size_t i = 0; i < k.size(); i++) {
            char hi = char(std::tolower(fb.value[2 * i])), lo = char(std::tolower(fb.value[2 * i + 1]));
            if (hi != hex[k[i] >> 4] || lo != hex[k[i] & 15])
                std::abort();
        }
    } catch (const llc::Error &) {
    }
    return 0;
}
