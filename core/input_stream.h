#pragma once

#include <xxhash.h>
#include <zlib.h>
#include <zstd.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace stallscope {

enum class Compression { None, Gzip, Zstd };
const char* compressionName(Compression c);

// A file read as a stream of decompressed bytes, whatever its compression (detected from the
// magic bytes). Errors (missing, unreadable, a directory, empty, truncated or corrupt streams)
// are InputErrors naming the file and the byte offset in the file on disk.
class InputFile {
  public:
    explicit InputFile(std::string path);
    ~InputFile();
    InputFile(const InputFile&) = delete;
    InputFile& operator=(const InputFile&) = delete;

    const std::string& path() const { return path_; }
    Compression compression() const { return compression_; }
    uint64_t fileSize() const { return fileSize_; }
    // How far into the file on disk we have read: progress = fileOffset / fileSize.
    uint64_t fileOffset() const { return fileOffset_; }
    double fraction() const { return fileSize_ ? double(fileOffset_) / double(fileSize_) : 1.0; }

    // Up to n bytes of decompressed content from the start, without consuming them.
    std::string_view peek(size_t n);

    // Reads up to n decompressed bytes; returns 0 only at the end of the content.
    size_t read(char* out, size_t n);

    // "xxh128:<hex>" of the raw file bytes read so far (the whole file once read() returned
    // 0). XXH3 runs at memory speed; SHA-256 cost a second per 100 MB imported.
    std::string contentHash() const;

  private:
    void open();
    void release();
    size_t readRaw(char* out, size_t n);
    size_t decompress(char* out, size_t n);
    bool refillRaw();
    // Reads up to n bytes of the file into `into` and adds them to the hash; 0 at its end.
    size_t readFile(char* into, size_t n);

    std::string path_;
    FILE* file_ = nullptr;
    Compression compression_ = Compression::None;
    uint64_t fileSize_ = 0;
    uint64_t fileOffset_ = 0;
    std::vector<char> raw_;
    size_t rawPos_ = 0, rawEnd_ = 0;
    bool rawEof_ = false;
    std::string peeked_;
    size_t peekPos_ = 0;
    ZSTD_DCtx* zstd_ = nullptr;
    bool zstdFrameOpen_ = false;
    z_stream gzip_{};
    bool gzipOpen_ = false;
    bool gzipDone_ = false;
    XXH3_state_t* hash_ = nullptr;
};

// Splits an InputFile into lines. Each returned line stays valid until the next call and is
// followed by at least kPadding readable bytes (what SIMD JSON parsers want).
class LineReader {
  public:
    static constexpr size_t kPadding = 64;
    explicit LineReader(InputFile& in);
    // False at the end. The newline (and a CR before it) is not part of the line.
    bool next(std::string_view& line);
    long long lineNumber() const { return lineNumber_; }
    size_t capacityAfter(std::string_view line) const;

  private:
    InputFile& in_;
    std::vector<char> buffer_;
    size_t begin_ = 0, end_ = 0;
    bool eof_ = false;
    long long lineNumber_ = 0;
};

// Whole-file helpers for small inputs.
std::string readAll(InputFile& in);

}  // namespace stallscope
