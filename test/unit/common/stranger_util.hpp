// stranger_util.hpp - raw tcp connections for tests that play a stranger at
// a port of the job (auth_test.cpp: a rank's tcp port; kvs_test.cpp: a node
// leader's KVS server).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <string>

namespace llctest {

// "ip:port" as a socket address.
inline sockaddr_in sockaddr_of(const std::string &addr)
{
    size_t colon = addr.rfind(':');
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(uint16_t(std::stoi(addr.substr(colon + 1))));
    inet_pton(AF_INET, addr.substr(0, colon).c_str(), &sa.sin_addr);
    return sa;
}

// A raw connection to "ip:port" (blocking, with a receive timeout).
inline int raw_connect(const std::string &addr)
{
    sockaddr_in sa = sockaddr_of(addr);
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)), 0) << addr;
    timeval tv{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    return fd;
}

inline void send_all(int fd, const void *p, size_t n)
{
    const char *c = static_cast<const char *>(p);
    while (n > 0) {
        ssize_t w = ::send(fd, c, n, MSG_NOSIGNAL);
        if (w <= 0)
            return; // the peer may close early: that is what is tested
        c += w;
        n -= size_t(w);
    }
}

inline bool recv_all(int fd, void *p, size_t n)
{
    char *c = static_cast<char *>(p);
    while (n > 0) {
        ssize_t r = ::recv(fd, c, n, 0);
        if (r <= 0)
            return false;
        c += r;
        n -= size_t(r);
    }
    return true;
}

// Wait until the peer closes (EOF or reset), at most 5 s; *extra (if given)
// gets the bytes that came before the close.
inline bool closed_by_peer(int fd, std::string *extra = nullptr)
{
    char b[256];
    for (;;) {
        ssize_t r = ::recv(fd, b, sizeof(b), 0);
        if (r > 0 && extra)
            extra->append(b, size_t(r));
        if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN))
            return true;
        if (r < 0)
            return false; // the receive timeout
    }
}

} // namespace llctest
