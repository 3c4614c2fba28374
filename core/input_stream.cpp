#include "core/input_stream.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/errors.h"
#include "core/import_buffers.h"
#include "core/open_workspaces.h"

namespace stallscope {

namespace {}

const char* compressionName(Compression c) {
    switch (c) {
        case Compression::Gzip:
            return "gzip";
        case Compression::Zstd:
            return "zstd";
        case Compression::None:
            break;
    }
    return "none";
}

InputFile::InputFile(std::string path)
    : path_(std::move(path)),
      raw_(std::max<size_t>(importBuffers().fileChunk, 4096)),
      hash_(XXH3_createState()) {
    // A constructor that throws runs no destructor: what was acquired is released here.
    try {
        open();
    } catch (...) {
        release();
        throw;
    }
}

void InputFile::open() {
    XXH3_128bits_reset(hash_);
    struct stat st {};
    if (::stat(path_.c_str(), &st) != 0)
        throw InputError(path_ + ": cannot open: " + std::strerror(errno));
    if (S_ISDIR(st.st_mode)) throw InputError(path_ + ": is a directory, not a file");
    refuseOpenWorkspaceFile(path_, "read");
    file_ = std::fopen(path_.c_str(), "rb");
    if (!file_) throw InputError(path_ + ": cannot open: " + std::strerror(errno));
    // Pipes and FIFOs (`import <(zcat …)`) have no size: progress then reads as done.
    fileSize_ = S_ISREG(st.st_mode) ? static_cast<uint64_t>(st.st_size) : 0;
    refillRaw();
    const auto* b = reinterpret_cast<const unsigned char*>(raw_.data());
    const size_t avail = rawEnd_ - rawPos_;
    if (avail == 0) throw InputError(path_ + ": file is empty");
    if (avail >= 4 && b[0] == 0x28 && b[1] == 0xB5 && b[2] == 0x2F && b[3] == 0xFD) {
        compression_ = Compression::Zstd;
        zstd_ = ZSTD_createDCtx();
    } else if (avail >= 2 && b[0] == 0x1F && b[1] == 0x8B) {
        compression_ = Compression::Gzip;
        if (inflateInit2(&gzip_, 16 + MAX_WBITS) != Z_OK) throw Failure("zlib init failed");
        gzipOpen_ = true;
    }
}

InputFile::~InputFile() {
    release();
}

void InputFile::release() {
    XXH3_freeState(hash_);
    hash_ = nullptr;
    if (file_) std::fclose(file_);
    file_ = nullptr;
    if (zstd_) ZSTD_freeDCtx(zstd_);
    zstd_ = nullptr;
    if (gzipOpen_) inflateEnd(&gzip_);
    gzipOpen_ = false;
}

size_t InputFile::readFile(char* into, size_t n) {
    const size_t got = std::fread(into, 1, n, file_);
    if (got == 0) {
        if (std::ferror(file_))
            throw InputError(atOffset(path_, static_cast<long long>(fileOffset_),
                                      std::string("read error: ") + std::strerror(errno)));
        rawEof_ = true;
        return 0;
    }
    XXH3_128bits_update(hash_, into, got);
    return got;
}

bool InputFile::refillRaw() {
    if (rawEof_) return false;
    if (rawPos_ < rawEnd_) return true;
    const size_t got = readFile(raw_.data(), raw_.size());
    if (got == 0) return false;
    rawPos_ = 0;
    rawEnd_ = got;
    return true;
}

size_t InputFile::readRaw(char* out, size_t n) {
    size_t total = 0;
    while (total < n) {
        // A read as large as the chunk goes straight to the caller's buffer (uncompressed JSON
        // was copied twice: into the chunk, then into the parser's window).
        if (rawPos_ == rawEnd_ && n - total >= raw_.size()) {
            if (rawEof_) break;
            const size_t got = readFile(out + total, n - total);
            if (got == 0) break;
            fileOffset_ += got;
            total += got;
            continue;
        }
        if (!refillRaw()) break;
        const size_t take = std::min(n - total, rawEnd_ - rawPos_);
        std::memcpy(out + total, raw_.data() + rawPos_, take);
        rawPos_ += take;
        fileOffset_ += take;
        total += take;
    }
    return total;
}

size_t InputFile::decompress(char* out, size_t n) {
    if (compression_ == Compression::None) return readRaw(out, n);
    if (compression_ == Compression::Zstd) {
        ZSTD_outBuffer output{out, n, 0};
        while (output.pos == 0) {
            if (!refillRaw()) {
                if (zstdFrameOpen_)
                    throw InputError(atOffset(path_, static_cast<long long>(fileOffset_),
                                              "truncated zstd stream"));
                return 0;
            }
            // Feed small slices: zstd reports corruption when the block holding it is complete,
            // so the end of the slice just fed locates the bad block within a few KiB.
            constexpr size_t kZstdSlice = 8 << 10;
            ZSTD_inBuffer input{raw_.data() + rawPos_, std::min(rawEnd_ - rawPos_, kZstdSlice), 0};
            const size_t rc = ZSTD_decompressStream(zstd_, &output, &input);
            if (ZSTD_isError(rc))
                throw InputError(atOffset(path_, static_cast<long long>(fileOffset_ + input.size),
                                          std::string("corrupt zstd stream (in the block ending "
                                                      "at or before this offset): ") +
                                              ZSTD_getErrorName(rc)));
            rawPos_ += input.pos;
            fileOffset_ += input.pos;
            zstdFrameOpen_ = rc != 0;
        }
        return output.pos;
    }
    // gzip (members may be concatenated)
    size_t produced = 0;
    while (produced == 0) {
        if (gzipDone_) {
            if (!refillRaw()) return 0;
            inflateReset(&gzip_);
            gzipDone_ = false;
        }
        if (!refillRaw())
            throw InputError(
                atOffset(path_, static_cast<long long>(fileOffset_), "truncated gzip stream"));
        gzip_.next_in = reinterpret_cast<Bytef*>(raw_.data() + rawPos_);
        gzip_.avail_in = static_cast<uInt>(rawEnd_ - rawPos_);
        gzip_.next_out = reinterpret_cast<Bytef*>(out);
        gzip_.avail_out = static_cast<uInt>(n);
        const int rc = inflate(&gzip_, Z_NO_FLUSH);
        const size_t consumed = (rawEnd_ - rawPos_) - gzip_.avail_in;
        rawPos_ += consumed;
        fileOffset_ += consumed;
        produced = n - gzip_.avail_out;
        if (rc == Z_STREAM_END) {
            gzipDone_ = true;
        } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
            throw InputError(atOffset(
                path_, static_cast<long long>(fileOffset_),
                std::string("corrupt gzip stream: ") + (gzip_.msg ? gzip_.msg : "inflate failed")));
        }
    }
    return produced;
}

std::string_view InputFile::peek(size_t n) {
    // In steps: a detector asking for 1 MiB of a 4 KB file should not clear a megabyte.
    while (peeked_.size() < n) {
        const size_t old = peeked_.size();
        const size_t want = std::min(n - old, size_t(64) << 10);
        peeked_.resize(old + want);
        const size_t got = decompress(peeked_.data() + old, want);
        peeked_.resize(old + got);
        if (got == 0) break;
    }
    return std::string_view(peeked_).substr(0, std::min(n, peeked_.size()));
}

size_t InputFile::read(char* out, size_t n) {
    if (peekPos_ < peeked_.size()) {
        const size_t take = std::min(n, peeked_.size() - peekPos_);
        std::memcpy(out, peeked_.data() + peekPos_, take);
        peekPos_ += take;
        return take;
    }
    return decompress(out, n);
}

std::string InputFile::contentHash() const {
    const XXH128_hash_t h = XXH3_128bits_digest(hash_);
    char hex[40];
    std::snprintf(hex, sizeof hex, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                  static_cast<unsigned long long>(h.low64));
    return std::string("xxh128:") + hex;
}

LineReader::LineReader(InputFile& in)
    : in_(in), buffer_(std::max<size_t>(importBuffers().lineWindow, 2 * (kPadding + 4096))) {}

bool LineReader::next(std::string_view& line) {
    for (;;) {
        const char* start = buffer_.data() + begin_;
        const void* nl = std::memchr(start, '\n', end_ - begin_);
        if (nl || (eof_ && begin_ < end_)) {
            const char* stop = nl ? static_cast<const char*>(nl) : buffer_.data() + end_;
            size_t length = static_cast<size_t>(stop - start);
            begin_ += length + (nl ? 1 : 0);
            if (length && start[length - 1] == '\r') --length;
            ++lineNumber_;
            line = std::string_view(start, length);
            return true;
        }
        if (eof_) return false;
        // Move the partial line to the front, grow when one line fills the buffer.
        if (begin_ > 0) {
            std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
            end_ -= begin_;
            begin_ = 0;
        }
        if (buffer_.size() - end_ < kPadding + 4096) {
            if (buffer_.size() >= (size_t(1) << 30))
                throw InputError(atLine(in_.path(), lineNumber_ + 1,
                                        "a line longer than 1 GiB; not a text format Stallscope "
                                        "reads"));
            buffer_.resize(buffer_.size() * 2);
        }
        const size_t got = in_.read(buffer_.data() + end_, buffer_.size() - end_ - kPadding);
        if (got == 0) eof_ = true;
        end_ += got;
    }
}

size_t LineReader::capacityAfter(std::string_view line) const {
    return static_cast<size_t>(buffer_.data() + buffer_.size() - line.data());
}

std::string readAll(InputFile& in) {
    std::string out;
    char chunk[1 << 16];
    for (size_t got; (got = in.read(chunk, sizeof chunk)) > 0;) out.append(chunk, got);
    return out;
}

}  // namespace stallscope
