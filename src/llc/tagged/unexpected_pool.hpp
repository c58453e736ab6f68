// unexpected_pool.hpp - records of unexpected messages, recycled.
//
// A message that arrives before its receive is posted is kept as an
// Unexpected record with a copy of its eager payload.  Allocating both per
// message put two heap allocations on every unexpected arrival; the pool
// keeps records that were given back, each with its payload buffer, in size
// classes (no buffer, 64, 256, 1 KiB, 4 KiB, 16 KiB), so that once a
// program's pattern has been seen an unexpected message costs no allocation.
// A payload above the largest class gets a buffer of its own, freed when the
// record is given back.  Each class keeps at most keep_limit(class) records,
// fewer of the larger ones, so that what a burst of unexpected messages
// leaves behind stays under about 140 KiB a process.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace llc {

struct Unexpected;

class UnexpectedPool {
public:
    static constexpr size_t kClasses = 6;       // class 0: no payload buffer
    static constexpr uint8_t kOwnBuffer = 0xff; // a payload above the largest class

    UnexpectedPool();
    ~UnexpectedPool();
    UnexpectedPool(const UnexpectedPool &) = delete;
    UnexpectedPool &operator=(const UnexpectedPool &) = delete;

    // A record whose data holds at least len bytes; every other field reset.
    Unexpected *take(size_t len);
    // Back to the pool (kept for reuse, or freed when its class is full).
    void give(Unexpected *u);
    // Records kept for reuse and the bytes they hold (with their buffers).
    size_t kept() const;
    size_t kept_bytes() const;

    static size_t class_bytes(size_t cls);
    // What one record holds: the record and its payload buffer.
    static size_t record_bytes(const Unexpected &u);
    static size_t keep_limit(size_t cls);

private:
    static void destroy(Unexpected *u);
    std::array<std::vector<Unexpected *>, kClasses> free_;
};

} // namespace llc
