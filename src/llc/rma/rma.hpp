// rma.hpp - one-sided put and get on registered regions (doc/libllc-rma.md).
//
// The Context owns one Rma, as it owns Tagged.  An operation takes one of
// three paths, chosen at the call:
//   self    dest is this process: the key is checked against the own region
//           table and the bytes copied (memcpy); complete at the call;
//   cma     dest shares the node, the node transport can reach its memory
//           (CapRemoteRead) and the kernel permits process_vm_*: the origin
//           reads the owner's live word for the key's region (a deregistered
//           region reads 0), then writes or reads the bytes; complete at the
//           call.  EPERM/ENOSYS sends this peer's later operations down the
//           record path;
//   record  everything else (tcp, udp, verbs through the network transport;
//           shm without CMA): a Put or Get record (rma_wire.hpp) the owner
//           serves from its progress, answered by Ack, GetReply or Nack.
//
// Requests are the caller's llc_treq_t (RmaOpState in its internal words);
// on the wire they are named by tokens of ops_, looked up and checked
// (rank, kind) before anything is touched.  Records that do not fit are
// dropped and counted (rma_rejected), as the tagged protocol does.  A
// request completes once its reply has come and the transport is done with
// its payload; when its target fails (Context::peer_failed), with
// LLC_ERR_PEER.
#pragma once

#include "auth/job_secret.hpp"
#include "rma/region_table.hpp"
#include "support/token_table.hpp"

#include "llc.h"

#include <cstdint>
#include <string>
#include <vector>

namespace llc {

class Context;
class Rma;

// The state of a put or get, in the internal words of its llc_treq_t.
struct RmaOpState {
    uint64_t magic; // kMagic while in flight
    Rma *owner;
    uint64_t token; // in Rma::ops_ while a reply is awaited, else 0
    char *dst;      // get: where the bytes go
    uint64_t length;
    uint64_t offset;
    int32_t peer;
    uint8_t is_get;
    uint8_t awaiting_reply; // Ack, GetReply or Nack still to come
    uint8_t awaiting_send;  // the transport still holds the record (its payload: the put's source)
    uint8_t spare;
    static constexpr uint64_t kMagic = 0x216176722d636c6cull; // "llc-rva!"
};
static_assert(sizeof(RmaOpState) <= sizeof(((llc_treq_t *)nullptr)->internal_), "RmaOpState fits llc_treq_t");
inline RmaOpState &rma_state_of(llc_treq_t *req) { return *reinterpret_cast<RmaOpState *>(req->internal_); }
inline llc_treq_t *rma_request_of(RmaOpState *s)
{
    return reinterpret_cast<llc_treq_t *>(reinterpret_cast<char *>(s) - offsetof(llc_treq_t, internal_));
}

class Rma {
public:
    Rma(Context &ctx, uint64_t nonce);
    Rma(const Rma &) = delete;
    Rma &operator=(const Rma &) = delete;

    llc_region *register_region(void *addr, size_t len, unsigned flags);
    void deregister_region(llc_region *region);
    // llc_region_key (the region knows its table; no context needed).
    static void pack_key(const llc_region *region, void *buf, size_t cap);

    int put(int dest, const void *src, size_t len, const void *key, uint64_t offset, llc_treq_t *req);
    int get(int dest, void *dst, size_t len, const void *key, uint64_t offset, llc_treq_t *req);

    // The transports reported dest failed: its operations complete with
    // LLC_ERR_PEER, and later ones fail at the call.
    void peer_failed(int dest);

    // Where the payload of a record from src may be read straight from the
    // socket (Context::payload_destination, tcp): a get reply into the
    // waiting get's buffer, a put into the region it names, once the record's
    // header passes the same checks its handler makes; nullptr otherwise (the
    // payload is gathered and copied by the handler).
    char *payload_destination(int src, unsigned handler, const void *hdr, size_t hdr_len, uint64_t len);

    const RegionTable &regions() const { return regions_; }
    size_t ops_in_flight() const { return ops_.in_use(); }

private:
    enum class Path : uint8_t { Self, Cma, Record };
    // The checks every path makes at the origin (arguments, the key's
    // owner, bounds against the key's length): the key, unpacked; throws.
    RegionKey checked_key(bool is_get, int dest, const void *buf, size_t len, const void *key, uint64_t offset,
                          llc_treq_t *req) const;
    Path path_to(int dest, const RegionKey &k) const;
    int access(bool is_get, int dest, void *local, size_t len, const void *key, uint64_t offset, llc_treq_t *req);
    int self_access(bool is_get, void *local, size_t len, const RegionKey &k, uint64_t offset);
    // Done, or -1: not permitted here (use the record path); throws on errors.
    int cma_access(bool is_get, int dest, void *local, size_t len, const RegionKey &k, uint64_t offset);
    int send_record(bool is_get, int dest, void *local, size_t len, const RegionKey &k, uint64_t offset,
                    llc_treq_t *req);

    static void on_put(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *data,
                       size_t data_len);
    static void on_get(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *, size_t);
    static void on_ack(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *, size_t);
    static void on_nack(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *, size_t);
    static void on_get_reply(llc_context_t *, void *self, int src, const void *hdr, size_t hdr_len, const void *data,
                             size_t data_len);
    static void on_record_sent(void *req, int status);

    // Owner: refuse an access (Nack) with status (the origin words the message).
    void refuse(int src, uint64_t op, int status, uint64_t region_length);
    // Origin: the request a reply names, if it awaits one from src of that
    // kind (is_get: 1 get, 0 put, -1 either); else nullptr, counted (reject).
    RmaOpState *awaiting_op(int src, uint64_t token, int is_get, const char *what);
    // The reply came (or will never come): the op completes once the
    // transport is done with it too.
    void reply_done(RmaOpState &op, int status, const std::string &why);
    void maybe_finish(RmaOpState &op);
    std::string describe(const RmaOpState &op) const;
    void reject(int src, const std::string &why);
    bool header_ok(const void *hdr, size_t hdr_len, size_t want, int src, const char *what);

    Context &ctx_;
    RegionTable regions_;
    TokenTable<RmaOpState> ops_{"puts and gets awaiting a reply"};
    std::vector<uint8_t> cma_refused_; // per rank: process_vm_* was refused (EPERM/ENOSYS): record path
    std::vector<uint8_t> failed_;      // per rank: the transports reported it failed
    RejectLog rejects_{"put/get records (malformed, or naming no request of ours) were", "rma_rejected"};
};

} // namespace llc
