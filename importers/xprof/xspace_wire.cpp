// The XSpace wire: top-level fields streamed from the (decompressed) input, one field's bytes held
// at a time, and compressed stat values decompressed.
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>

#include "core/errors.h"
#include "importers/xprof/xspace_internal.h"

namespace stallscope::xspace {

[[noreturn]] void failAt(const std::string& path, const proto_wire::Malformed& error) {
    throw InputError(atOffset(path, static_cast<long long>(error.offset),
                              "XSpace: " + proto_wire::describe(error)));
}

constexpr size_t kMaxDecompressedStat = size_t(64) << 20;

std::optional<std::string> decompressStat(std::string_view packed) {
    std::string out;
    if (packed.size() >= 4 && uint8_t(packed[0]) == 0x28 && uint8_t(packed[1]) == 0xb5 &&
        uint8_t(packed[2]) == 0x2f && uint8_t(packed[3]) == 0xfd) {
        ZSTD_DStream* z = ZSTD_createDStream();
        ZSTD_inBuffer in{packed.data(), packed.size(), 0};
        char buf[16384];
        size_t rc = 1;
        while (rc != 0 && out.size() <= kMaxDecompressedStat) {
            ZSTD_outBuffer o{buf, sizeof buf, 0};
            rc = ZSTD_decompressStream(z, &o, &in);
            if (ZSTD_isError(rc)) break;
            out.append(buf, o.pos);
            if (o.pos == 0 && in.pos == in.size) break;
        }
        ZSTD_freeDStream(z);
        if (rc != 0) return std::nullopt;
        return out;
    }
    z_stream z{};
    if (inflateInit2(&z, 15 + 32) != Z_OK) return std::nullopt;  // +32: gzip or zlib header
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(packed.data()));
    z.avail_in = uInt(packed.size());
    char buf[16384];
    int rc = Z_OK;
    while (rc == Z_OK && out.size() <= kMaxDecompressedStat) {
        z.next_out = reinterpret_cast<Bytef*>(buf);
        z.avail_out = sizeof buf;
        rc = inflate(&z, Z_NO_FLUSH);
        out.append(buf, sizeof buf - z.avail_out);
        if (rc == Z_BUF_ERROR && z.avail_in == 0) break;
    }
    inflateEnd(&z);
    if (rc != Z_STREAM_END) return std::nullopt;
    return out;
}

bool SpaceReader::next(Field& f) {
    // A field's tag and varint (or length) take at most 20 bytes: all in the buffer unless
    // the input ends first, so the reader sees a truncated one only at the real end.
    available(2 * proto_wire::kMaxVarintBytes);
    if (pos_ == end_) return false;
    XSpaceWire header(std::string_view(buf_.data() + pos_, end_ - pos_), offset_);
    try {
        header.header(f);
    } catch (const proto_wire::Malformed& error) {
        if (textMangled()) fail(error.offset, proto_wire::describe(error) + kTextMangled);
        failAt(in_.path(), error);
    }
    pos_ += header.consumed();
    offset_ += header.consumed();
    switch (f.wireType) {
        case proto_wire::kFixed64:
        case proto_wire::kFixed32: {
            const size_t size = f.wireType == proto_wire::kFixed64 ? 8 : 4;
            if (!take(size, f.bytes)) fail(f.offset, "a fixed-size field runs past the end");
            std::memcpy(&f.value, f.bytes.data(), size);
            break;
        }
        case proto_wire::kLength:
            if (!take(f.value, f.bytes))
                fail(f.offset, textMangled() ? std::string("a length-delimited field runs "
                                                           "past the end") +
                                                   kTextMangled
                                             : "a length-delimited field runs past the end "
                                               "(truncated file?)");
            break;
        default:
            break;
    }
    return true;
}

bool SpaceReader::available(size_t n) {
    if (end_ - pos_ >= n) return true;
    std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
    end_ -= pos_;
    pos_ = 0;
    while (end_ < n) {
        const size_t got = in_.read(buf_.data() + end_, buf_.size() - end_);
        if (got == 0) return false;
        end_ += got;
    }
    return true;
}

bool SpaceReader::take(uint64_t n, std::string_view& out) {
    bytesOffset_ = offset_;
    if (n <= buf_.size() / 2) {
        if (!available(size_t(n))) return false;
        out = std::string_view(buf_.data() + pos_, size_t(n));
        pos_ += size_t(n);
        offset_ += size_t(n);
        return true;
    }
    // A length past the end of an uncompressed file is refused before allocating; for
    // compressed input the buffer grows as bytes arrive, so a corrupt length fails at the
    // end of the input, not in the allocator.
    if (in_.compression() == Compression::None &&
        n > in_.fileSize() - std::min(in_.fileSize(), uint64_t(offset_)))
        return false;
    size_t have = std::min<size_t>(size_t(n), end_ - pos_);
    reserveField(std::min<uint64_t>(n, std::max<uint64_t>(have, uint64_t(64) << 20)), 0);
    std::memcpy(field_.get(), buf_.data() + pos_, have);
    pos_ += have;
    while (have < n) {
        if (have == fieldCapacity_)
            reserveField(std::min<uint64_t>(n, uint64_t(fieldCapacity_) * 2), have);
        const size_t room = std::min<size_t>(fieldCapacity_, size_t(n)) - have;
        const size_t got = in_.read(field_.get() + have, room);
        if (got == 0) return false;
        have += got;
    }
    offset_ += size_t(n);
    out = std::string_view(field_.get(), size_t(n));
    return true;
}

void SpaceReader::reserveField(uint64_t capacity, size_t keep) {
    if (capacity <= fieldCapacity_) return;
    std::unique_ptr<char[]> grown(new char[size_t(capacity)]);
    if (keep > 0) std::memcpy(grown.get(), field_.get(), keep);
    field_ = std::move(grown);
    fieldCapacity_ = size_t(capacity);
}

void SpaceReader::fail(size_t offset, const std::string& what) const {
    throw InputError(atOffset(in_.path(), static_cast<long long>(offset), "XSpace: " + what));
}

bool SpaceReader::textMangled() const {
    const std::string_view held(buf_.data(), end_);
    size_t triples = 0;
    for (size_t at = held.find("\xEF\xBF\xBD"); at != std::string_view::npos;
         at = held.find("\xEF\xBF\xBD", at + 3))
        ++triples;
    return triples >= 8 && triples * 3 * 10 >= held.size();
}

}  // namespace stallscope::xspace
