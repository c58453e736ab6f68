// rma_fuzz.cpp - libFuzzer target: the one-sided records (Put, Get, Ack,
// Nack, GetReply) as a job member could send them, interleaved with real
// puts and gets, registrations and deregistrations, so that live, stale and
// forged region tokens, nonces, offsets and lengths all occur.
//
// A one-rank context (an in-memory bootstrap); every record goes to our own
// rank through libllc's send path, so the self transport hands it to
// Context::deliver and the rma handlers exactly as the other transports do.
// Nothing a record says may crash, corrupt memory (ASan), fail llc_progress,
// write outside a region (guard bytes around each), write into a region
// registered read-only, or leave an operation in the table.
//
// Input: operations, each one byte (op) and then its own bytes:
//   0 forge a record    handler, region choice, nonce choice, header-size
//                       choice, 40 header bytes, payload length (2), payload
//   1 put               region choice, offset (2), length (2)
//   2 get               region choice, offset (2), length (2)
//   3 progress          count
//   4 re-register       the third region (its old keys go stale)
#include "core/context.hpp"
#include "one_rank.hpp"
#include "rma/rma.hpp"
#include "rma/rma_wire.hpp"

#include "llc.h"

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr size_t kGuard = 64;
constexpr uint8_t kGuardByte = 0xa5;
constexpr size_t kRegionBytes[3] = {4096, 1024, 512};

// A region with guard bytes on both sides.
struct Guarded {
    std::vector<uint8_t> mem;
    size_t len = 0;
    llc_region_t *region = nullptr;
    std::array<char, LLC_REGION_KEY_BYTES> key{};
    std::array<char, LLC_REGION_KEY_BYTES> stale{}; // the key of the previous registration

    uint8_t *data() { return mem.data() + kGuard; }
    // (Re-)register: the previous registration's key becomes `stale`.
    void reg(llc_context_t *ctx, size_t bytes, unsigned flags)
    {
        const bool again = region != nullptr;
        if (again && llc_mem_deregister(ctx, region) != LLC_OK)
            std::abort();
        stale = key;
        len = bytes;
        mem.assign(bytes + 2 * kGuard, kGuardByte);
        if (llc_mem_register(ctx, data(), bytes, flags, &region) != LLC_OK ||
            llc_region_key(region, key.data(), key.size(), nullptr) != LLC_OK) {
            std::fprintf(stderr, "rma_fuzz: register: %s\n", llc_last_error(ctx));
            std::abort();
        }
        if (!again)
            stale = key;
    }
    bool guards_intact() const
    {
        for (size_t i = 0; i < kGuard; i++)
            if (mem[i] != kGuardByte || mem[kGuard + len + i] != kGuardByte)
                return false;
        return true;
    }
};

struct Regions {
    Guarded r[3];                  // 0: read and write, 1: read only, 2: re-registered now and then
    std::vector<uint8_t> readonly; // what region 1 holds, never to change

    // A key: of one of the regions, a stale one, or raw bytes.
    const char *key(uint8_t choice, const std::array<char, LLC_REGION_KEY_BYTES> &raw) const
    {
        switch (choice % 5) {
        case 0:
            return r[0].key.data();
        case 1:
            return r[1].key.data();
        case 2:
            return r[2].key.data();
        case 3:
            return r[2].stale.data();
        default:
            return raw.data();
        }
    }
};

void check(bool ok, const char *what)
{
    if (!ok) {
        std::fprintf(stderr, "rma_fuzz: %s\n", what);
        std::abort();
    }
}

void check_regions(Regions &rg)
{
    for (const Guarded &g : rg.r)
        check(g.guards_intact(), "a byte next to a region changed");
    check(std::memcmp(rg.r[1].data(), rg.readonly.data(), rg.r[1].len) == 0,
          "a region registered read-only was written");
}

void progress(llc_context_t *ctx, Regions &rg, int n)
{
    for (int i = 0; i < n; i++) {
        int rc = llc_progress(ctx, nullptr);
        if (rc != LLC_OK) {
            std::fprintf(stderr, "rma_fuzz: llc_progress: %s: %s\n", llc_strerror(rc), llc_last_error(ctx));
            std::abort();
        }
    }
    check_regions(rg);
}

// A record to ourselves, as a peer could send it.
void forge(llc_context_t *ctx, const Regions &rg, fuzz::Input &in)
{
    unsigned handler = llc::kRmaPut + in.byte() % (llc::kRmaHandlerEnd - llc::kRmaPut);
    uint8_t region_choice = in.byte(), nonce_choice = in.byte(), size_choice = in.byte();
    alignas(8) uint8_t hdr[40];
    for (auto &b : hdr)
        b = in.byte();
    size_t hdr_len;
    if (handler == llc::kRmaPut || handler == llc::kRmaGet) {
        llc::RmaAccess a;
        std::memcpy(&a, hdr, sizeof(a));
        std::array<char, LLC_REGION_KEY_BYTES> raw{};
        llc::RegionKey k;
        std::memcpy(&k, rg.key(region_choice, raw), sizeof(k));
        if (region_choice % 5 != 4)
            a.region = k.region;
        if (nonce_choice & 1)
            a.nonce = k.nonce;
        if (nonce_choice & 2) { // near the region's bounds
            a.offset %= 2 * kRegionBytes[0];
            a.length %= 2 * kRegionBytes[0];
        }
        std::memcpy(hdr, &a, sizeof(a));
        hdr_len = sizeof(a);
    } else {
        hdr_len = sizeof(llc::RmaReply);
    }
    if (size_choice < 16)
        hdr_len = size_choice % sizeof(hdr); // a header of the wrong size (mostly)
    size_t len = in.u16() % (2 * kRegionBytes[0]);
    if (handler == llc::kRmaPut && (size_choice & 32) && hdr_len == sizeof(llc::RmaAccess)) {
        llc::RmaAccess a; // a payload as long as the header says, mostly
        std::memcpy(&a, hdr, sizeof(a));
        len = size_t(a.length % (2 * kRegionBytes[0]));
    }
    std::vector<char> payload(len);
    for (auto &c : payload)
        c = char(in.byte());
    llc_iov_t iov{payload.data(), len};
    llc::context_of(ctx).send_am(llc_rank(ctx), handler, hdr, hdr_len, &iov, 1, nullptr, nullptr);
}

// A real put or get to our own rank: refused at the call or complete at once.
void access(llc_context_t *ctx, Regions &rg, fuzz::Input &in, bool is_get)
{
    std::array<char, LLC_REGION_KEY_BYTES> raw{};
    const char *key = rg.key(in.byte(), raw);
    uint64_t offset = in.u16() % (2 * kRegionBytes[0]);
    size_t len = in.u16() % (2 * kRegionBytes[0]);
    std::vector<char> buf(len, 'b');
    llc_treq_t req{};
    int rc = is_get ? llc_get(ctx, 0, buf.data(), len, key, offset, &req)
                    : llc_put(ctx, 0, buf.data(), len, key, offset, &req);
    check(rc == LLC_OK || rc == LLC_ERR_RANGE || rc == LLC_ERR_KEY || rc == LLC_ERR_INVALID,
          "a put or get to our own rank neither completed nor was refused at the call");
    check_regions(rg);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz::Input in{data, size};
    fuzz::MemoryBootstrap boot;
    llc_context_t *ctx = fuzz::one_rank_context("rma_fuzz", boot);
    Regions rg;
    rg.r[0].reg(ctx, kRegionBytes[0], 0);
    rg.r[1].reg(ctx, kRegionBytes[1], LLC_REGION_REMOTE_READ);
    rg.r[2].reg(ctx, kRegionBytes[2], 0);
    for (size_t i = 0; i < rg.r[1].len; i++)
        rg.r[1].data()[i] = uint8_t(i * 7);
    rg.readonly.assign(rg.r[1].data(), rg.r[1].data() + rg.r[1].len);
    while (in.left) {
        switch (in.byte() % 5) {
        case 0:
            forge(ctx, rg, in);
            break;
        case 1:
            access(ctx, rg, in, false);
            break;
        case 2:
            access(ctx, rg, in, true);
            break;
        case 3:
            progress(ctx, rg, 1 + in.byte() % 8);
            break;
        case 4:
            rg.r[2].reg(ctx, kRegionBytes[2], 0);
            break;
        }
    }
    progress(ctx, rg, 16);
    check(llc::context_of(ctx).rma().ops_in_flight() == 0, "an operation is left in the table");
    llc_finalize(ctx);
    return 0;
}
