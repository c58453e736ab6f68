// C entry points that create and free the per-communicator state.
#include "state.hpp"

#include <new>

extern "C" llc_coll_state_t *llc_coll_state_create(int rank, int size)
{
    if (size < 1 || rank < 0 || rank >= size)
        return nullptr;
    auto *s = new (std::nothrow) llc_coll_state();
    if (s) {
        s->rank = rank;
        s->size = size;
    }
    return s;
}

extern "C" void llc_coll_state_free(llc_coll_state_t *state)
{
    delete state;
}
