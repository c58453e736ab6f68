// c_api.cpp - the extern "C" functions of llc.h: argument checks, exception to
// status conversion, and the llc_context handle.
#include "core/api_checks.hpp"
#include "core/context.hpp"
#include "core/errors.hpp"
#include "llc.h"
#include "llc_fast.h"
#include "mem/mem_accounting.hpp"
#include "rma/rma.hpp"
#include "tagged/tagged.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

struct llc_context {
    explicit llc_context(const llc_init_params_t &params) : impl(params, this) {}
    llc::Context impl;
};

namespace {

// Record the message of a failed call where llc_last_error finds it.
int failed(llc_context_t *ctx, int status, const std::string &message)
{
    if (ctx)
        ctx->impl.set_last_error(message);
    else
        llc::set_last_init_error(message);
    return status;
}

// Run fn, converting exceptions to a status and recording the message.  The
// success path builds nothing: llc_progress and the tagged calls run here.
template <class Fn> int guarded(llc_context_t *ctx, Fn &&fn)
{
    try {
        return fn();
    } catch (const llc::Error &e) {
        return failed(ctx, e.status(), e.what());
    } catch (const std::bad_alloc &) {
        return failed(ctx, LLC_ERR_NOMEM, "out of memory");
    } catch (const std::exception &e) {
        return failed(ctx, LLC_ERR_SYSTEM, std::string("internal error: ") + e.what());
    } catch (...) {
        return failed(ctx, LLC_ERR_SYSTEM, "internal error: unknown exception");
    }
}

int null_context(const char *fn)
{
    llc::set_last_init_error(std::string(fn) + ": context is NULL");
    return LLC_ERR_INVALID;
}

} // namespace

llc::Context &llc::context_of(llc_context_t *handle) { return handle->impl; }

extern "C" {

int llc_init(const llc_init_params_t *params, llc_context_t **ctx)
{
    if (ctx)
        *ctx = nullptr;
    return guarded(nullptr, [&]() -> int {
        if (!params || !ctx)
            throw llc::Error(LLC_ERR_INVALID, "llc_init: params and ctx must not be NULL");
        *ctx = new llc_context(llc::current_init_params(*params));
        return LLC_OK;
    });
}

int llc_finalize(llc_context_t *ctx) { return llc_finalize_all(&ctx, 1); }

int llc_finalize_all(llc_context_t *const *ctxs, int count)
{
    if (!ctxs || count < 1)
        return failed(nullptr, LLC_ERR_INVALID, "llc_finalize_all: ctxs must not be NULL and count must be >= 1");
    for (int i = 0; i < count; i++) {
        if (!ctxs[i])
            return null_context("llc_finalize");
        for (int j = 0; j < i; j++)
            if (ctxs[j] == ctxs[i])
                return failed(nullptr, LLC_ERR_INVALID,
                              "llc_finalize_all: context " + std::to_string(i) + " is also context " +
                                  std::to_string(j) + " of the list");
    }
    // From inside a handler nothing is finalized (the contexts stay alive).
    for (int i = 0; i < count; i++)
        if (ctxs[i]->impl.in_handler())
            return failed(ctxs[i], LLC_ERR_STATE, "llc_finalize called from inside a handler or completion callback");
    for (int i = 0; i < count; i++)
        guarded(ctxs[i], [&]() -> int { // (out of memory: noted, the fence below still runs)
            ctxs[i]->impl.finalize_begin();
            return LLC_OK;
        });
    // One drain for all: each context's round in turn until every one is
    // drained, so that none is left unprogressed while another waits.
    std::vector<bool> drained(size_t(count), false);
    for (int left = count; left > 0;)
        for (int i = 0; i < count; i++)
            if (!drained[size_t(i)] && ctxs[i]->impl.finalize_step()) {
                drained[size_t(i)] = true;
                left--;
            }
    // The fences, in the order given; the first error is returned.
    int first = LLC_OK;
    for (int i = 0; i < count; i++) {
        llc_context_t *ctx = ctxs[i];
        int rc = guarded(ctx, [&]() -> int {
            ctx->impl.finalize_end();
            return LLC_OK;
        });
        if (ctx->impl.config().mem_report) {
            // LLC_MEM_REPORT=1: what the context holds at the end, before teardown.
            std::string text = llc::MemWalk::measure(ctx->impl).format(ctx->impl.rank());
            std::fputs(text.c_str(), stderr);
            std::fflush(stderr);
        }
        if (rc != LLC_OK && first == LLC_OK) {
            first = rc;
            llc::set_last_init_error(ctx->impl.last_error()); // the context is gone after this call
        }
        delete ctx;
    }
    return first;
}

uint32_t llc_caps(const llc_context_t *ctx)
{
    return ctx ? LLC_CAP_AM | LLC_CAP_TAGGED | LLC_CAP_REMOTE_WRITE | LLC_CAP_RMA : 0;
}

int llc_rank(const llc_context_t *ctx) { return ctx ? ctx->impl.rank() : -1; }
int llc_size(const llc_context_t *ctx) { return ctx ? ctx->impl.size() : -1; }
int llc_node_of(const llc_context_t *ctx, int rank) { return ctx ? ctx->impl.node_of(rank) : -1; }

int llc_am_register(llc_context_t *ctx, unsigned id, llc_am_handler_t handler, void *arg)
{
    if (!ctx)
        return null_context("llc_am_register");
    return guarded(ctx, [&]() -> int {
        ctx->impl.register_handler(id, handler, arg);
        return LLC_OK;
    });
}

int llc_am_send(llc_context_t *ctx, int dest, unsigned id, const void *hdr, size_t hdr_len,
                const llc_iov_t *iov, int iovcnt, llc_completion_t cb, void *cb_arg)
{
    if (!ctx)
        return null_context("llc_am_send");
    return guarded(ctx, [&]() -> int { return ctx->impl.am_send(dest, id, hdr, hdr_len, iov, iovcnt, cb, cb_arg); });
}

int llc_progress(llc_context_t *ctx, int *progressed)
{
    if (progressed)
        *progressed = 0;
    if (!ctx)
        return null_context("llc_progress");
    return guarded(ctx, [&]() -> int { return ctx->impl.progress(progressed); });
}

int llc_note_activity(llc_context_t *ctx)
{
    if (!ctx)
        return null_context("llc_note_activity");
    ctx->impl.note_activity();
    return LLC_OK;
}

int llc_set_idle_hook(llc_context_t *ctx, llc_idle_hook_t hook, void *arg)
{
    if (!ctx)
        return null_context("llc_set_idle_hook");
    ctx->impl.set_idle_hook(hook, arg);
    return LLC_OK;
}

const char *llc_strerror(int status) { return llc::status_text(status); }

const char *llc_last_error(const llc_context_t *ctx)
{
    return ctx ? ctx->impl.last_error() : llc::last_init_error();
}

int llc_get_stats_sized(const llc_context_t *ctx, llc_stats_t *out, size_t size)
{
    if (!ctx || !out || size == 0)
        return LLC_ERR_INVALID;
    llc_stats_t all = ctx->impl.stats();
    std::memcpy(out, &all, std::min(size, sizeof(all)));
    return LLC_OK;
}

llc_fast_peer_t *llc_fast_peer(llc_context_t *ctx, int dest, int layout)
{
    // Only the current layout: the chunk alignment is the sender's to keep.
    if (!ctx || layout != LLC_FAST_LAYOUT)
        return nullptr;
    try {
        return ctx->impl.fast_peer(dest);
    } catch (...) {
        return nullptr;
    }
}

llc_fast_poll_t *llc_fast_poll(llc_context_t *ctx, int layout)
{
    if (!ctx || layout != LLC_FAST_LAYOUT)
        return nullptr;
    return ctx->impl.fast_poll();
}

int llc_tsend(llc_context_t *ctx, int dest, uint32_t source, uint64_t tag, const void *buf, size_t len,
              unsigned flags, llc_treq_t *req)
{
    if (!ctx)
        return null_context("llc_tsend");
    return guarded(ctx, [&]() -> int { return ctx->impl.tagged().send(dest, source, tag, buf, len, flags, req); });
}

int llc_trecv(llc_context_t *ctx, int source, uint64_t tag, uint64_t ignore, void *buf, size_t len, llc_treq_t *req)
{
    if (!ctx)
        return null_context("llc_trecv");
    return guarded(ctx, [&]() -> int { return ctx->impl.tagged().recv(source, -1, tag, ignore, buf, len, req); });
}

int llc_trecv_from(llc_context_t *ctx, int source, int src_rank, uint64_t tag, uint64_t ignore, void *buf, size_t len,
                   llc_treq_t *req)
{
    if (!ctx)
        return null_context("llc_trecv_from");
    return guarded(ctx,
                   [&]() -> int { return ctx->impl.tagged().recv(source, src_rank, tag, ignore, buf, len, req); });
}

int llc_tprobe(llc_context_t *ctx, int source, uint64_t tag, uint64_t ignore, int *found, llc_treq_t *info)
{
    if (!ctx)
        return null_context("llc_tprobe");
    return guarded(ctx, [&]() -> int {
        bool f = ctx->impl.tagged().probe(source, tag, ignore, info);
        if (found)
            *found = f;
        return LLC_OK;
    });
}

int llc_tmprobe(llc_context_t *ctx, int source, uint64_t tag, uint64_t ignore, int *found, llc_tmsg_t **msg,
                llc_treq_t *info)
{
    if (!ctx)
        return null_context("llc_tmprobe");
    return guarded(ctx, [&]() -> int {
        if (!msg)
            throw llc::Error(LLC_ERR_INVALID, "llc_tmprobe: msg is NULL");
        *msg = ctx->impl.tagged().mprobe(source, tag, ignore, info);
        if (found)
            *found = *msg != nullptr;
        return LLC_OK;
    });
}

int llc_tmrecv(llc_context_t *ctx, llc_tmsg_t *msg, void *buf, size_t len, llc_treq_t *req)
{
    if (!ctx)
        return null_context("llc_tmrecv");
    return guarded(ctx, [&]() -> int { return ctx->impl.tagged().mrecv(msg, buf, len, req); });
}

int llc_tcancel(llc_context_t *ctx, llc_treq_t *req, int *cancelled)
{
    if (!ctx)
        return null_context("llc_tcancel");
    return guarded(ctx, [&]() -> int {
        llc::Tagged::Cancel c = ctx->impl.tagged().cancel(req);
        if (cancelled)
            *cancelled = c == llc::Tagged::Cancel::Done;
        return c == llc::Tagged::Cancel::Pending ? LLC_INPROGRESS : LLC_OK;
    });
}

int llc_mem_register(llc_context_t *ctx, void *addr, size_t len, unsigned flags, llc_region_t **out)
{
    if (!ctx)
        return null_context("llc_mem_register");
    return guarded(ctx, [&]() -> int {
        if (!out)
            throw llc::Error(LLC_ERR_INVALID, "llc_mem_register: out is NULL");
        *out = ctx->impl.rma().register_region(addr, len, flags);
        return LLC_OK;
    });
}

int llc_region_key(const llc_region_t *region, void *buf, size_t cap, size_t *len)
{
    return guarded(nullptr, [&]() -> int {
        llc::Rma::pack_key(region, buf, cap);
        if (len)
            *len = LLC_REGION_KEY_BYTES;
        return LLC_OK;
    });
}

int llc_mem_deregister(llc_context_t *ctx, llc_region_t *region)
{
    if (!ctx)
        return null_context("llc_mem_deregister");
    return guarded(ctx, [&]() -> int {
        ctx->impl.rma().deregister_region(region);
        return LLC_OK;
    });
}

int llc_put(llc_context_t *ctx, int dest, const void *src, size_t len, const void *key, uint64_t offset,
            llc_treq_t *req)
{
    if (!ctx)
        return null_context("llc_put");
    return guarded(ctx, [&]() -> int { return ctx->impl.rma().put(dest, src, len, key, offset, req); });
}

int llc_get(llc_context_t *ctx, int dest, void *dst, size_t len, const void *key, uint64_t offset, llc_treq_t *req)
{
    if (!ctx)
        return null_context("llc_get");
    return guarded(ctx, [&]() -> int { return ctx->impl.rma().get(dest, dst, len, key, offset, req); });
}

int llc_mem_report(const llc_context_t *ctx, llc_mem_entry_t *out, int max)
{
    if (!ctx || max < 0 || (max > 0 && !out))
        return LLC_ERR_INVALID;
    try {
        return llc::MemWalk::measure(ctx->impl).export_to(out, max);
    } catch (...) {
        return LLC_ERR_NOMEM;
    }
}

} // extern "C"
