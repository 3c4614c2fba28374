#!/usr/bin/env python3
"""Scales a real XSpace up by repeating it in time, for benchmarks with a real profile's mix.

Every line's events are written COPIES times, copy k shifted by k times the profile's span (the
latest event end over all lines, plus a microsecond), so module runs, steps, host threads and
async pairs repeat as if the program had run COPIES times longer. Plane and event metadata,
stats and everything else are kept byte for byte. A synthetic XSpace of only XLA ops with
transfers (gen_xspace_transfers.py) is the worst case for the transfer derivation; this keeps
the share of events a real TPU profile has on its XLA lines.

usage: scale_xspace.py IN.xplane.pb OUT.xplane.pb COPIES
"""
import sys


def varint(b, i):
    r = s = 0
    while True:
        c = b[i]
        i += 1
        r |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return r, i


def put_varint(v):
    out = bytearray()
    v &= (1 << 64) - 1
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def fields(b):
    """(number, wire type, value, raw bytes of the whole field) for each field of b."""
    i = 0
    while i < len(b):
        start = i
        tag, i = varint(b, i)
        num, wt = tag >> 3, tag & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 1:
            v = b[i:i + 8]
            i += 8
        elif wt == 2:
            n, i = varint(b, i)
            v = b[i:i + n]
            i += n
        elif wt == 5:
            v = b[i:i + 4]
            i += 4
        else:
            raise ValueError("wire type %d at %d" % (wt, start))
        yield num, wt, v, b[start:i]


def length_field(num, payload):
    return put_varint((num << 3) | 2) + put_varint(len(payload)) + payload


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def span_ps(space):
    """Latest event end over all lines, in ps from the earliest line timestamp."""
    lines = []
    for num, _, plane, _ in fields(space):
        if num != 1:
            continue
        for pnum, _, line, _ in fields(plane):
            if pnum != 3:
                continue
            ts, end = 0, 0
            for lnum, _, v, _ in fields(line):
                if lnum == 3:
                    ts = signed(v)
                elif lnum == 4:
                    off = dur = 0
                    for enum, _, ev, _ in fields(v):
                        if enum == 2:
                            off = signed(ev)
                        elif enum == 3:
                            dur = signed(ev)
                    end = max(end, off + dur)
            lines.append((ts, end))
    if not lines:
        return 0
    first = min(ts for ts, _ in lines)
    return max((ts - first) * 1000 + end for ts, end in lines)


def scaled_line(line, copies, shift):
    head = bytearray()
    events = []  # (bytes before offset, offset, bytes after offset)
    for num, _, v, raw in fields(line):
        if num != 4:
            head += raw
            continue
        before, after, off = bytearray(), bytearray(), None
        for enum, _, ev, eraw in fields(v):
            if enum == 2:
                off = signed(ev)
            elif off is None:
                before += eraw
            else:
                after += eraw
        events.append((bytes(before), off, bytes(after)))
    out = [bytes(head)]
    for k in range(copies):
        for before, off, after in events:
            if off is None:  # aggregated events have no offset: kept once
                if k == 0:
                    out.append(length_field(4, before + after))
                continue
            body = before + put_varint(2 << 3) + put_varint(off + k * shift) + after
            out.append(length_field(4, body))
    return b"".join(out)


def main(src, dst, copies):
    space = open(src, "rb").read()
    shift = span_ps(space) + 1_000_000
    with open(dst, "wb") as out:
        for num, _, v, raw in fields(space):
            if num != 1:
                out.write(raw)
                continue
            plane = []
            for pnum, _, pv, praw in fields(v):
                plane.append(scaled_line(pv, copies, shift) if pnum == 3 else None)
                if pnum == 3:
                    plane[-1] = length_field(3, plane[-1])
                else:
                    plane[-1] = praw
            out.write(length_field(1, b"".join(plane)))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
