// tagged_peer_failure.cpp - what a failed peer does to the point-to-point
// requests of this process: every one that can only end with a record from
// that peer ends now, with LLC_ERR_PEER, so that no thread waits in vain,
// and the peers that live go on talking.
//
//   waits for dest                                  ends
//   send, request-to-send or synchronous eager     its reply event fails (a send the
//                                                   transport still holds ends with it)
//   receive that sent clear-to-send to dest        fails, nothing received
//   receive offered to dest                        unposted, fails
//   posted receive for dest, or for any source     unposted, fails (any source: the
//                                                   message it waits for may have been
//                                                   dest's, as MPI's fault-tolerance
//                                                   proposal fails such receives)
//   a receive for dest posted later                fails at the call (after the messages
//                                                   of dest that had arrived are taken)
//
// Receives posted without the sender's rank (llc_trecv, a label only) are
// not touched: nothing says which process would send to them.
#include "core/context.hpp"
#include "core/errors.hpp"
#include "tagged/tagged.hpp"
#include "tagged/tagged_util.hpp"

#include <string>
#include <vector>

namespace llc {

namespace {

// The rank a request waits for a record from (Tagged::request_awaiting's rule).
int awaited_peer(TreqState &r)
{
    return r.kind == TreqState::Send || r.awaiting == TreqState::AwaitOffer ? r.peer : request_of(&r)->src_rank;
}

} // namespace

void Tagged::fail_requests_for(int dest)
{
    failed_peers_.insert(dest);

    std::vector<TreqState *> awaiting;
    tokens_.for_each([&](TreqState *r) {
        if (awaited_peer(*r) == dest)
            awaiting.push_back(r);
    });
    for (TreqState *r : awaiting) {
        const auto what = TreqState::Await(r->awaiting);
        stop_awaiting(*r);
        if (r->kind == TreqState::Send) {
            send_event_done(*r, LLC_ERR_PEER);
            continue;
        }
        if (what == TreqState::AwaitOffer) {
            matcher_.unpost(*r);
            request_of(r)->src_rank = dest;
        }
        request_of(r)->received = 0;
        finish(*r, LLC_ERR_PEER, true);
    }

    std::vector<TreqState *> posted;
    matcher_.for_each_posted([&](TreqState *r) {
        if (r->awaiting == TreqState::AwaitNone && (r->peer == dest || r->source == LLC_ANY_SOURCE))
            posted.push_back(r);
    });
    for (TreqState *r : posted) {
        matcher_.unpost(*r);
        llc_treq_t *req = request_of(r);
        req->src_rank = dest;
        req->received = 0;
        finish(*r, LLC_ERR_PEER, true);
    }
}

void Tagged::refuse_receive_from_failed(int src_rank) const
{
    throw Error(LLC_ERR_PEER, "llc_trecv: rank " + std::to_string(src_rank) +
                                  " failed earlier (reported by the transport): a receive from it cannot complete");
}

} // namespace llc
