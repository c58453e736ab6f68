// job_secret.hpp - the per-job secret that lets only the job's own processes
// in (doc/reliability.md), and the HMAC-SHA256 helpers built on it.
//
// Rank 0 draws 32 random bytes (getrandom, the kernel's CSPRNG) when a transport is
// created in llc_init and puts them, hex-encoded, under a bootstrap key (the
// launcher's PMI under MPICH: never a command line, never the environment).
// Every other process gets the key from rank 0 the first time it needs the
// secret (its first connection, accepted or initiated), after the init
// fence.  The secret itself never goes on the network: the transports send
// HMACs computed with it over fresh nonces.  All cryptography is OpenSSL's.
#pragma once

#include "core/bootstrap.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace llc {

constexpr size_t kSecretBytes = 32;
constexpr size_t kNonceBytes = 16;
constexpr size_t kMacBytes = 32; // HMAC-SHA256

using Nonce = std::array<uint8_t, kNonceBytes>;
using Mac = std::array<uint8_t, kMacBytes>;

// Cryptographically random bytes (getrandom, else OpenSSL's RAND_bytes);
// throws Error(LLC_ERR_SYSTEM).
void random_bytes(void *out, size_t n);
// Constant-time comparison (CRYPTO_memcmp).
bool same_bytes(const void *a, const void *b, size_t n);

// Builds the input of one HMAC from fields (a label first, so that a MAC made
// for one purpose is never valid for another).
class MacInput {
public:
    explicit MacInput(const char *label) { add(label, std::char_traits<char>::length(label) + 1); }
    MacInput &add(const void *p, size_t n)
    {
        bytes_.append(static_cast<const char *>(p), n);
        return *this;
    }
    MacInput &add_int(int64_t v) { return add(&v, sizeof(v)); }
    const std::string &bytes() const { return bytes_; }

private:
    std::string bytes_;
};

// HMAC-SHA256 of the input under key (JobSecret::mac, and the KVS server,
// which gets its key once and MACs on a thread of its own).
Mac hmac_sha256(const std::array<uint8_t, kSecretBytes> &key, const MacInput &in);

class JobSecret {
public:
    // key: the bootstrap key (one per transport).  Rank 0 creates the secret
    // and puts it now (before the init fence); throws Error on failure.
    JobSecret(Bootstrap &boot, int rank, std::string key);

    // The secret, fetched from rank 0 through the bootstrap on first use
    // (after the init fence).  Throws Error(LLC_ERR_BOOTSTRAP) if it cannot
    // be had or is malformed.
    const std::array<uint8_t, kSecretBytes> &secret();
    bool known() const { return known_; }

    // HMAC-SHA256 of the input under the secret.
    Mac mac(const MacInput &in);

private:
    Bootstrap &boot_;
    std::string key_;
    bool known_ = false;
    std::array<uint8_t, kSecretBytes> secret_{};
};

// At most one warning line per interval about rejected strangers: the first
// one at once, later ones summarised (count since the last line).
class RejectLog {
public:
    // what: "<things> were" (the line says "<count> <things> were rejected")
    RejectLog(const char *what, const char *counter) : what_(what), counter_(counter) {}
    void note(int my_rank, const std::string &from, const std::string &why);

private:
    const char *what_;
    const char *counter_;
    uint64_t last_us_ = 0;
    uint64_t since_ = 0;
    bool printed_ = false;
};

} // namespace llc
