// job_secret.cpp - secret creation/distribution and HMAC-SHA256 (OpenSSL).
#include "auth/job_secret.hpp"

#include "core/clock.hpp"
#include "core/errors.hpp"
#include "llc.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <sys/random.h>

#include <cerrno>
#include <cstdio>

namespace llc {

namespace {
constexpr uint64_t kRejectLogIntervalUs = 60ull * 1000 * 1000;

std::string to_hex(const uint8_t *p, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    std::string s;
    for (size_t i = 0; i < n; i++) {
        s += digits[p[i] >> 4];
        s += digits[p[i] & 15];
    }
    return s;
}

int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}
} // namespace

// The kernel's CSPRNG (getrandom), else OpenSSL's.  Not RAND_bytes first:
// its first call sets up OpenSSL's generator, about 10 ms (measured, OpenSSL
// 3.0 on Debian 12), which would land on a process's first connection.
void random_bytes(void *out, size_t n)
{
    auto *p = static_cast<unsigned char *>(out);
    size_t got = 0;
    while (got < n) {
        ssize_t r = ::getrandom(p + got, n - got, 0);
        if (r > 0)
            got += size_t(r);
        else if (r < 0 && errno == EINTR)
            continue;
        else
            break;
    }
    if (got == n)
        return;
    if (RAND_bytes(p, int(n)) != 1)
        throw Error(LLC_ERR_SYSTEM, "no random bytes for the job secret or a nonce (getrandom and OpenSSL RAND_bytes failed)");
}

bool same_bytes(const void *a, const void *b, size_t n) { return CRYPTO_memcmp(a, b, n) == 0; }

JobSecret::JobSecret(Bootstrap &boot, int rank, std::string key) : boot_(boot), key_(std::move(key))
{
    // OpenSSL sets itself up on its first HMAC (4-8 ms measured, OpenSSL
    // 3.0): here, in llc_init, where every process pays it at once, rather
    // than twice in a row on the path of the first message between two.
    {
        const unsigned char zero[kSecretBytes] = {};
        unsigned char out[kMacBytes];
        unsigned int len = 0;
        HMAC(EVP_sha256(), zero, int(sizeof(zero)), zero, sizeof(zero), out, &len);
    }
    if (rank != 0)
        return;
    random_bytes(secret_.data(), secret_.size());
    known_ = true;
    boot_.put(key_, to_hex(secret_.data(), secret_.size()));
}

const std::array<uint8_t, kSecretBytes> &JobSecret::secret()
{
    if (known_)
        return secret_;
    std::string hex = boot_.get(0, key_);
    bool ok = hex.size() == 2 * kSecretBytes;
    for (size_t i = 0; ok && i < kSecretBytes; i++) {
        int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);
        ok = hi >= 0 && lo >= 0;
        if (ok) // hi is -1 for a non-hex digit: no shift of a negative value
            secret_[i] = uint8_t(hi << 4 | lo);
    }
    if (!ok)
        throw Error(LLC_ERR_BOOTSTRAP, "the job secret under bootstrap key \"" + key_ + "\" from rank 0 is malformed");
    known_ = true;
    return secret_;
}

Mac JobSecret::mac(const MacInput &in) { return hmac_sha256(secret(), in); }

Mac hmac_sha256(const std::array<uint8_t, kSecretBytes> &k, const MacInput &in)
{
    Mac out{};
    unsigned int len = 0;
    if (!HMAC(EVP_sha256(), k.data(), int(k.size()), reinterpret_cast<const unsigned char *>(in.bytes().data()),
              in.bytes().size(), out.data(), &len) ||
        len != out.size())
        throw Error(LLC_ERR_SYSTEM, "OpenSSL HMAC-SHA256 failed");
    return out;
}

void RejectLog::note(int my_rank, const std::string &from, const std::string &why)
{
    since_++;
    uint64_t now = monotonic_us();
    if (printed_ && now - last_us_ < kRejectLogIntervalUs)
        return;
    std::fprintf(stderr,
                 "libllc: rank %d: %llu %s rejected%s (last: %s: %s); the job carries on "
                 "(at most one such line a minute; see %s in llc_get_stats)\n",
                 my_rank, static_cast<unsigned long long>(since_), what_, printed_ ? " in the last minute" : "",
                 from.c_str(), why.c_str(), counter_);
    printed_ = true;
    last_us_ = now;
    since_ = 0;
}

} // namespace llc
