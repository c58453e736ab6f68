// Binomial tree over tree positions and the virtual-rank table.
//
// Tree positions: 0 is the root.  Position v > 0 receives from
// v - lowbit(v); position v sends to v + m for every power of two m below
// lowbit(v) (below the top power of two for v == 0), largest m first, as long
// as v + m < size.  This is the tree of the paper (root 0 sends to 2^n, ...,
// 1; the receiver of 2^i serves 2^i .. 2^(i+1)-1) and of MPICH's binomial
// broadcast.
//
// Virtual-rank table: vr[real] = virtual rank, a permutation of 0..size-1
// (identity at first).  Mapping of a broadcast with root `r` onto tree
// positions ("exchange mapping"): the root takes position 0, the process
// holding virtual rank 0 takes the root's virtual rank, every other process
// sits at its virtual rank.  So a swap of two non-root processes swaps their
// positions in the tree of every root, and a table tuned for one root keeps
// the busy process at a leaf for the other roots too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace llc::coll::bcast {

inline int lowbit(int v) { return v & -v; }

// largest power of two strictly below size (0 for size 1)
inline int top_mask(int size)
{
    int m = 1;
    if (size <= 1)
        return 0;
    while (m * 2 < size)
        m *= 2;
    return m;
}

inline int tree_parent(int pos) { return pos == 0 ? -1 : pos - lowbit(pos); }

// children of `pos` in send order (largest subtree first)
template <class F>
inline void tree_for_children(int pos, int size, F &&f)
{
    int m = pos == 0 ? top_mask(size) : lowbit(pos) / 2;
    for (; m > 0; m /= 2)
        if (pos + m < size)
            f(pos + m);
}

// one past the last position of the subtree rooted at `pos` (positions
// pos .. pos + lowbit(pos) - 1, cut at size; the root's subtree is the tree)
inline int subtree_end(int pos, int size)
{
    if (pos == 0)
        return size;
    int end = pos + lowbit(pos);
    return end < size ? end : size;
}

inline int tree_nchildren(int pos, int size)
{
    int n = 0;
    tree_for_children(pos, size, [&](int) { n++; });
    return n;
}

// number of messages on the path from the root (receives along the path)
inline int tree_depth(int pos) { return __builtin_popcount(static_cast<unsigned>(pos)); }

// Receive step of every position when every process sends one message per
// step in tree order (root: 0).  Fewer steps = received earlier.
std::vector<int> tree_steps(int size);

class Table {
  public:
    explicit Table(int size = 1);
    int size() const { return static_cast<int>(vr_.size()); }
    int vrank(int real) const { return vr_[real]; }
    int real_of(int vrank) const { return inv_[vrank]; }
    // tree position of `real` in a broadcast rooted at `root`
    int position(int real, int root) const
    {
        if (real == root)
            return 0;
        int v = vr_[real];
        return v == 0 ? vr_[root] : v;
    }
    // process at tree position `pos` of a broadcast rooted at `root`
    int real_at(int pos, int root) const
    {
        if (pos == 0)
            return root;
        if (pos == vr_[root])
            return inv_[0];
        return inv_[pos];
    }
    void swap(int a, int b);
    // replace with a permutation; false (unchanged) if `vr` is not one
    bool assign(const std::vector<int> &vr);
    const std::vector<int> &vranks() const { return vr_; }
    std::uint64_t checksum() const { return checksum_; }
    std::uint64_t version() const { return version_; }

  private:
    void rehash();
    std::vector<int> vr_, inv_;
    std::uint64_t checksum_ = 0;
    std::uint64_t version_ = 0;
};

// Applies the swaps (pairs of real ranks, in order) to `table` and returns,
// sorted, the processes whose path from `root` changed: those at the swapped
// positions and in their subtrees.  Their wait history describes a tree that
// no longer exists (BcastState::apply and the simulator both use this).
std::vector<int> swap_and_list_moved(Table &table, int root,
                                     const std::vector<std::pair<int, int>> &swaps);

}  // namespace llc::coll::bcast
