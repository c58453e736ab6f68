// udp_datagram.cpp - header checks of incoming datagrams (udp_datagram.hpp).
#include "transport/udp/udp_datagram.hpp"

#include "transport/udp/udp_transport.hpp"

#include <cstring>

namespace llc {

UdpHeaderCheck read_udp_header(const char *buf, size_t len, uint32_t job_tag, int size, int rank, UdpHeader &h)
{
    if (len < sizeof(UdpHeader))
        return UdpHeaderCheck::Short;
    std::memcpy(&h, buf, sizeof(h));
    if (h.magic != kUdpMagic || h.job_tag != job_tag || h.src < 0 || h.src >= size || h.src == rank || h.dst != rank)
        return UdpHeaderCheck::Foreign;
    return UdpHeaderCheck::Ok;
}

bool udp_data_or_ack_shape_ok(const UdpHeader &h, size_t len)
{
    return h.type == uint8_t(UdpType::Data) ? h.len == len - sizeof(UdpHeader) : h.type == uint8_t(UdpType::Ack);
}

} // namespace llc
