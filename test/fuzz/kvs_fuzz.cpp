// kvs_fuzz.cpp - libFuzzer target: the LLC_KVS=dist messages
// (src/llc/kvs_wire.*): a server's input stream of requests, a client's
// reply, and a stored entry; what parses must encode back to the same bytes.
#include "kvs_wire.hpp"

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
