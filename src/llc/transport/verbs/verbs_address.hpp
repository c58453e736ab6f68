// verbs_address.hpp - the endpoint address a verbs process publishes
// (AddressBook, AddrKind::Verbs) and sends in an RC connection request:
// where its DC target (DCT) is, the key that opens it, and, for an RC queue
// pair created on demand, its number and starting packet sequence number.
//
// Pure data and a versioned, length-checked byte encoding (carried as hex
// text in the KVS).  Compiled with or without libibverbs: nothing here
// touches a device, so it is unit-tested on any machine.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace llc {

struct VerbsAddress {
    uint16_t lid = 0;      // InfiniBand local identifier (0 on RoCE)
    uint8_t port = 0;      // 1-based port number
    uint8_t mtu = 0;       // the port's active MTU as enum ibv_mtu (1: 256 .. 5: 4096)
    std::array<uint8_t, 16> gid{}; // port GID (all zero: none; needed on RoCE and across subnets)
    uint32_t dct_number = 0; // DC target QP number (24 bits)
    uint64_t dc_key = 0;     // DC access key the DCT was created with
    uint32_t rc_qpn = 0;     // RC QP number (24 bits); 0: no RC QP (the published address has none)
    uint32_t psn = 0;        // first packet sequence number of that RC QP (24 bits)

    bool has_gid() const;
    bool operator==(const VerbsAddress &o) const;
    bool operator!=(const VerbsAddress &o) const { return !(*this == o); }
};

constexpr uint32_t kVerbsAddressMagic = 0x5643'4c4cu; // "LLCV" in little-endian memory order
constexpr uint8_t kVerbsAddressVersion = 1;
constexpr size_t kVerbsAddressBytes = 48; // version 1

// Version 1 layout, little-endian whatever the host:
//   0 magic u32 | 4 version u8 | 5 port u8 | 6 mtu u8 | 7 reserved u8 (0)
//   8 lid u16 | 10 reserved u16 (0) | 12 dct_number u32 | 16 rc_qpn u32
//   20 psn u32 | 24 dc_key u64 | 32 gid[16]
std::string encode_verbs_address(const VerbsAddress &a);
// False (and *why says what is wrong) for input that is not exactly one
// version-1 address: wrong length, magic or version, or a field out of range
// (port 0, mtu outside 1..5, a QP number or psn above 24 bits).
bool decode_verbs_address(const void *data, size_t len, VerbsAddress *out, std::string *why);

// The KVS form: "v1:" + lowercase hex of the encoding (the store holds text;
// '|' separates entries in LLC_KVS=dist, so the form has none).
std::string verbs_address_text(const VerbsAddress &a);
bool parse_verbs_address_text(const std::string &text, VerbsAddress *out, std::string *why);

} // namespace llc
