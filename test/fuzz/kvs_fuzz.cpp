// kvs_fuzz.cpp - libFuzzer target: the LLC_KVS=dist messages
// (src/llc/kvs/kvs_wire.*): a server's input stream of requests, a client's
// reply, and a stored entry; the authenticated forms (a server's challenge,
// a request behind its proof, a reply followed by its MAC); what parses must
// encode back to the same bytes.
#include "kvs/kvs_wire.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const std::string bytes(reinterpret_cast<const char *>(data), size);

    // requests, as KvsServer::serve takes them off its connection's buffer
    std::string in = bytes;
    for (;;) {
        const std::string before = in;
        llc::KvsRequest r;
        llc::KvsParse got = llc::take_kvs_request(in, r);
        if (got != llc::KvsParse::Done) {
            if (in != before)
                std::abort(); // an incomplete or refused request must not consume bytes
            break;
        }
        if (r.key.size() > llc::kKvsMaxKey || r.value.size() > llc::kKvsMaxValue)
            std::abort();
        if (llc::encode_kvs_request(r) + in != before)
            std::abort(); // parse and encode disagree
    }

    // a reply, as the client reads it
    uint8_t status = 0;
    std::string value;
    if (llc::parse_kvs_reply(bytes, status, value) == llc::KvsParse::Done) {
        if (status > 2 || value.size() > llc::kKvsMaxValue)
            std::abort();
        if (bytes.compare(0, 5 + value.size(), llc::encode_kvs_reply(status, value)) != 0)
            std::abort();
    }

    // a challenge, as the client reads it first
    uint8_t nonce[llc::kKvsNonceBytes];
    if (llc::parse_kvs_challenge(bytes, nonce) == llc::KvsParse::Done) {
        if (bytes.size() < llc::kKvsChallengeBytes ||
            bytes.compare(0, llc::kKvsChallengeBytes, llc::encode_kvs_challenge(nonce)) != 0)
            std::abort();
    }

    // an authenticated request, as KvsServer::take_request looks at it (in place)
    {
        std::string proof;
        llc::KvsRequest r;
        size_t len = 0;
        if (llc::peek_kvs_auth_request(bytes, proof, r, &len) == llc::KvsParse::Done) {
            if (proof.size() != llc::kKvsProofBytes || llc::kKvsProofBytes + len > bytes.size())
                std::abort();
            if (bytes.compare(0, llc::kKvsProofBytes, proof) != 0 ||
                bytes.compare(llc::kKvsProofBytes, len, llc::encode_kvs_request(r)) != 0)
                std::abort();
        }
    }

    // an authenticated reply, as the client reads it
    {
        std::string mac;
        size_t len = 0;
        if (llc::parse_kvs_auth_reply(bytes, status, value, &len, mac) == llc::KvsParse::Done) {
            if (len + llc::kKvsMacBytes > bytes.size() || mac.size() != llc::kKvsMacBytes)
                std::abort();
            if (bytes.compare(0, len, llc::encode_kvs_reply(status, value)) != 0 || bytes.compare(len, mac.size(), mac) != 0)
                std::abort();
        }
    }

    // an entry, as AddressBook::lookup reads it
    llc::KvsEntry e;
    if (llc::parse_kvs_entry(bytes, e)) {
        std::string again = llc::encode_kvs_entry(e);
        // "a|b|" (an empty verbs address) encodes as "a|b"; otherwise the same
        if (again != bytes && again + "|" != bytes)
            std::abort();
    }
    return 0;
}
