// goodbye_book.cpp - see goodbye_book.hpp.
#include "transport/goodbye_book.hpp"

namespace llc {

std::string GoodbyeBook::bye_flags(bool said, bool got) { return std::string(said ? "s" : "-") + (got ? "r" : "-"); }

std::string GoodbyeBook::line(int r) const
{
    std::string s = "rank " + std::to_string(r) + ":";
    if (has(r, kSent))
        s += " sent,";
    if (has(r, kHeard))
        s += " heard,";
    if (has(r, kGone))
        s += " gone,";
    return s + " bye " + bye_flags(has(r, kSaid), has(r, kGot));
}

std::string GoodbyeBook::waiting_report() const
{
    if (waiting_ == 0)
        return std::string();
    std::string s = "waiting for the goodbye of rank";
    const char *sep = " ";
    for (size_t r = 0; r < peers_.size(); r++)
        if (waits(peers_[r])) {
            s += sep + std::to_string(r);
            sep = ", ";
        }
    return s;
}

} // namespace llc
