#!/usr/bin/env python3
"""garbage_flood.py - a stranger firing garbage at a job's ports
(test/run-all, "strangers"; doc/reliability.md).

  garbage_flood.py --seconds S [--seed N] TARGET...

TARGET is tcp:IP:PORT or udp:IP:PORT.  Until S seconds have passed it picks a
target at random and: tcp - connects and sends 1 B .. 20 kB of random bytes
(length log-uniform), or a well-formed llc authentication hello followed by
random bytes, or a truncated one, or nothing (the connection is held open
for a while, at most 16 at once), then closes, sometimes with a reset;
udp - sends a random datagram of 1 B .. 20 kB, some starting with llc's udp
magic number.  Prints what it did.  Never fails on a refused or reset
connection (a port may close when its process finishes)."""
import argparse
import os
import random
import socket
import struct
import sys
import time

TCP_AUTH_MAGIC = 0x41434C4C
UDP_MAGIC_GUESS = 0x50444C4C  # not known to a stranger: any 32-bit value


def rand_len(rng):
    return max(1, min(20000, int(2 ** rng.uniform(0, 14.3))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("targets", nargs="+")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    targets = []
    for t in a.targets:
        proto, ip, port = t.split(":")
        targets.append((proto, ip, int(port)))
    held = []
    counts = {"tcp_connections": 0, "tcp_refused": 0, "tcp_bytes": 0, "udp_datagrams": 0, "udp_bytes": 0}
    end = time.time() + a.seconds
    while time.time() < end:
        proto, ip, port = rng.choice(targets)
        if proto == "udp":
            n = rand_len(rng)
            data = bytearray(os.urandom(n))
            if rng.random() < 0.3 and n >= 4:
                data[0:4] = struct.pack("<I", rng.choice([UDP_MAGIC_GUESS, rng.getrandbits(32)]))
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            try:
                s.sendto(bytes(data), (ip, port))
                counts["udp_datagrams"] += 1
                counts["udp_bytes"] += n
            except OSError:
                pass
            s.close()
            continue
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(1.0)
        try:
            s.connect((ip, port))
        except OSError:
            counts["tcp_refused"] += 1
            s.close()
            continue
        counts["tcp_connections"] += 1
        mode = rng.random()
        try:
            if mode < 0.5:
                payload = os.urandom(rand_len(rng))
            elif mode < 0.7:
                hello = struct.pack("<IBBH", TCP_AUTH_MAGIC, 1, 1, 0) + os.urandom(16)
                payload = hello + os.urandom(rand_len(rng))
            elif mode < 0.85:
                payload = struct.pack("<IBBH", TCP_AUTH_MAGIC, 1, 1, 0)[: rng.randint(1, 7)]
            else:
                payload = b""
            if payload:
                s.sendall(payload)
                counts["tcp_bytes"] += len(payload)
            if not payload and len(held) < 16:
                held.append((time.time() + rng.uniform(0.5, 3), s))
                s = None
            elif rng.random() < 0.3:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # reset
        except OSError:
            pass
        if s is not None:
            s.close()
        now = time.time()
        for entry in [h for h in held if h[0] < now]:
            entry[1].close()
            held.remove(entry)
        time.sleep(rng.uniform(0, 0.01))
    for _, s in held:
        s.close()
    print("garbage_flood: seed %d, %d targets: %s" % (a.seed, len(targets),
          ", ".join("%s %d" % kv for kv in counts.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
