// alloc_counter.cpp - replacement global operator new/delete that count calls
// (for the zero-allocation checks of the message fast path).
//
// Under ThreadSanitizer the operators cannot be replaced: clang links the
// TSan runtime's own operator new/delete whole (tsan_new_delete.cpp.o), so
// the definitions here would clash at link time.  There the runtime's
// allocation hook counts instead: every heap allocation (operator new and
// malloc alike), a superset of what is counted otherwise, so a
// zero-allocation check is no weaker.
#include "common/alloc_counter.hpp"

#include <atomic>
#include <cstdlib>
#include <new>

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LLCTEST_TSAN 1
#include <sanitizer/allocator_interface.h>
#endif
#endif

namespace {
std::atomic<uint64_t> g_allocations{0};

#ifdef LLCTEST_TSAN
void on_malloc(const volatile void *, std::size_t) { g_allocations.fetch_add(1, std::memory_order_relaxed); }
void on_free(const volatile void *) {}
struct InstallHooks {
    InstallHooks() { __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free); }
} install_hooks;
#else

void *allocate(std::size_t n)
{
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    if (void *p = std::malloc(n ? n : 1))
        return p;
    throw std::bad_alloc();
}
#endif
} // namespace

namespace llctest {
uint64_t allocations_so_far() { return g_allocations.load(std::memory_order_relaxed); }
} // namespace llctest

#ifndef LLCTEST_TSAN
void *operator new(std::size_t n) { return allocate(n); }
void *operator new[](std::size_t n) { return allocate(n); }
void *operator new(std::size_t n, const std::nothrow_t &) noexcept
{
    try {
        return allocate(n);
    } catch (...) {
        return nullptr;
    }
}
void *operator new[](std::size_t n, const std::nothrow_t &t) noexcept { return operator new(n, t); }
void operator delete(void *p) noexcept { std::free(p); }
void operator delete[](void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }
void operator delete[](void *p, std::size_t) noexcept { std::free(p); }
#endif
