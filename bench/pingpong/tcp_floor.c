/* tcp_floor.c - the kernel's floor for an inter-node ping-pong: two
 * processes exchange messages over plain TCP sockets, with nothing of an MPI
 * in between, the way an MPI's tcp path would at best.  What an MPI adds to
 * the emulated link is its latency minus this one.
 *
 *   tcp_floor --listen PORT [options]        (the answering side)
 *   tcp_floor --connect HOST:PORT [options]  (the timing side, prints)
 *
 * Options (both sides must agree):
 *   --conns 1|2        one connection for both directions (as MPICH's ch4
 *                      tcp and libllc with LLC_TCP_BIDI=1), or one per
 *                      direction (libllc's default); default 1
 *   --pattern eager|rendezvous
 *                      eager: the message itself each way; rendezvous: a
 *                      48-byte request, a 56-byte answer, then the message
 *                      (libllc's tagged rendezvous); default eager
 *   --size N           message bytes (default 8)
 *   --iters N          timed round trips (default 10000), after N/10 untimed
 *
 * Both sides poll with non-blocking recv/send (as the MPIs do) and set
 * TCP_NODELAY.  Output (connecting side): "conns C pattern P size N
 * latency_us L" where L is half the mean round trip.  Exit status 1 with a
 * message on any socket error or a peer that closed early. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what)
{
    fprintf(stderr, "tcp_floor: %s: %s\n", what, errno ? strerror(errno) : "failed");
    exit(1);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void nodelay(int s)
{
    int one = 1;
    if (setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0)
        die("setsockopt(TCP_NODELAY)");
}

static int listen_on(int port)
{
    int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((unsigned short)port);
    if (s < 0 || setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(s, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(s, 4) != 0)
        die("listen");
    return s;
}

static int accept_one(int l)
{
    int s = accept(l, NULL, NULL);
    if (s < 0)
        die("accept");
    nodelay(s);
    return s;
}

/* Retries for up to 10 s: the other side may not be listening yet. */
static int connect_to(const char *host, int port)
{
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((unsigned short)port);
    if (inet_pton(AF_INET, host, &a.sin_addr) != 1) {
        errno = 0;
        die("--connect wants an IPv4 address");
    }
    for (int tries = 0; tries < 1000; tries++) {
        int s = socket(AF_INET, SOCK_STREAM, 0);
        if (s < 0)
            die("socket");
        if (connect(s, (struct sockaddr *)&a, sizeof(a)) == 0) {
            nodelay(s);
            return s;
        }
        close(s);
        usleep(10000);
    }
    die("connect (is the --listen side running?)");
    return -1;
}

static void send_all(int s, const char *b, size_t n)
{
    while (n > 0) {
        ssize_t w = send(s, b, n, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (w > 0) {
            b += w;
            n -= (size_t)w;
        } else if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            die("send");
        }
    }
}

static void recv_all(int s, char *b, size_t n)
{
    while (n > 0) {
        ssize_t r = recv(s, b, n, MSG_DONTWAIT);
        if (r > 0) {
            b += r;
            n -= (size_t)r;
        } else if (r == 0) {
            errno = 0;
            die("the peer closed the connection early (do both sides have the same options?)");
        } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            die("recv");
        }
    }
}

/* One message from `out` to `in`, as the pattern has it: `sender` says
 * which side this process is. */
static void message(int sender, int rendezvous, int snd, int rcv, char *buf, size_t size)
{
    if (rendezvous) {
        if (sender) {
            send_all(snd, buf, 48);
            recv_all(rcv, buf, 56);
        } else {
            recv_all(rcv, buf, 48);
            send_all(snd, buf, 56);
        }
    }
    if (sender)
        send_all(snd, buf, size);
    else
        recv_all(rcv, buf, size);
}

int main(int argc, char **argv)
{
    int port = 0, conns = 1, rendezvous = 0, listening = -1;
    long iters = 10000;
    size_t size = 8;
    char host[64] = "";
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "tcp_floor: %s needs a value\n", argv[i]);
            return 2;
        }
        if (!strcmp(argv[i], "--listen")) {
            listening = 1;
            port = atoi(v);
        } else if (!strcmp(argv[i], "--connect")) {
            const char *colon = strrchr(v, ':');
            if (!colon || (size_t)(colon - v) >= sizeof(host)) {
                fprintf(stderr, "tcp_floor: --connect wants HOST:PORT\n");
                return 2;
            }
            memcpy(host, v, (size_t)(colon - v));
            host[colon - v] = '\0';
            port = atoi(colon + 1);
            listening = 0;
        } else if (!strcmp(argv[i], "--conns")) {
            conns = atoi(v);
        } else if (!strcmp(argv[i], "--pattern")) {
            if (strcmp(v, "eager") && strcmp(v, "rendezvous")) {
                fprintf(stderr, "tcp_floor: --pattern is eager or rendezvous\n");
                return 2;
            }
            rendezvous = !strcmp(v, "rendezvous");
        } else if (!strcmp(argv[i], "--size")) {
            size = (size_t)atol(v);
        } else if (!strcmp(argv[i], "--iters")) {
            iters = atol(v);
        } else {
            fprintf(stderr, "tcp_floor: unknown option %s (see the comment at the top of tcp_floor.c)\n", argv[i]);
            return 2;
        }
        i++;
    }
    if (listening < 0 || port <= 0 || port > 65534 || (conns != 1 && conns != 2) || size < 56 * (size_t)rendezvous ||
        iters < 1) {
        fprintf(stderr, "tcp_floor: need --listen PORT or --connect HOST:PORT (port below 65535), --conns 1|2, "
                        "--iters >= 1, and with --pattern rendezvous --size >= 56\n");
        return 2;
    }
    /* The connecting side opens the first connection to PORT; with two, the
     * listening side opens the second to PORT+1 of the connecting side's
     * address. */
    int snd, rcv;
    if (listening) {
        int l = listen_on(port);
        rcv = accept_one(l);
        snd = rcv;
        if (conns == 2) {
            struct sockaddr_in peer;
            socklen_t len = sizeof(peer);
            char addr[INET_ADDRSTRLEN];
            if (getpeername(rcv, (struct sockaddr *)&peer, &len) != 0 ||
                !inet_ntop(AF_INET, &peer.sin_addr, addr, sizeof(addr)))
                die("getpeername");
            snd = connect_to(addr, port + 1);
        }
        close(l);
    } else {
        int l = conns == 2 ? listen_on(port + 1) : -1;
        snd = connect_to(host, port);
        rcv = conns == 2 ? accept_one(l) : snd;
        if (l >= 0)
            close(l);
    }
    char *buf = malloc(size > 56 ? size : 56);
    if (!buf)
        die("malloc");
    memset(buf, 0x5a, size > 56 ? size : 56);
    const int pinger = !listening;
    long warmup = iters / 10 + 1;
    double t0 = 0;
    for (long i = 0; i < warmup + iters; i++) {
        if (i == warmup)
            t0 = now_s();
        message(pinger, rendezvous, snd, rcv, buf, size);  /* ping */
        message(!pinger, rendezvous, snd, rcv, buf, size); /* pong */
    }
    double t = now_s() - t0;
    if (pinger)
        printf("conns %d pattern %s size %zu latency_us %.3f\n", conns, rendezvous ? "rendezvous" : "eager", size,
               t / (double)iters / 2 * 1e6);
    free(buf);
    return 0;
}
