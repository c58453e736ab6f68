// udp_constants.hpp - the protocol flags and time constants that more than
// one file of the udp transport (udp_transport.hpp) uses.
#pragma once

#include <cstdint>

namespace llc {

constexpr unsigned kMaxBackoffShift = 3; // the retransmission timeout grows to at most 8x

// Upper bound of the timeout before backoff.  RTT samples include the time
// the sender spent outside llc_progress before it read the acknowledgement,
// so they can be far above the network's round trip; the cap keeps one long
// computation from making later loss recovery slow.
constexpr uint64_t kMaxRtoUs = 200000;

// A peer that stopped in the middle of a message it was sending us is probed
// (an acknowledgement flagged as probe) after this much silence, and then as
// often: if its process is gone, the ICMP port unreachable fails it at once.
constexpr uint64_t kStallProbeUs = 100000;

// probe_idle_peers, per look (every kStallProbeUs): at most this many probes
// sent and this many peers looked at, going round the live peers.
constexpr size_t kIdleProbesPerLook = 16;
constexpr size_t kIdlePeersPerLook = 256;

// UdpHeader::flags: the sender's Peer for us has forgotten an older pair
// (it is new after an eviction, or got our Forget): a datagram of ours it
// dropped may have been delivered by its old Peer.
constexpr uint8_t kFlagPairForgotten = 1;

// On an Ack: a finalize probe ("still here, still waiting", see progress),
// not an answer to anything: it keeps the sender's finalize linger from
// running out but does not make the pair look busy to the idle eviction.
constexpr uint8_t kFlagProbe = 2;

// On Data: DC RDMA, ring-addressed (UdpHeader::reserved is its slot): the
// receiver lands it in that slot of the ring it leased for us, if it still
// has one; otherwise it is an ordinary datagram (udp_ring_landing.hpp).
constexpr uint8_t kFlagRing = 4;

constexpr uint64_t kIdleReleaseUs = 1000000; // send queues / decoder of a peer idle this long are freed

} // namespace llc
