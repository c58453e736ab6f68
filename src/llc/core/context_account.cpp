// context_account.cpp - what a Context holds, for the memory accounting
// (mem/mem_accounting.hpp): its own members here, each transport's through
// Transport::account.
#include "core/context.hpp"

#include "kvs/kvs.hpp"
#include "mem/mem_accounting.hpp"
#include "tagged/tagged.hpp"
#include "transport/transport.hpp"

namespace llc {

void Context::account(MemRegistry &r) const
{
    using M = MemComponent;
    // The context itself (its handler table is counted separately).
    r.add(M::Context, sizeof(Context) - sizeof(handlers_), 1);
    r.add(M::Context, heap_bytes(job_id_) + heap_bytes(last_error_) + heap_bytes(progress_message_) +
                          heap_bytes(completions_));
    r.add(M::HandlerTable, sizeof(handlers_), handlers_.size());
    node_map_.account(r);
    // Lazily committed pages: what the kernel has made resident so far.
    r.add(M::SeqNumbers, next_send_seq_.resident_bytes() + next_recv_seq_.resident_bytes(),
          next_send_seq_.size() + next_recv_seq_.size());
    r.add(M::Bootstrap, sizeof(Bootstrap), 1);
    if (const AddressBook *k = kvs_.get()) {
        // Items: KVS entries stored here (leaders) plus cached peer entries.
        uint64_t cached = 0, stored = 0;
        uint64_t bytes = sizeof(AddressBook) + k->cache_bytes(&cached);
        r.add(M::Bootstrap, bytes, cached);
        if (const KvsServer *s = k->server()) {
            bytes = sizeof(KvsServer) + s->store_bytes(&stored);
            r.add(M::Bootstrap, bytes, stored);
        }
    }
    if (tagged_)
        tagged_->account(r);
    // In Route order: self, the node's, the network's (whose notes follow the node map's).
    for (const Transport *t : live_)
        t->account(r);
}

void Context::struct_sizes(StructSizes &s)
{
    s.context = sizeof(Context);
    s.handler_table = sizeof(handlers_);
}

} // namespace llc
