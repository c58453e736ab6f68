// switch_asks.hpp - the receiver-driven hybrid's switching channel: the
// asks a receiver has sent to its sources ("send to me on tcp" / "on udp")
// and not yet had answered.
//
// The paper keeps one DC queue pair per node for transport switching, apart
// from the data queue pairs, so that a switching request never waits behind
// data.  Here the asks and their answers are datagrams of their own
// (UdpType::SwitchAsk / SwitchAnswer) on the udp socket, outside the
// numbered per-pair stream: an ask is not held back by the stream's window
// or by a datagram lost before it.  It is not part of the reliable stream,
// so the receiver sends it again until the source answers (whether it
// complies or refuses); an ask that stays unanswered is given up after
// kMaxRetries and the policy's own patience (a few periods) takes over.
//
// Pure bookkeeping (no socket, no clock): UdpTransport sends what due()
// lists.  At most one ask per source is pending (a newer one replaces it),
// so the list is bounded by the sources the receiver tracks (LLC_MAX_CONTEXTS).
// What an ask and its answer carry (SwitchWant, SwitchVerdict) is in
// wire/am_protocol.hpp.
#pragma once

#include <netinet/in.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace llc {

class SwitchAsks {
public:
    static constexpr uint16_t kMaxRetries = 8;

    struct Ask {
        int dest = -1;
        uint64_t number = 0; // the receiver's policy period when asked: increases per receiver
        uint64_t want = 0;   // SwitchWant
        sockaddr_in addr{};
        uint64_t detail = 0; // SwitchWant::UdpRing: the ring's geometry (RingAddressing::pack)
        uint64_t sent_us = 0;
        uint16_t retries = 0;
    };

    // Record a new ask (replacing any pending one to dest).
    Ask &add(int dest, uint64_t number, uint64_t want, const sockaddr_in &addr, uint64_t now_us,
             uint64_t detail = 0);
    // The answer to (src, number) arrived: true if it was pending (then
    // removed); want (if given) is set to what that ask asked for.
    bool answered(int src, uint64_t number, uint64_t *want = nullptr);
    // Forget the ask to dest (it failed, or the receiver no longer cares).
    void drop(int dest);
    void clear() { asks_.clear(); }

    // The asks whose timer ran out: fn(Ask &) resends each (its retries and
    // sent_us are updated here); those past kMaxRetries are removed and
    // counted in the return value's second member.
    struct DueResult {
        size_t resent = 0;
        size_t given_up = 0;
    };
    template <class Resend, class Timeout>
    DueResult due(uint64_t now_us, Timeout timeout_us, Resend resend)
    {
        DueResult r;
        for (size_t i = 0; i < asks_.size();) {
            Ask &a = asks_[i];
            if (now_us - a.sent_us < timeout_us(a)) {
                i++;
                continue;
            }
            if (a.retries >= kMaxRetries) {
                asks_[i] = asks_.back();
                asks_.pop_back();
                r.given_up++;
                continue;
            }
            a.retries++;
            a.sent_us = now_us;
            resend(a);
            r.resent++;
            i++;
        }
        return r;
    }

    size_t size() const { return asks_.size(); }
    bool empty() const { return asks_.empty(); }
    size_t capacity_bytes() const { return asks_.capacity() * sizeof(Ask); }

private:
    // Removes the first ask that matches (order does not matter: the last one
    // takes its place); false if none does.
    template <class Pred>
    bool remove_first(Pred pred)
    {
        for (Ask &a : asks_) {
            if (!pred(a))
                continue;
            a = asks_.back();
            asks_.pop_back();
            return true;
        }
        return false;
    }

    std::vector<Ask> asks_;
};

} // namespace llc
