#!/usr/bin/env python3
"""forge_proxy.py - a stranger posing as one of hydra's proxies
(test/system/launcher_strangers; doc/reliability.md, "The launcher").

  forge_proxy.py --count N [--ids 0,1] IP:PORT...

Each attempt connects to a target (in turn) and introduces itself the way a
proxy of hydra 4.0.2 does: its proxy id as a 4-byte integer, first of the
bytes it sends.  It cannot compute the proof of the launch secret that an
mpich-llc proxy sends after the id, so 32 random bytes take its place.  Then
it waits up to 5 s for what the launcher does:
  refused  - the launcher closed the connection having sent nothing but its
             challenge (at most 32 bytes);
  accepted - the launcher sent more (hydra's PROC_INFO: it took the stranger
             for a proxy), or kept the connection open for 5 s.
Prints one line per outcome and a summary
  "forge_proxy: N attempts, R refused, A accepted, E could not connect".
Exit status 0 when every attempt that connected was refused."""
import argparse
import os
import random
import socket
import struct
import sys
import time

CHALLENGE_LEN = 32


def attempt(ip, port, proxy_id):
    try:
        s = socket.create_connection((ip, port), timeout=5)
    except OSError as e:
        return "unreachable", str(e)
    got = 0
    try:
        s.settimeout(5)
        s.sendall(struct.pack("<i", proxy_id))
        time.sleep(0.05)
        s.sendall(os.urandom(32))
        deadline = time.time() + 5
        while time.time() < deadline:
            data = s.recv(65536)
            if not data:
                break
            got += len(data)
        else:
            return "accepted", "connection kept open, %d bytes received" % got
    except socket.timeout:
        return "accepted", "connection kept open, %d bytes received" % got
    except OSError:
        pass  # reset: closed by the launcher
    finally:
        s.close()
    if got > CHALLENGE_LEN:
        return "accepted", "the launcher sent %d bytes: it talked to the stranger as to a proxy" % got
    return "refused", "closed after %d bytes" % got


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=5)
    ap.add_argument("--ids", default="0,1")
    ap.add_argument("targets", nargs="+")
    a = ap.parse_args()
    ids = [int(x) for x in a.ids.split(",")]
    targets = []
    for t in a.targets:
        ip, port = t.rsplit(":", 1)
        targets.append((ip, int(port)))
    counts = {"refused": 0, "accepted": 0, "unreachable": 0}
    for i in range(a.count):
        ip, port = targets[i % len(targets)]
        proxy_id = ids[i % len(ids)] if i % 4 != 3 else random.randint(0, 1 << 20)
        outcome, what = attempt(ip, port, proxy_id)
        counts[outcome] += 1
        print("forge_proxy: %s:%d as proxy %d: %s (%s)" % (ip, port, proxy_id, outcome, what))
    print("forge_proxy: %d attempts, %d refused, %d accepted, %d could not connect"
          % (a.count, counts["refused"], counts["accepted"], counts["unreachable"]))
    return 0 if counts["accepted"] == 0 and counts["refused"] > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
