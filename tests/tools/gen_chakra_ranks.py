#!/usr/bin/env python3
"""Random multi-rank Chakra traces (astra-sim's 2023 framing: no GlobalMetadata) with collectives
of every rank and of a process group, and ring sends and receives; with their schedule computed
apart from Stallscope as ground truth.

Usage: gen_chakra_ranks.py OUT_STEM --seed S [--kernel-speedup GLOB=F]
writes OUT_STEM.<r>.et for each rank and OUT_STEM.expected.json:
  {"spans": [[rank, node id, start_ns, dur_ns], ...], "before_ns", "after_ns", "whatif_args"}

The schedule (as ASTRA-sim runs such traces): a node arrives when the last of its dependencies
(data_deps) has finished; a collective finishes its duration after the last of its ranks arrived
(the k-th collective of each rank in a process group, pg_name); a send goes at once; a receive
finishes its duration after both it and the k-th send to it (same source and tag) arrived. A
node's span runs from its arrival to its finish. Written as a memoised recursion over
arrival/finish, not as an event queue, so it shares no logic with the importer's."""
import argparse
import collections
import fnmatch
import functools
import json
import random
import sys


def varint(v):
    out = b""
    while v >= 0x80:
        out += bytes([v & 0x7F | 0x80])
        v >>= 7
    return out + bytes([v])


def int_field(number, v):
    return varint(number << 3) + varint(v)


def bytes_field(number, b):
    return varint(number << 3 | 2) + varint(len(b)) + b


def attr(name, field, value):
    """A node attribute (Node field 10): int32 (7), int64 (9) or string (29) value."""
    body = bytes_field(1, name.encode())
    body += bytes_field(field, value.encode()) if isinstance(value, str) else int_field(field, value)
    return bytes_field(10, body)


COMP, SEND, RECV, COLL = 4, 5, 6, 7


class Rank:
    def __init__(self):
        self.nodes = []  # dicts: id, name, type, deps, us, attrs (for the reference)
        self.bytes = b""

    def add(self, name, typ, deps, us, attrs=(), **meta):
        node_id = len(self.nodes) + 1
        message = int_field(1, node_id) + bytes_field(2, name.encode()) + int_field(3, typ)
        if deps:
            message += bytes_field(5, b"".join(varint(d) for d in deps))
        message += int_field(7, us) + b"".join(attr(*a) for a in attrs)
        self.bytes += varint(len(message)) + message
        self.nodes.append(dict(id=node_id, name=name, type=typ, deps=deps, us=us, **meta))
        return node_id


def generate(seed):
    rnd = random.Random(seed)
    ranks = [Rank() for _ in range(rnd.randint(2, 6))]
    count = len(ranks)
    phases = rnd.randint(2, 6)
    for r, rank in enumerate(ranks):
        last = []
        for p in range(phases):
            comp = []
            for _ in range(rnd.randint(1, 6)):
                pool = last + comp
                deps = rnd.sample(pool, min(len(pool), rnd.randint(0, 2)))
                comp.append(rank.add(f"c{rnd.randint(0, 3)}_p{p}", COMP, deps, rnd.randint(1, 40)))
            ends = [rank.add(f"ar_p{p}", COLL, [comp[-1]], rnd.randint(0, 9),
                             [("comm_type", 9, 0)], group="")]
            if p % 2 == 1 and r % 2 == 0 and count >= 4:
                ends.append(rank.add(f"ag_p{p}", COLL, [comp[0]], rnd.randint(0, 9),
                                     [("comm_type", 9, 2), ("pg_name", 29, "even")], group="even"))
            send = rank.add(f"send_p{p}", SEND, [rnd.choice(comp)], rnd.randint(0, 5),
                            [("comm_dst", 7, (r + 1) % count), ("comm_tag", 7, p)],
                            peer=(r + 1) % count, tag=p)
            ends.append(rank.add(f"recv_p{p}", RECV, [send] if rnd.random() < 0.5 else [],
                                 rnd.randint(0, 5),
                                 [("comm_src", 7, (r - 1) % count), ("comm_tag", 7, p)],
                                 peer=(r - 1) % count, tag=p))
            last = ends
        rank.add("end", COMP, last, rnd.randint(1, 5))
    return ranks


def schedule(ranks, speedups):
    """(spans, makespan) of the ranks with COMP nodes matching a glob sped up."""
    groups = {}  # meeting key -> [(rank, node index)]
    meets = {}   # (rank, node index) -> meeting key
    seen = collections.Counter()  # (rank, channel) -> how many so far
    for r, rank in enumerate(ranks):
        for k, n in enumerate(rank.nodes):
            if n["type"] == COLL:
                channel = ("coll", n["group"])
            elif n["type"] == SEND:
                channel = ("p2p", r, n["peer"], n["tag"])
            elif n["type"] == RECV:
                channel = ("p2p", n["peer"], r, n["tag"])
            else:
                continue
            key = channel + (seen[(r, channel)],)
            seen[(r, channel)] += 1
            groups.setdefault(key, []).append((r, k))
            meets[(r, k)] = key

    def length(r, k):
        n = ranks[r].nodes[k]
        ns = n["us"] * 1000
        for pattern, factor in speedups:
            if n["type"] == COMP and fnmatch.fnmatchcase(n["name"], pattern):
                ns = ns / factor
        return ns

    @functools.lru_cache(None)
    def arrival(r, k):
        return max([finish(r, d - 1) for d in ranks[r].nodes[k]["deps"]] or [0])

    @functools.lru_cache(None)
    def finish(r, k):
        key = meets.get((r, k))
        if key is None or ranks[r].nodes[k]["type"] == SEND:
            return arrival(r, k) + length(r, k)
        return max(arrival(*m) for m in groups[key]) + length(r, k)

    sys.setrecursionlimit(100000)
    nodes = [(r, k) for r, rank in enumerate(ranks) for k in range(len(rank.nodes))]
    spans = [[r, k + 1, arrival(r, k), finish(r, k) - arrival(r, k)] for r, k in nodes]
    return spans, max(finish(r, k) for r, k in nodes)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--kernel-speedup", default="c1_*=2")
    args = parser.parse_args()
    ranks = generate(args.seed)
    for r, rank in enumerate(ranks):
        with open(f"{args.out}.{r}.et", "wb") as f:
            f.write(rank.bytes)
    pattern, factor = args.kernel_speedup.split("=")
    spans, before = schedule(ranks, [])
    _, after = schedule(ranks, [(pattern, float(factor))])
    with open(f"{args.out}.expected.json", "w") as f:
        json.dump({"spans": spans, "before_ns": before, "after_ns": after,
                   "whatif_args": ["--kernel-speedup", args.kernel_speedup]}, f)


if __name__ == "__main__":
    main()
