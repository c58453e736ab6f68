// job_secret_util.hpp - for tests that forge records as a process of the job
// would (doc/reliability.md): the job secret from the test bootstrap, and the
// MACs made with it, computed here independently of libllc's code.
#pragma once

#include "common/test_bootstrap.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstdint>
#include <cstring>
#include <string>

namespace llctest {

// The secret rank 0 put under `key` ("llc-secret-tcp", "llc-secret-udp"), as hex.
inline std::string job_secret_hex(TestProcess &p, const char *key)
{
    char buf[128];
    size_t len = sizeof(buf);
    if (TestProcess::get(&p, 0, key, buf, &len) != 0)
        return "";
    return std::string(buf, len);
}

// HMAC-SHA256 under a hex key of the label (with its NUL) followed by the fields.
inline std::string hmac_hex_key(const std::string &key_hex, const std::string &label_and_fields)
{
    unsigned char key[32];
    for (int i = 0; i < 32; i++)
        key[i] = uint8_t(std::stoi(key_hex.substr(size_t(2 * i), 2), nullptr, 16));
    unsigned char out[32];
    unsigned int len = 0;
    HMAC(EVP_sha256(), key, 32, reinterpret_cast<const unsigned char *>(label_and_fields.data()),
         label_and_fields.size(), out, &len);
    return std::string(reinterpret_cast<char *>(out), 32);
}

inline std::string mac_field(int64_t v) { return std::string(reinterpret_cast<const char *>(&v), sizeof(v)); }

// The udp pair token of datagrams from src to dst (UdpHeader::token).
inline uint64_t udp_pair_token(TestProcess &p, int src, int dst)
{
    std::string in("llc-udp-pair-1", sizeof("llc-udp-pair-1"));
    in += mac_field(src) + mac_field(dst);
    std::string mac = hmac_hex_key(job_secret_hex(p, "llc-secret-udp"), in);
    uint64_t t;
    std::memcpy(&t, mac.data(), sizeof(t));
    return t;
}

} // namespace llctest
