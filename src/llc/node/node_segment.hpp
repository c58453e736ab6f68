// node_segment.hpp - the life cycle of a segment the processes of a node
// share (the ring pool, the RC-class slot count): whether this process
// shares it at all or falls back to private memory (and why), the node
// leader creating it before the first init fence, the others mapping it
// after that fence, and the leader removing its name after the second.
//
// The owner keeps the mapping and what lives in it: it initialises the
// header the leader publishes and checks the one the others map (a header
// that does not match this process is a reason to go private: mismatch()).
#pragma once

#include "support/memory_mapping.hpp"
#include "support/shm_name.hpp"

#include <cstddef>
#include <string>

namespace llc {

class NodeSegment {
public:
    // How the messages name the segment.
    struct Words {
        std::string purpose; // the system errors': "the node's ring pool"
        std::string mine;    // "the node leader could not create the <mine>": "shared pool"
        std::string leaders; // "the node leader's <leaders> could not be opened": "ring pool"
    };

    // Why a process keeps private memory instead of sharing a segment with
    // its node (LLC_NODE_SHARED=0, alone on its node), or "" when it
    // shares.  The rule of every node-shared structure (NodeMap too).
    static std::string private_from_the_start(bool share, int processes);

    NodeSegment() = default; // not in use: never created, never attached
    // Before the first init fence.  share: LLC_NODE_SHARED; processes: on
    // this node; leader: this process is the node's leader (its lowest rank).
    NodeSegment(std::string name, Words words, bool share, int processes, bool leader);
    NodeSegment(NodeSegment &&other) noexcept;
    NodeSegment &operator=(NodeSegment &&other) noexcept; // removes this one's name first

    // Private from the start (LLC_NODE_SHARED=0, alone on the node) or since
    // a step below failed; private_reason() says why.
    bool is_private() const { return !private_reason_.empty(); }
    // The leader, before it has tried to create the segment.
    bool leads() const { return leader_ && !is_private() && !created_; }
    // Another process of the node, before it has tried to attach.
    bool waiting() const { return waiting_; }

    // Leader, before the first init fence: create the segment, `bytes`
    // long (sparse: ftruncate commits no pages), and map it.  An empty
    // mapping when that failed: private from then on, the name removed.
    // ftruncate_hint follows "ftruncate(...) for <purpose>" in the error.
    MemoryMapping create(size_t bytes, const std::string &ftruncate_hint);
    // Another process, after the first init fence: map the leader's
    // segment and check it is `bytes` long (size_hint follows "has the wrong
    // size": which settings to compare).  An empty mapping when that failed:
    // private from then on.  Once only: waiting() is false afterwards.
    MemoryMapping attach(size_t bytes, const std::string &size_hint);
    // The header in the leader's segment does not match this process: go
    // private, saying so (hint: which settings to compare).  The caller
    // drops its mapping.
    void mismatch(const std::string &hint);
    // Leader, after the second init fence: shm_unlink.  Idempotent; also done
    // by the destructor.
    void release_name() { name_.release(); }

    bool created_here() const { return created_; }
    const std::string &private_reason() const { return private_reason_; }
    const std::string &name() const { return name_.str(); }

private:
    ShmName name_;
    Words words_;
    std::string private_reason_;
    bool leader_ = false;
    bool waiting_ = false;
    bool created_ = false;
};

} // namespace llc
