// kvs_wire.cpp - encoding and parsing of the LLC_KVS=dist messages (kvs_wire.hpp).
#include "kvs/kvs_wire.hpp"

#include <arpa/inet.h>

#include <cstring>

namespace llc {

namespace {
constexpr size_t kRequestHeader = 11; // op, job tag, key length, value length
constexpr size_t kReplyHeader = 5;    // status, value length

void put_u16(std::string &s, uint16_t v)
{
    v = htons(v);
    s.append(reinterpret_cast<const char *>(&v), 2);
}
void put_u32(std::string &s, uint32_t v)
{
    v = htonl(v);
    s.append(reinterpret_cast<const char *>(&v), 4);
}
uint16_t get_u16(const char *p)
{
    uint16_t v;
    std::memcpy(&v, p, 2);
    return ntohs(v);
}
uint32_t get_u32(const char *p)
{
    uint32_t v;
    std::memcpy(&v, p, 4);
    return ntohl(v);
}
} // namespace

std::string encode_kvs_request(const KvsRequest &r)
{
    std::string s;
    s.push_back(r.op);
    put_u32(s, r.job_tag);
    put_u16(s, uint16_t(r.key.size()));
    put_u32(s, uint32_t(r.value.size()));
    return s + r.key + r.value;
}

KvsParse take_kvs_request(std::string &in, KvsRequest &out)
{
    if (in.size() < kRequestHeader)
        return KvsParse::NeedMore;
    char op = in[0];
    size_t klen = get_u16(in.data() + 5);
    size_t vlen = get_u32(in.data() + 7);
    if ((op != 'P' && op != 'G') || klen > kKvsMaxKey || vlen > kKvsMaxValue)
        return KvsParse::Bad;
    if (in.size() < kRequestHeader + klen + vlen)
        return KvsParse::NeedMore;
    out.op = op;
    out.job_tag = get_u32(in.data() + 1);
    out.key = in.substr(kRequestHeader, klen);
    out.value = in.substr(kRequestHeader + klen, vlen);
    in.erase(0, kRequestHeader + klen + vlen);
    return KvsParse::Done;
}

std::string encode_kvs_reply(uint8_t status, const std::string &value)
{
    std::string s(1, char(status));
    put_u32(s, uint32_t(value.size()));
    return s + value;
}

KvsParse parse_kvs_reply(const std::string &in, uint8_t &status, std::string &value)
{
    if (in.size() < kReplyHeader)
        return KvsParse::NeedMore;
    size_t vlen = get_u32(in.data() + 1);
    // A server never stores more than kKvsMaxValue: a longer reply would only
    // make the client buffer up to 4 GiB waiting for it.
    if (uint8_t(in[0]) > 2 || vlen > kKvsMaxValue)
        return KvsParse::Bad;
    if (in.size() < kReplyHeader + vlen)
        return KvsParse::NeedMore;
    status = uint8_t(in[0]);
    value = in.substr(kReplyHeader, vlen);
    return KvsParse::Done;
}

std::string encode_kvs_challenge(const uint8_t *nonce_s)
{
    std::string s;
    put_u32(s, kKvsChallengeMagic);
    s.append(reinterpret_cast<const char *>(nonce_s), kKvsNonceBytes);
    return s;
}

KvsParse parse_kvs_challenge(const std::string &in, uint8_t *nonce_s)
{
    if (in.size() >= 4 && get_u32(in.data()) != kKvsChallengeMagic)
        return KvsParse::Bad;
    if (in.size() < kKvsChallengeBytes)
        return KvsParse::NeedMore;
    std::memcpy(nonce_s, in.data() + 4, kKvsNonceBytes);
    return KvsParse::Done;
}

KvsParse peek_kvs_auth_request(const std::string &in, std::string &proof, KvsRequest &out, size_t *request_bytes)
{
    if (in.size() < kKvsProofBytes)
        return KvsParse::NeedMore;
    std::string rest = in.substr(kKvsProofBytes);
    const size_t had = rest.size();
    KvsParse got = take_kvs_request(rest, out);
    if (got != KvsParse::Done)
        return got;
    proof = in.substr(0, kKvsProofBytes);
    *request_bytes = had - rest.size();
    return KvsParse::Done;
}

KvsParse parse_kvs_auth_reply(const std::string &in, uint8_t &status, std::string &value, size_t *reply_bytes,
                              std::string &mac)
{
    uint8_t st = 0;
    std::string v;
    KvsParse got = parse_kvs_reply(in, st, v);
    if (got != KvsParse::Done)
        return got;
    const size_t len = kReplyHeader + v.size();
    if (in.size() < len + kKvsMacBytes)
        return KvsParse::NeedMore;
    status = st;
    value = std::move(v);
    *reply_bytes = len;
    mac = in.substr(len, kKvsMacBytes);
    return KvsParse::Done;
}

std::string encode_kvs_entry(const KvsEntry &e)
{
    return e.tcp + "|" + e.udp + (e.verbs.empty() ? std::string() : "|" + e.verbs);
}

bool parse_kvs_entry(const std::string &value, KvsEntry &out)
{
    size_t bar = value.find('|');
    if (bar == std::string::npos)
        return false;
    size_t bar2 = value.find('|', bar + 1); // npos: no verbs address
    out.tcp = value.substr(0, bar);
    out.udp = value.substr(bar + 1, bar2 == std::string::npos ? std::string::npos : bar2 - bar - 1);
    out.verbs = bar2 == std::string::npos ? std::string() : value.substr(bar2 + 1);
    return true;
}

} // namespace llc
