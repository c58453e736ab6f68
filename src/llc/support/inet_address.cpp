// inet_address.cpp - interface discovery and address text conversion.
#include "support/inet_address.hpp"

#include "core/errors.hpp"
#include "llc.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>

#include <cstdlib>
#include <cstring>

namespace llc {

std::string choose_publish_address(const std::string &override_addr, const char *variable)
{
    if (!override_addr.empty()) {
        in_addr a;
        if (inet_pton(AF_INET, override_addr.c_str(), &a) != 1)
            throw Error(LLC_ERR_INVALID, std::string(variable) + "=\"" + override_addr + "\" is not an IPv4 address");
        return override_addr;
    }
    std::string found = "127.0.0.1";
    ifaddrs *list = nullptr;
    if (getifaddrs(&list) == 0) {
        for (ifaddrs *i = list; i; i = i->ifa_next) {
            if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
                continue;
            if (!(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK))
                continue;
            char buf[INET_ADDRSTRLEN];
            auto *sin = reinterpret_cast<sockaddr_in *>(i->ifa_addr);
            if (inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof(buf))) {
                found = buf;
                break;
            }
        }
        freeifaddrs(list);
    }
    return found;
}

bool parse_ip_port(const std::string &text, sockaddr_in &out)
{
    size_t colon = text.rfind(':');
    if (colon == std::string::npos)
        return false;
    std::string ip = text.substr(0, colon);
    std::string port = text.substr(colon + 1);
    char *end = nullptr;
    long p = std::strtol(port.c_str(), &end, 10);
    if (port.empty() || *end || p <= 0 || p > 65535)
        return false;
    std::memset(&out, 0, sizeof(out));
    out.sin_family = AF_INET;
    out.sin_port = htons(uint16_t(p));
    return inet_pton(AF_INET, ip.c_str(), &out.sin_addr) == 1;
}

std::string format_ip_port(const sockaddr_in &addr)
{
    char buf[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &addr.sin_addr, buf, sizeof(buf));
    return std::string(buf) + ":" + std::to_string(ntohs(addr.sin_port));
}

} // namespace llc
