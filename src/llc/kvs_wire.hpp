// kvs_wire.hpp - the bytes of LLC_KVS=dist (kvs.hpp): requests a client
// sends to a leader's KVS server, the server's replies, and the entries it
// stores.  Integers in network byte order.  Both directions come from the
// network, so test/fuzz/kvs_fuzz.cpp fuzzes the parsers.
//   request: op ('P' put, 'G' get) | job tag u32 | key length u16 | value length u32 | key | value
//   reply:   status u8 (0 ok, 1 no such key, 2 another job) | value length u32 | value
//   entry:   "<tcp address>|<udp address>" or "<tcp>|<udp>|<verbs>"
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

struct KvsEntry {
    std::string tcp, udp, verbs;
};
std::string encode_kvs_entry(const KvsEntry &e);
// False if the value holds no '|'.
bool parse_kvs_entry(const std::string &value, KvsEntry &out);

} // namespace llc
