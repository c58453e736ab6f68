// tcp_transport.hpp - messages to processes on other nodes over TCP.
//
// Every process listens on an ephemeral port and publishes "ip:port" as
// llc-tcp-<rank>.  A process connects lazily on its first send to a peer and
// only ever sends on connections it initiated; it only receives on
// connections it accepted.  So each ordered pair has exactly one stream and
// simultaneous connects need no tie-breaking.
#pragma once

#include "byte_buffer.hpp"
#include "outgoing_message.hpp"
#include "stream_decoder.hpp"
#include "unique_fd.hpp"

#include <poll.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace llc {

class Context;

class TcpTransport {
public:
    explicit TcpTransport(Context &ctx); // creates the listening socket
    ~TcpTransport();
    void publish_address();              // bootstrap put (before the init fence)

    int send(int dest, std::unique_ptr<OutgoingMessage> msg);
    bool progress();
    // Block up to `us` microseconds until a socket is ready (idle backoff).
    // extra_fd (if >= 0) is polled for input too (the udp socket).
    void wait_for_activity(uint64_t us, int extra_fd = -1);
    // Start connecting to dest now (hybrid promotion overlaps it with the drain).
    void connect_early(int dest) { out_conn(dest); }
    bool has_pending_sends() const;

    // Finalize support.
    void say_goodbye();
    bool incoming_quiet() const;

private:
    friend struct MemWalk; // mem_accounting.cpp counts the members
    struct OutConn {
        enum class State { Connecting, Connected, Failed };
        int rank = -1;
        std::string addr;
        UniqueFd fd;
        State state = State::Connecting;
        uint64_t connect_deadline_us = 0;
        std::deque<std::unique_ptr<OutgoingMessage>> queue;
        int failure_status = 0;
        std::string failure;
    };
    struct InConn {
        UniqueFd fd;
        int rank = -1;         // known after the Hello record
        std::string addr;      // the peer's published address (from Hello)
        std::string from;      // the socket's remote address, until Hello
        std::unique_ptr<StreamDecoder> decoder;
        bool goodbye = false;
        bool closed = false;
    };

    OutConn &out_conn(int dest);
    void start_connect(OutConn &c);
    bool flush(OutConn &c);
    void fail_out(OutConn &c, int status, const std::string &message);
    bool check_out(OutConn &c, short revents);
    bool accept_all();
    bool read_in(InConn &c);
    void close_in(InConn &c, int status, const std::string &message);
    void on_record(InConn &c, const IncomingRecord &rec);
    std::string describe(const InConn &c) const;
    void build_pollset();

    Context &ctx_;
    UniqueFd listener_;
    std::string my_addr_;
    std::vector<std::unique_ptr<OutConn>> out_;   // by rank, null until first send
    std::vector<OutConn *> out_live_;            // created connections
    std::vector<std::unique_ptr<InConn>> in_;
    std::vector<pollfd> pollset_;
    ByteBuffer staging_;
};

} // namespace llc
