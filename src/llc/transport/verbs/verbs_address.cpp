// verbs_address.cpp - see verbs_address.hpp.
#include "transport/verbs/verbs_address.hpp"

#include <cstring>

namespace llc {

namespace {

constexpr uint32_t k24 = 0xffffffu;

void put(std::string &s, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        s.push_back(char((v >> (8 * i)) & 0xff));
}

uint64_t get(const unsigned char *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

bool fail(std::string *why, const std::string &text)
{
    if (why)
        *why = text;
    return false;
}

int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

} // namespace

bool VerbsAddress::has_gid() const
{
    for (uint8_t b : gid)
        if (b)
            return true;
    return false;
}

bool VerbsAddress::operator==(const VerbsAddress &o) const
{
    return lid == o.lid && port == o.port && mtu == o.mtu && gid == o.gid && dct_number == o.dct_number &&
           dc_key == o.dc_key && rc_qpn == o.rc_qpn && psn == o.psn;
}

std::string encode_verbs_address(const VerbsAddress &a)
{
    std::string s;
    s.reserve(kVerbsAddressBytes);
    put(s, kVerbsAddressMagic, 4);
    put(s, kVerbsAddressVersion, 1);
    put(s, a.port, 1);
    put(s, a.mtu, 1);
    put(s, 0, 1);
    put(s, a.lid, 2);
    put(s, 0, 2);
    put(s, a.dct_number, 4);
    put(s, a.rc_qpn, 4);
    put(s, a.psn, 4);
    put(s, a.dc_key, 8);
    s.append(reinterpret_cast<const char *>(a.gid.data()), a.gid.size());
    return s;
}

bool decode_verbs_address(const void *data, size_t len, VerbsAddress *out, std::string *why)
{
    const auto *p = static_cast<const unsigned char *>(data);
    if (!p || len < 5)
        return fail(why, "verbs address of " + std::to_string(len) + " bytes is truncated (version 1 has " +
                             std::to_string(kVerbsAddressBytes) + ")");
    if (get(p, 4) != kVerbsAddressMagic)
        return fail(why, "not a verbs address (bad magic): is LLC_NET=verbs set on every process?");
    if (p[4] != kVerbsAddressVersion)
        return fail(why, "verbs address version " + std::to_string(p[4]) + " is not supported (this libllc reads "
                         "version " + std::to_string(kVerbsAddressVersion) + "): run the same libllc on every node");
    if (len != kVerbsAddressBytes)
        return fail(why, "verbs address of " + std::to_string(len) + " bytes: version 1 has exactly " +
                             std::to_string(kVerbsAddressBytes) + (len < kVerbsAddressBytes ? " (truncated)" : ""));
    if (p[7] != 0 || get(p + 10, 2) != 0)
        return fail(why, "verbs address has non-zero reserved bytes");
    VerbsAddress a;
    a.port = p[5];
    a.mtu = p[6];
    a.lid = uint16_t(get(p + 8, 2));
    a.dct_number = uint32_t(get(p + 12, 4));
    a.rc_qpn = uint32_t(get(p + 16, 4));
    a.psn = uint32_t(get(p + 20, 4));
    a.dc_key = get(p + 24, 8);
    std::memcpy(a.gid.data(), p + 32, a.gid.size());
    if (a.port == 0)
        return fail(why, "verbs address has port 0 (ports are numbered from 1)");
    if (a.mtu < 1 || a.mtu > 5)
        return fail(why, "verbs address has MTU code " + std::to_string(a.mtu) + " (valid: 1..5, 256..4096 bytes)");
    if (a.dct_number > k24 || a.rc_qpn > k24 || a.psn > k24)
        return fail(why, "verbs address has a QP number or PSN wider than 24 bits");
    if (out)
        *out = a;
    return true;
}

std::string verbs_address_text(const VerbsAddress &a)
{
    static const char digits[] = "0123456789abcdef";
    std::string bin = encode_verbs_address(a);
    std::string t = "v1:";
    for (unsigned char c : bin) {
        t.push_back(digits[c >> 4]);
        t.push_back(digits[c & 15]);
    }
    return t;
}

bool parse_verbs_address_text(const std::string &text, VerbsAddress *out, std::string *why)
{
    if (text.compare(0, 3, "v1:") != 0)
        return fail(why, "verbs address text \"" + text.substr(0, 16) + "\" does not start with \"v1:\"");
    if ((text.size() - 3) % 2 != 0)
        return fail(why, "verbs address text has an odd number of hex digits");
    std::string bin;
    for (size_t i = 3; i < text.size(); i += 2) {
        int hi = hex_value(text[i]), lo = hex_value(text[i + 1]);
        if (hi < 0 || lo < 0)
            return fail(why, "verbs address text has a character that is not a hex digit");
        bin.push_back(char(hi * 16 + lo));
    }
    return decode_verbs_address(bin.data(), bin.size(), out, why);
}

} // namespace llc
