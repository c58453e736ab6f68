#include "tree.hpp"

#include <algorithm>
#include <utility>

namespace llc::coll::bcast {

std::vector<int> tree_steps(int size)
{
    std::vector<int> steps(size > 0 ? size : 0, 0);
    // positions in increasing order: a parent is always smaller than its child
    for (int v = 0; v < size; v++) {
        int k = 0;
        tree_for_children(v, size, [&](int c) { steps[c] = steps[v] + ++k; });
    }
    return steps;
}

Table::Table(int size) : vr_(size > 0 ? size : 1), inv_(vr_.size())
{
    for (int i = 0; i < this->size(); i++)
        vr_[i] = inv_[i] = i;
    rehash();
}

void Table::rehash()
{
    // FNV-1a over the table
    std::uint64_t h = 1469598103934665603ull;
    for (int v : vr_) {
        for (int k = 0; k < 4; k++) {
            h ^= static_cast<std::uint64_t>((static_cast<unsigned>(v) >> (8 * k)) & 0xff);
            h *= 1099511628211ull;
        }
    }
    checksum_ = h;
}

void Table::swap(int a, int b)
{
    if (a == b)
        return;
    std::swap(vr_[a], vr_[b]);
    inv_[vr_[a]] = a;
    inv_[vr_[b]] = b;
    version_++;
    rehash();
}

bool Table::assign(const std::vector<int> &vr)
{
    if (vr.size() != vr_.size())
        return false;
    std::vector<int> inv(vr.size(), -1);
    for (size_t i = 0; i < vr.size(); i++) {
        if (vr[i] < 0 || vr[i] >= size() || inv[vr[i]] != -1)
            return false;
        inv[vr[i]] = static_cast<int>(i);
    }
    vr_ = vr;
    inv_ = std::move(inv);
    version_++;
    rehash();
    return true;
}

std::vector<int> swap_and_list_moved(Table &table, int root,
                                     const std::vector<std::pair<int, int>> &swaps)
{
    const int size = table.size();
    std::vector<int> moved;  // positions; a swap keeps the set of positions
    for (const auto &s : swaps) {
        moved.push_back(table.position(s.first, root));
        moved.push_back(table.position(s.second, root));
        table.swap(s.first, s.second);
    }
    std::vector<int> changed;
    for (int p : moved)
        for (int q = p; q < subtree_end(p, size); q++)
            changed.push_back(table.real_at(q, root));
    std::sort(changed.begin(), changed.end());
    changed.erase(std::unique(changed.begin(), changed.end()), changed.end());
    return changed;
}

}  // namespace llc::coll::bcast
