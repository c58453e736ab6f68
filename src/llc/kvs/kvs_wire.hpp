// kvs_wire.hpp - the bytes of LLC_KVS=dist (kvs.hpp): requests a client
// sends to a leader's KVS server, the server's replies, and the entries it
// stores.  Integers in network byte order.  Both directions come from the
// network, so test/fuzz/kvs_fuzz.cpp fuzzes the parsers.
//   request: op ('P' put, 'G' get) | job tag u32 | key length u16 | value length u32 | key | value
//   reply:   status u8 (0 ok, 1 no such key, 2 another job) | value length u32 | value
//   entry:   "<tcp address>|<udp address>" or "<tcp>|<udp>|<verbs>"
// Authentication (doc/reliability.md, "The distributed KVS"), one request
// per connection:
//   challenge (server -> client, at once on accept): magic u32 "LKV1" | nonce_s (16)
//   request   (client -> server): nonce_c (16) | MAC (32) | request as above
//   reply     (server -> client): reply as above | MAC (32)
// The MACs (HMAC-SHA256 under the job secret, kvs.cpp) cover both nonces
// and the request or reply bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace llc {

constexpr size_t kKvsMaxKey = 256;
constexpr size_t kKvsMaxValue = 4096;

struct KvsRequest {
    char op = 0;
    uint32_t job_tag = 0;
    std::string key, value;
};

enum class KvsParse {
    NeedMore, // incomplete: wait for more bytes
    Bad,      // not our protocol (or too long): close the connection
    Done
};

std::string encode_kvs_request(const KvsRequest &r);
// Takes the first complete request off the front of in.
KvsParse take_kvs_request(std::string &in, KvsRequest &out);

std::string encode_kvs_reply(uint8_t status, const std::string &value);
// A complete reply in in (bytes after it are ignored).
KvsParse parse_kvs_reply(const std::string &in, uint8_t &status, std::string &value);

constexpr uint32_t kKvsChallengeMagic = 0x4c4b5631; // "LKV1"
constexpr size_t kKvsNonceBytes = 16;             // = kNonceBytes (job_secret.hpp)
constexpr size_t kKvsMacBytes = 32;               // = kMacBytes
constexpr size_t kKvsChallengeBytes = 4 + kKvsNonceBytes;
constexpr size_t kKvsProofBytes = kKvsNonceBytes + kKvsMacBytes;

std::string encode_kvs_challenge(const uint8_t *nonce_s);
// The first kKvsChallengeBytes of in: NeedMore, Bad (wrong magic) or Done
// (nonce_s set: kKvsNonceBytes bytes).
KvsParse parse_kvs_challenge(const std::string &in, uint8_t *nonce_s);

// An authenticated request at the front of in, which is left as it is (the
// server takes nothing before the MAC checks out): proof = nonce_c | MAC,
// *request_bytes = the length of the request after the proof.
KvsParse peek_kvs_auth_request(const std::string &in, std::string &proof, KvsRequest &out, size_t *request_bytes);

// A complete reply followed by its MAC: *reply_bytes = the length of the
// reply before the MAC, mac = the MAC.
KvsParse parse_kvs_auth_reply(const std::string &in, uint8_t &status, std::string &value, size_t *reply_bytes,
                              std::string &mac);

struct KvsEntry {
    std::string tcp, udp, verbs;
};
std::string encode_kvs_entry(const KvsEntry &e);
// False if the value holds no '|'.
bool parse_kvs_entry(const std::string &value, KvsEntry &out);

} // namespace llc
