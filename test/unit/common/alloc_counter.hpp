// alloc_counter.hpp - counts the heap allocations made through operator new
// (libllc is C++: every allocation of its own goes through it) while a
// CountAllocations object lives.  The replacement operators are in
// alloc_counter.cpp, linked into the unit-test binary.
#pragma once

#include <cstdint>

namespace llctest {

uint64_t allocations_so_far(); // operator new calls since the program started

class CountAllocations {
public:
    CountAllocations() : start_(allocations_so_far()) {}
    uint64_t count() const { return allocations_so_far() - start_; }

private:
    uint64_t start_;
};

} // namespace llctest
