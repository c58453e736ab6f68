// udp_datagram.hpp - the first look at a datagram read from the udp socket
// (udp_transport.*): anyone can send one, so test/fuzz/udp_fuzz.cpp fuzzes
// these checks and the stream bytes that follow a Data header.
#pragma once

#include <cstddef>
#include <cstdint>

namespace llc {

struct UdpHeader; // udp_transport.hpp

constexpr uint32_t kUdpMagic = 0x55434c4c; // "LLCU" in little-endian memory order

enum class UdpHeaderCheck {
    Short,   // shorter than a header
    Foreign, // not a datagram of this job for this process (magic, job tag or ranks)
    Ok       // h holds the header
};
// Copies the header of buf into h and checks that it is addressed to rank
// (of size ranks) by another rank of the job with this job tag.
UdpHeaderCheck read_udp_header(const char *buf, size_t len, uint32_t job_tag, int size, int rank, UdpHeader &h);

// For Data and Ack datagrams (h passed read_udp_header): whether the type and
// length agree (Data: h.len stream bytes follow the header; Ack: type only).
bool udp_data_or_ack_shape_ok(const UdpHeader &h, size_t len);

} // namespace llc
