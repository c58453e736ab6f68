// tagged_am_keyed.cpp - large active messages to a peer whose transport has
// keyed remote reads (CapKeyedRead: verbs, RDMA READ with an rkey): the same
// AmRts record as for CMA (tagged_am.cpp), with kAmKeyed and KeyedSpan
// entries that the transport's expose() gave (the pieces pinned until the
// send completes: on Fin, Fail, or the peer's failure).  The receiver
// checks the record, holds the sender's later records back
// (Context::hold_records_from) and starts the transport's read_keyed; when
// it ends, it answers Fin and runs the handler on the bytes read, or
// answers Fail when a READ failed (the spans named memory the sender had
// not exposed, or the peer went), and then lets the held records run, in
// order.  When no read could start here (no registered landing buffer) it
// answers Cts and the payload is streamed as for CMA (receive_am_streamed).
#include "tagged/tagged.hpp"
#include "tagged/am_spans.hpp"

#include "core/context.hpp"
#include "core/errors.hpp"
#include "transport/transport.hpp"

#include <memory>
#include <new>
#include <string>

namespace llc {

namespace {

// The hold of a sender's records while a keyed read of its message runs:
// no Data record is awaited (RequestTokens never issues this token).
constexpr uint64_t kKeyedReadHold = ~uint64_t(0);

} // namespace

bool Tagged::expose_am(int dest, AmSend &s, AmRtsWire &w)
{
    std::string why;
    s.exposure = ctx_.transport_to(dest).expose(dest, s.iov.data(), int(s.iov.size()), &why);
    if (!s.exposure)
        return false;
    for (const KeyedSpan &span : s.exposure->spans) {
        const char *b = reinterpret_cast<const char *>(&span);
        s.record.insert(s.record.end(), b, b + sizeof(span));
        w.length += span.len;
    }
    w.flags = kAmKeyed;
    return true;
}

void Tagged::arrived_am_keyed(int src, const AmRtsWire &w, const char *data, size_t data_len)
{
    const std::vector<KeyedSpan> spans = am_spans<KeyedSpan>(w, data, data_len);
    std::string bad = am_malformed(w, data_len, spans);
    Transport &t = ctx_.transport_to(src);
    if (bad.empty() && !t.caps().has(CapKeyedRead))
        bad = "keyed spans, from a peer reached by " + std::string(t.caps().name) + " (no keyed reads)";
    if (!bad.empty()) {
        // A record no libllc sends: not delivered; its sender's send (if
        // the token names one) fails.
        reject(src, "a large active message with " + bad);
        answer(src, kTagFail, w.sreq, 0);
        return;
    }
    const uint64_t id = next_keyed_id_++;
    AmKeyedRecv &k = am_keyed_[id];
    k.w = w;
    k.hdr.assign(data, data + w.hdr_len);
    ctx_.hold_records_from(src, kKeyedReadHold); // later records wait for this one
    std::weak_ptr<int> alive = alive_;
    std::string why;
    bool started = false;
    try {
        started = t.read_keyed(
            src, spans.data(), spans.size(), w.length,
            [this, alive, src, id](const KeyedReadResult &res) {
                if (alive.lock())
                    keyed_read_done(src, id, res, true);
            },
            &why);
    } catch (const Error &e) {
        why = e.what();
    }
    if (!started) {
        KeyedReadResult res;
        res.error = why;
        keyed_read_done(src, id, res, false);
    }
}

void Tagged::keyed_read_done(int src, uint64_t id, const KeyedReadResult &res, bool started)
{
    auto it = am_keyed_.find(id);
    if (it == am_keyed_.end())
        return;
    const AmKeyedRecv k = std::move(it->second);
    am_keyed_.erase(it);
    if (res.data) {
        answer(src, kTagFin, k.w.sreq, 0);
        struct Release {
            Context &ctx;
            int src;
            ~Release() { ctx.release_records_from(src); }
        } release{ctx_, src}; // (also when the handler throws)
        ctx_.run_handler(src, k.w.handler, k.hdr.data(), k.w.hdr_len, res.data, res.len);
        return;
    }
    if (!started) {
        // Nothing could be read here (no landing buffer): streamed instead,
        // the hold now waiting for its Data.
        try {
            receive_am_streamed(src, k.w, k.hdr.data());
            return;
        } catch (const std::bad_alloc &) {
            // no memory for it either: not delivered, below
        }
    }
    // The spans could not be read (memory the sender had not exposed, the
    // peer or the transport failed): this message is not delivered and its
    // send fails, nothing else does.
    am_keyed_rejects_.note(ctx_.rank(), "rank " + std::to_string(src),
                           "its large active message of " + std::to_string(k.w.length) + " bytes in " +
                               std::to_string(k.w.spans) + " keyed span(s) could not be read (" + res.error +
                               "): not delivered, its send fails with LLC_ERR_PEER");
    try {
        answer(src, kTagFail, k.w.sreq, 0);
    } catch (const Error &) {
        // the transport failed: the sender hears it from its own side
    }
    ctx_.release_records_from(src);
}

} // namespace llc
