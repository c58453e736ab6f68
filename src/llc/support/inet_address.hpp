// inet_address.hpp - choosing the IPv4 address to publish and parsing "ip:port".
#pragma once

#include <netinet/in.h>

#include <string>

namespace llc {

// LLC_TCP_ADDR if set, else the first UP non-loopback IPv4 interface address,
// else 127.0.0.1.  Throws Error(LLC_ERR_INVALID) if the override is not an IPv4 address.
std::string choose_publish_address(const std::string &override_addr, const char *variable = "LLC_TCP_ADDR");

// Parse "a.b.c.d:port"; returns false if malformed.
bool parse_ip_port(const std::string &text, sockaddr_in &out);

std::string format_ip_port(const sockaddr_in &addr);

} // namespace llc
