#include <algorithm>
#include <stdexcept>

#include "core/trace/steps/internal.h"

namespace stallscope::trace::steps {

namespace {

// The record's first byte (a one-byte varint): the class, and whether a launch follows.
constexpr uint8_t kHasLaunch = 0x40;
static_assert(kDeviceClassCount < kHasLaunch);

void putVarint(std::string& out, uint64_t v) {
    while (v >= 0x80) {
        out.push_back(char(uint8_t(v) | 0x80));
        v >>= 7;
    }
    out.push_back(char(v));
}

void putZigzag(std::string& out, int64_t v) {
    putVarint(out, (uint64_t(v) << 1) ^ uint64_t(v >> 63));
}

// Differences of two timestamps, wrapping: any pair round-trips exactly.
int64_t difference(int64_t a, int64_t b) {
    return int64_t(uint64_t(a) - uint64_t(b));
}

}  // namespace

void PackedActivities::push_back(const Activity& a) {
    if (a.start < lastStart_)
        throw std::logic_error("device activities appended out of start order");
    if (size_ % kBlock == 0) {
        // A block never straddles two pieces; the first piece grows as needed (most devices
        // hold few activities), later ones are whole pieces.
        if (pieces_.empty() || pieces_.back().size() + kBlock * kMaxRecordBytes > kPieceBytes) {
            pieces_.emplace_back();
            if (pieces_.size() > 1) pieces_.back().reserve(kPieceBytes);
        }
        blocks_.push_back({a.start, uint32_t(pieces_.size() - 1), uint32_t(pieces_.back().size())});
    }
    std::string& out = pieces_.back();
    const bool hasLaunch = a.launch != INT64_MIN;
    if (a.cls >= kHasLaunch) throw std::logic_error("device activity of an unknown class");
    out.push_back(char(a.cls | (hasLaunch ? kHasLaunch : 0)));
    if (size_ % kBlock != 0) putVarint(out, uint64_t(a.start - lastStart_));
    putZigzag(out, difference(a.end, a.start));
    if (hasLaunch) putZigzag(out, difference(a.start, a.launch));
    putZigzag(out, a.launchTrack);
    lastStart_ = a.start;
    ++size_;
}

void PackedActivities::clear() {
    PackedActivities().swap(*this);
}

void PackedActivities::swap(PackedActivities& other) noexcept {
    blocks_.swap(other.blocks_);
    pieces_.swap(other.pieces_);
    std::swap(size_, other.size_);
    std::swap(lastStart_, other.lastStart_);
}

void PackedActivities::shrinkToFit() {
    blocks_.shrink_to_fit();
    if (!pieces_.empty()) pieces_.back().shrink_to_fit();
}

PackedActivities::Cursor PackedActivities::firstStartingFrom(int64_t t) const {
    // Every block before the first one starting at or after t starts before t: the answer is
    // in the block before it (at its end) or is that block's first.
    const auto block = std::partition_point(blocks_.begin(), blocks_.end(),
                                            [t](const Block& b) { return b.firstStart < t; });
    const size_t from = block == blocks_.begin() ? 0 : size_t(block - blocks_.begin()) - 1;
    Cursor c(*this, from);
    while (c.valid() && c->start < t) c.next();
    return c;
}

PackedActivities::Cursor::Cursor(const PackedActivities& list, size_t block)
    : list_(&list), index_(block * kBlock) {
    if (!valid()) return;
    const Block& b = list.blocks_[block];
    reader_ = ByteReader(std::string_view(list.pieces_[b.piece]).substr(b.offset));
    current_.start = b.firstStart;
    decode(true);
}

void PackedActivities::Cursor::decode(bool first) {
    ByteReader& in = reader_;
    const auto header = uint8_t(in.varint());
    current_.cls = uint8_t(header & ~kHasLaunch);
    if (!first) current_.start += int64_t(in.varint());
    current_.end = int64_t(uint64_t(current_.start) + uint64_t(in.zigzag()));
    current_.launch = (header & kHasLaunch) != 0
                          ? int64_t(uint64_t(current_.start) - uint64_t(in.zigzag()))
                          : INT64_MIN;
    current_.launchTrack = int32_t(in.zigzag());
}

void PackedActivities::Cursor::next() {
    if (++index_ >= list_->size_) return;
    if (index_ % kBlock == 0) {
        *this = Cursor(*list_, index_ / kBlock);
        return;
    }
    decode(false);
}

}  // namespace stallscope::trace::steps
