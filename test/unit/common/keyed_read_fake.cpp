// keyed_read_fake.cpp - see keyed_read_fake.hpp.
#include "common/keyed_read_fake.hpp"

#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <stdexcept>

namespace llctest {

KeyTable *KeyTable::create()
{
    void *p = mmap(nullptr, sizeof(KeyTable), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        throw std::runtime_error(std::string("mmap of the key table: ") + std::strerror(errno));
    return new (p) KeyTable(); // (zeroed: every entry free)
}

int KeyTable::live(int rank) const
{
    int n = 0;
    for (const Entry &e : entries)
        n += e.live && e.rank == rank;
    return n;
}

// An exposure: its entries in the table, freed when it is destroyed.
class KeyedReadFake::Registrations final : public llc::Exposure {
public:
    explicit Registrations(KeyTable &t) : table(t) {}
    ~Registrations() override
    {
        for (int i : taken)
            table.entries[i].live = 0;
    }
    KeyTable &table;
    std::vector<int> taken;
};

KeyedReadFake::KeyedReadFake(std::unique_ptr<llc::Transport> inner, KeyTable &table, int rank)
    : inner_(std::move(inner)), caps_(inner_->caps().with(llc::CapKeyedRead)), table_(table), rank_(rank)
{
}

KeyedReadFake::~KeyedReadFake() = default;

int KeyedReadFake::send(int dest, std::unique_ptr<llc::OutgoingMessage> msg)
{
    return inner_->send(dest, std::move(msg));
}

std::unique_ptr<llc::Exposure> KeyedReadFake::expose(int, const llc_iov_t *iov, int iovcnt, std::string *why)
{
    if (fail_expose) {
        *why = "registration refused (the test's knob)";
        return nullptr;
    }
    auto e = std::make_unique<Registrations>(table_);
    for (int k = 0; k < iovcnt; k++) {
        int slot = -1;
        for (int i = 0; i < KeyTable::kEntries && slot < 0; i++)
            if (!table_.entries[i].live)
                slot = i;
        if (slot < 0) {
            *why = "the key table is full";
            return nullptr;
        }
        KeyTable::Entry &en = table_.entries[slot];
        en.rank = rank_;
        en.pid = int32_t(getpid());
        en.key = (uint32_t(rank_) << 24) | next_key_++;
        en.addr = uint64_t(reinterpret_cast<uintptr_t>(iov[k].base));
        en.len = iov[k].len;
        __atomic_store_n(&en.live, 1, __ATOMIC_RELEASE);
        e->taken.push_back(slot);
        e->spans.push_back(llc::KeyedSpan{en.addr, en.len, en.key, 0});
    }
    return e;
}

bool KeyedReadFake::read_keyed(int src, const llc::KeyedSpan *spans, size_t n, uint64_t len, llc::KeyedReadDone done,
                               std::string *why)
{
    if (fail_landing) {
        *why = "no landing buffer (the test's knob)";
        return false;
    }
    pending_.push_back(Read{src, std::vector<llc::KeyedSpan>(spans, spans + n), len, std::move(done)});
    return true;
}

std::string KeyedReadFake::read_now(const Read &r, std::vector<char> &out) const
{
    if (fail_reads)
        return "remote access error (the test's knob)";
    out.resize(size_t(r.len));
    size_t at = 0;
    for (const llc::KeyedSpan &s : r.spans) {
        const KeyTable::Entry *reg = nullptr;
        for (const KeyTable::Entry &e : table_.entries)
            if (__atomic_load_n(&e.live, __ATOMIC_ACQUIRE) && e.key == s.key && e.rank == r.src && s.addr >= e.addr &&
                s.len <= e.len && s.addr - e.addr <= e.len - s.len)
                reg = &e;
        if (!reg)
            return "remote access error: no live registration of rank " + std::to_string(r.src) + " with key " +
                   std::to_string(s.key) + " covers the span";
        if (at + s.len > out.size())
            return "spans longer than the message";
        iovec local{out.data() + at, size_t(s.len)};
        iovec remote{reinterpret_cast<void *>(uintptr_t(s.addr)), size_t(s.len)};
        if (s.len && process_vm_readv(reg->pid, &local, 1, &remote, 1, 0) != ssize_t(s.len))
            return std::string("process_vm_readv: ") + std::strerror(errno);
        at += size_t(s.len);
    }
    return std::string();
}

bool KeyedReadFake::progress()
{
    bool did = inner_->progress();
    while (!hold_reads && !pending_.empty()) {
        Read r = std::move(pending_.front());
        pending_.pop_front();
        std::vector<char> buf;
        llc::KeyedReadResult res;
        res.error = read_now(r, buf);
        if (res.error.empty()) {
            res.data = buf.data();
            res.len = buf.size();
            reads_done++;
        } else {
            reads_refused++;
        }
        r.done(res);
        did = true;
    }
    return did;
}

} // namespace llctest
