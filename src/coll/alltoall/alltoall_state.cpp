// Placeholder until the dynamic Alltoall lands: its state type.
#include "../state.hpp"

namespace llc::coll {
struct AlltoallState {};
void AlltoallStateDeleter::operator()(AlltoallState *s) const { delete s; }
}  // namespace llc::coll
