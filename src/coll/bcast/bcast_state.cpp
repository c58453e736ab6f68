// Placeholder until the virtual-rank broadcast lands: its state type.
#include "../state.hpp"

namespace llc::coll {
struct BcastState {};
void BcastStateDeleter::operator()(BcastState *s) const { delete s; }
}  // namespace llc::coll
