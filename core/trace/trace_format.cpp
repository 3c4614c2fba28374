#include "core/trace/trace_format.h"

#include <zstd.h>

#include <algorithm>

#include "core/errors.h"

namespace stallscope::trace {

// Per item: zigzag(start - previous start), dur, name, depth, count * 4 + kind, then the args id
// for slices and instants. Starts are nearly sorted, so the deltas stay short. A slice with a
// sub-ns remainder is stored with kind 3 (kPreciseSlice) and its startPs and durPs follow the
// args id: older chunks never hold kind 3, so they decode unchanged.
constexpr uint64_t kPreciseSlice = 3;

void encodeSlices(const std::vector<SliceItem>& items, ByteWriter& out) {
    int64_t previous = 0;
    for (const SliceItem& it : items) {
        out.zigzag(it.start - previous);
        previous = it.start;
        out.varint(uint64_t(it.dur));
        out.varint(it.name);
        out.varint(it.depth);
        const bool precise = it.kind == ItemKind::Slice && it.hasPs();
        // A slice's count is always 1; 0 marks one that never ended (no earlier data has it).
        const uint64_t count = it.kind == ItemKind::Slice && it.unended ? 0 : it.count;
        out.varint(count * 4 + (precise ? kPreciseSlice : uint64_t(it.kind)));
        if (it.kind != ItemKind::Folded) out.varint(it.args);
        if (precise) {
            out.varint(it.startPs);
            out.varint(it.durPs);
        }
    }
}

void decodeSlices(std::string_view data, std::vector<SliceItem>& out) {
    ByteReader in(data);
    int64_t previous = 0;
    while (!in.atEnd()) {
        SliceItem it;
        it.start = previous + in.zigzag();
        previous = it.start;
        it.dur = int64_t(in.varint());
        it.name = uint32_t(in.varint());
        it.depth = uint32_t(in.varint());
        const uint64_t tag = in.varint();
        const bool precise = (tag & 3) == kPreciseSlice;
        it.kind = precise ? ItemKind::Slice : ItemKind(tag & 3);
        it.count = tag >> 2;
        if (it.kind == ItemKind::Slice && it.count == 0) {
            it.unended = true;
            it.count = 1;
        }
        if (it.kind != ItemKind::Folded) it.args = in.varint();
        if (precise) {
            it.startPs = uint16_t(std::min<uint64_t>(in.varint(), 999));
            it.durPs = uint16_t(std::min<uint64_t>(in.varint(), 999));
        }
        out.push_back(it);
    }
}

// Per item: zigzag(ts delta), count, value; buckets (count > 1) add min and max.
void encodeCounters(const std::vector<CounterItem>& items, ByteWriter& out) {
    int64_t previous = 0;
    for (const CounterItem& it : items) {
        out.zigzag(it.ts - previous);
        previous = it.ts;
        out.varint(it.count);
        out.real(it.value);
        if (it.count > 1) {
            out.real(it.min);
            out.real(it.max);
        }
    }
}

void decodeCounters(std::string_view data, std::vector<CounterItem>& out) {
    ByteReader in(data);
    int64_t previous = 0;
    while (!in.atEnd()) {
        CounterItem it;
        it.ts = previous + in.zigzag();
        previous = it.ts;
        it.count = in.varint();
        it.value = in.real();
        if (it.count > 1) {
            it.min = in.real();
            it.max = in.real();
        } else {
            it.min = it.max = it.value;
        }
        out.push_back(it);
    }
}

void encodeString(std::string_view text, ByteWriter& out) {
    out.varint(text.size());
    out.bytesAppend(text);
}

void decodeStrings(std::string_view data, std::vector<std::string>& out) {
    ByteReader in(data);
    while (!in.atEnd()) out.emplace_back(in.take(in.varint()));
}

void encodeFlow(const PackedFlow& f, const PackedFlow& previous, ByteWriter& out) {
    out.varint(f.name);
    out.varint(uint64_t(f.fromTrack));
    out.zigzag(f.fromTs - previous.fromTs);
    out.zigzag(f.fromDepth);
    out.varint(uint64_t(f.toTrack));
    out.zigzag(f.toTs - f.fromTs);
    out.zigzag(f.toDepth);
}

void decodeFlows(std::string_view data, std::vector<PackedFlow>& out) {
    ByteReader in(data);
    PackedFlow previous;
    while (!in.atEnd()) {
        PackedFlow f;
        f.name = uint32_t(in.varint());
        f.fromTrack = int64_t(in.varint());
        f.fromTs = previous.fromTs + in.zigzag();
        f.fromDepth = int32_t(in.zigzag());
        f.toTrack = int64_t(in.varint());
        f.toTs = f.fromTs + in.zigzag();
        f.toDepth = int32_t(in.zigzag());
        out.push_back(f);
        previous = f;
    }
}

void encodeOp(const PackedOp& op, ByteWriter& out) {
    out.varint(op.name);
    out.varint(op.count);
    for (int64_t v : {op.total, op.self, op.min, op.max, op.p50, op.p95}) out.zigzag(v);
}

void decodeOps(std::string_view data, std::vector<PackedOp>& out) {
    ByteReader in(data);
    while (!in.atEnd()) {
        PackedOp op;
        op.name = uint32_t(in.varint());
        op.count = in.varint();
        for (int64_t* v : {&op.total, &op.self, &op.min, &op.max, &op.p50, &op.p95})
            *v = in.zigzag();
        out.push_back(op);
    }
}

void encodeOpUnended(uint32_t name, uint64_t unended, ByteWriter& out) {
    out.varint(name);
    out.varint(unended);
}

void decodeOpsUnended(std::string_view data, std::vector<std::pair<uint32_t, uint64_t>>& out) {
    ByteReader in(data);
    while (!in.atEnd()) {
        const auto name = uint32_t(in.varint());
        out.emplace_back(name, in.varint());
    }
}

void packChunk(std::string_view raw, std::string& packed) {
    packed.resize(ZSTD_compressBound(raw.size()));
    const size_t n = ZSTD_compress(packed.data(), packed.size(), raw.data(), raw.size(), 1);
    if (ZSTD_isError(n)) throw Failure(std::string("zstd: ") + ZSTD_getErrorName(n));
    packed.resize(n);
}

std::string unpackChunk(std::string_view packed) {
    // One frame or several in a row (large payloads are compressed a piece at a time).
    unsigned long long size = 0;
    for (size_t at = 0; at < packed.size();) {
        const size_t frame = ZSTD_findFrameCompressedSize(packed.data() + at, packed.size() - at);
        const unsigned long long content =
            ZSTD_isError(frame) ? ZSTD_CONTENTSIZE_ERROR
                                : ZSTD_getFrameContentSize(packed.data() + at, frame);
        if (content == ZSTD_CONTENTSIZE_ERROR || content == ZSTD_CONTENTSIZE_UNKNOWN)
            throw Failure("trace chunk: not a zstd frame");
        size += content;
        at += frame;
    }
    if (size > (1ull << 34)) throw Failure("trace chunk: not a zstd frame");
    std::string raw(size_t(size), '\0');
    const size_t n = ZSTD_decompress(raw.data(), raw.size(), packed.data(), packed.size());
    if (ZSTD_isError(n) || n != raw.size())
        throw Failure(std::string("trace chunk: ") +
                      (ZSTD_isError(n) ? ZSTD_getErrorName(n) : "wrong size"));
    return raw;
}

}  // namespace stallscope::trace
