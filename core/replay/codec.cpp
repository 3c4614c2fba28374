#include "core/replay/codec.h"

#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <sstream>

#include "core/errors.h"
#include "core/input_stream.h"
#include "core/progress.h"
#include "replay.pb.h"

#include <google/protobuf/arena.h>
#include "core/sqlite.h"
#include "core/workspace.h"

namespace stallscope::replay {

namespace {

constexpr size_t kInstrsPerChunk = 1 << 16;
constexpr const char* kBlobStream = "replay";

void setRegion(replaypb::Region* out, const Region& r, uint32_t spaceBase) {
    out->set_space(spaceBase + r.space);
    out->set_address(r.address);
    out->set_bytes(r.bytes);
}

// Encodes the trace as a sequence of chunks; `emit` receives each serialized chunk.
void encodeChunks(const InstructionStream& trace, const std::vector<uint32_t>* origIndex,
                  const std::function<void(const std::string&, size_t instrsDone)>& emit) {
    // String table: the trace's strings, then the space names.
    const auto spaceBase = static_cast<uint32_t>(trace.strings.size());
    const size_t n = trace.instrs.size();
    size_t next = 0;
    std::string bytes;
    do {
        // An arena per chunk: one allocation sweep instead of one per message.
        google::protobuf::Arena arena;
        auto& chunk = *google::protobuf::Arena::CreateMessage<replaypb::Chunk>(&arena);
        if (next == 0) {
            auto* m = chunk.mutable_machine();
            const Machine& mm = trace.machine;
            m->set_name(mm.name);
            m->set_clock_ghz(mm.clockGhz);
            for (const auto& s : mm.spaces) {
                auto* sp = m->add_spaces();
                sp->set_name(s.name);
                sp->set_bytes(s.bytes);
            }
            for (const auto& l : mm.links) {
                auto* lp = m->add_links();
                lp->set_src(mm.spaces[l.src].name);
                lp->set_dst(mm.spaces[l.dst].name);
                lp->set_base_latency(l.baseLatency);
                lp->set_bytes_per_cycle(l.bytesPerCycle);
            }
            if (mm.dcache) {
                auto* d = m->mutable_dcache();
                d->set_space(mm.spaces[mm.dcache->space].name);
                d->set_page_bytes(mm.dcache->pageBytes);
                d->set_bucket_pages(mm.dcache->bucketPages);
            }
            for (const auto& w : mm.lightweight) m->add_lightweight(w);
            for (const auto& s : trace.strings) chunk.add_strings(s);
            for (const auto& s : mm.spaces) chunk.add_strings(s.name);
            for (const auto& h : trace.hlos) {
                auto* hp = chunk.add_hlos();
                hp->set_id(h.id);
                hp->set_name(h.name);
                hp->set_category(h.category);
            }
        }
        chunk.set_first_index(next);
        const size_t stop = std::min(n, next + kInstrsPerChunk);
        for (size_t i = next; i < stop; ++i) {
            const Instr& in = trace.instrs[i];
            auto* ip = chunk.add_instrs();
            ip->set_op(in.op);
            ip->set_unit(in.unit);
            if (in.cost != 1) ip->set_cost(in.cost);
            if (in.busy != in.cost) ip->set_busy(in.busy);
            if (in.hlo != kNone) ip->set_hlo(trace.hlos[in.hlo].id);
            for (uint32_t r : trace.regsRead(in)) ip->add_rd(r);
            for (uint32_t r : trace.regsWritten(in)) ip->add_wr(r);
            for (const Region& r : trace.memRead(in)) setRegion(ip->add_mrd(), r, spaceBase);
            for (const Region& r : trace.memWritten(in)) setRegion(ip->add_mwr(), r, spaceBase);
            if (in.kind == InstrKind::DmaIssue) {
                const Dma& d = trace.dmas[in.dma];
                ip->set_dma_id(d.id);
                setRegion(ip->mutable_dma_src(), d.src, spaceBase);
                setRegion(ip->mutable_dma_dst(), d.dst, spaceBase);
            } else if (in.kind == InstrKind::DmaWait) {
                ip->set_wait(trace.dmas[in.dma].id);
            }
            if (trace.hasMeasurements()) {
                if (trace.measuredCycle[i] >= 0) ip->set_cycle(trace.measuredCycle[i]);
                if (trace.measuredStall[i] >= 0) ip->set_stall(trace.measuredStall[i]);
            }
            if (origIndex) ip->set_orig_i((*origIndex)[i]);
        }
        next = stop;
        bytes.clear();
        chunk.SerializeToString(&bytes);
        emit(bytes, next);
    } while (next < n);
}

// Feeds decoded chunks into a InstructionStreamBuilder, keeping the shared string table.
class ChunkDecoder {
  public:
    // Throws TraceError; callers add the location.
    void decode(const replaypb::Chunk& chunk) {
        if (chunk.has_machine()) {
            const auto& m = chunk.machine();
            Machine machine;
            machine.name = m.name();
            machine.clockGhz = m.clock_ghz() > 0 ? m.clock_ghz() : 1.0;
            for (const auto& s : m.spaces()) machine.spaces.push_back({s.name(), s.bytes()});
            for (const auto& l : m.links()) {
                Link link;
                link.src = machine.findSpace(l.src());
                link.dst = machine.findSpace(l.dst());
                if (link.src == kNone || link.dst == kNone)
                    throw InstructionStreamError("link " + l.src() + "->" + l.dst() +
                                                 " names an unknown space");
                link.baseLatency = l.base_latency();
                link.bytesPerCycle = l.bytes_per_cycle();
                machine.links.push_back(link);
            }
            if (m.has_dcache()) {
                DcacheGeometry g;
                g.space = machine.findSpace(m.dcache().space());
                if (g.space == kNone) throw InstructionStreamError("dcache names an unknown space");
                g.pageBytes = m.dcache().page_bytes();
                g.bucketPages = m.dcache().bucket_pages();
                if (g.pageBytes == 0 || g.bucketPages == 0)
                    throw InstructionStreamError(
                        "dcache page_bytes and bucket_pages must be positive");
                machine.dcache = g;
            }
            for (const auto& w : m.lightweight()) machine.lightweight.push_back(w);
            builder.setMachine(std::move(machine));
        }
        for (const auto& s : chunk.strings()) strings_.push_back(s);
        for (const auto& h : chunk.hlos()) builder.addHlo(Hlo{h.id(), h.name(), h.category()});
        InstrRecord rec;
        uint64_t index = chunk.first_index();
        for (const auto& ip : chunk.instrs()) {
            rec.clear();
            rec.index = static_cast<int64_t>(index++);
            rec.op = str(ip.op());
            rec.unit = str(ip.unit());
            if (ip.has_cost()) rec.cost = static_cast<int64_t>(ip.cost());
            if (ip.has_busy()) rec.busy = static_cast<int64_t>(ip.busy());
            if (ip.has_hlo()) rec.hlo = ip.hlo();
            for (uint32_t r : ip.rd()) rec.rd.push_back(str(r));
            for (uint32_t r : ip.wr()) rec.wr.push_back(str(r));
            for (const auto& r : ip.mrd()) rec.mrd.push_back(region(r));
            for (const auto& r : ip.mwr()) rec.mwr.push_back(region(r));
            if (ip.has_dma_id()) {
                rec.hasDma = true;
                rec.dmaId = ip.dma_id();
                rec.dmaSrc = region(ip.dma_src());
                rec.dmaDst = region(ip.dma_dst());
            }
            if (ip.has_wait()) rec.wait = ip.wait();
            if (ip.has_cycle()) rec.cycle = ip.cycle();
            if (ip.has_stall()) rec.stall = ip.stall();
            builder.addInstr(rec);
        }
    }

    InstructionStreamBuilder builder;

  private:
    std::string_view str(uint32_t index) const {
        if (index >= strings_.size())
            throw InstructionStreamError("string index " + std::to_string(index) +
                                         " outside the string table");
        return strings_[index];
    }
    InstrRecord::RegionRecord region(const replaypb::Region& r) const {
        return {str(r.space()), static_cast<int64_t>(r.address()), static_cast<int64_t>(r.bytes())};
    }
    std::vector<std::string> strings_;
};

std::string zstdCompress(const std::string& data) {
    std::string out(ZSTD_compressBound(data.size()), '\0');
    const size_t size = ZSTD_compress(out.data(), out.size(), data.data(), data.size(), 3);
    if (ZSTD_isError(size)) throw Failure(std::string("zstd: ") + ZSTD_getErrorName(size));
    out.resize(size);
    return out;
}

std::string zstdDecompress(std::string_view data) {
    const unsigned long long size = ZSTD_getFrameContentSize(data.data(), data.size());
    if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN)
        throw Failure("stored replay chunk is corrupt");
    std::string out(size, '\0');
    const size_t got = ZSTD_decompress(out.data(), out.size(), data.data(), data.size());
    if (ZSTD_isError(got) || got != size) throw Failure("stored replay chunk is corrupt");
    return out;
}

void putVarint(std::ostream& out, uint64_t v) {
    char buf[10];
    int n = 0;
    while (v >= 0x80) {
        buf[n++] = static_cast<char>((v & 0x7F) | 0x80);
        v >>= 7;
    }
    buf[n++] = static_cast<char>(v);
    out.write(buf, n);
}

}  // namespace

void writeBinary(const InstructionStream& trace, std::ostream& out,
                 const std::vector<uint32_t>* origIndex) {
    ZSTD_CCtx* cctx = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 3);
    std::string compressed(ZSTD_CStreamOutSize(), '\0');
    auto feed = [&](const char* data, size_t size, ZSTD_EndDirective mode) {
        ZSTD_inBuffer input{data, size, 0};
        for (;;) {
            ZSTD_outBuffer output{compressed.data(), compressed.size(), 0};
            const size_t remaining = ZSTD_compressStream2(cctx, &output, &input, mode);
            if (ZSTD_isError(remaining)) throw Failure(ZSTD_getErrorName(remaining));
            out.write(compressed.data(), static_cast<std::streamsize>(output.pos));
            if (mode == ZSTD_e_end ? remaining == 0 : input.pos == input.size) break;
        }
    };
    std::ostringstream header;
    header.write(kBinaryMagic, kBinaryMagicSize);
    putVarint(header, 1);
    feed(header.str().data(), header.str().size(), ZSTD_e_continue);
    encodeChunks(trace, origIndex, [&](const std::string& chunk, size_t) {
        std::ostringstream len;
        putVarint(len, chunk.size());
        feed(len.str().data(), len.str().size(), ZSTD_e_continue);
        feed(chunk.data(), chunk.size(), ZSTD_e_continue);
    });
    feed(nullptr, 0, ZSTD_e_end);
    ZSTD_freeCCtx(cctx);
    if (!out) throw Failure("write failed");
}

InstructionStream readBinary(InputFile& in, Progress* progress) {
    uint64_t offset = 0;  // in the decompressed content
    auto readExact = [&](char* out, size_t n) {
        size_t total = 0;
        while (total < n) {
            const size_t got = in.read(out + total, n - total);
            if (got == 0) return total;
            total += got;
        }
        offset += total;
        return total;
    };
    char magic[kBinaryMagicSize];
    if (readExact(magic, kBinaryMagicSize) != kBinaryMagicSize ||
        std::memcmp(magic, kBinaryMagic, kBinaryMagicSize) != 0)
        throw InputError(atOffset(in.path(), 0, "not a Stallscope binary replay trace"));
    auto readVarint = [&](uint64_t& value) -> bool {
        value = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            char c;
            if (in.read(&c, 1) != 1) {
                if (shift == 0) return false;
                throw InputError(
                    atOffset(in.path(), static_cast<long long>(offset), "truncated length prefix"));
            }
            ++offset;
            value |= static_cast<uint64_t>(static_cast<unsigned char>(c) & 0x7F) << shift;
            if (!(c & 0x80)) return true;
        }
        throw InputError(atOffset(in.path(), static_cast<long long>(offset), "bad varint"));
    };
    uint64_t version = 0;
    if (!readVarint(version) || version != 1)
        throw InputError(atOffset(in.path(), static_cast<long long>(offset),
                                  "unsupported binary replay version " + std::to_string(version)));
    ChunkDecoder decoder;
    std::string buffer;
    replaypb::Chunk chunk;
    for (uint64_t size; readVarint(size);) {
        const uint64_t at = offset;
        if (size > (1ull << 31))
            throw InputError(atOffset(in.path(), static_cast<long long>(at), "chunk too large"));
        // Grown as the bytes arrive: a length prefix alone (a corrupt or hostile file) never
        // makes us allocate what the file does not hold.
        buffer.clear();
        for (size_t got = 0; got < size;) {
            const size_t step = std::min<size_t>(size - got, size_t(16) << 20);
            buffer.resize(got + step);
            const size_t read = readExact(buffer.data() + got, step);
            got += read;
            if (read != step)
                throw InputError(atOffset(in.path(), static_cast<long long>(at),
                                          "truncated chunk (file ends inside it)"));
        }
        if (!chunk.ParseFromString(buffer))
            throw InputError(atOffset(in.path(), static_cast<long long>(at), "corrupt chunk"));
        try {
            decoder.decode(chunk);
        } catch (const InstructionStreamError& e) {
            throw InputError(atOffset(in.path(), static_cast<long long>(at),
                                      std::string("in chunk at instruction ") +
                                          std::to_string(chunk.first_index()) + ": " + e.what()));
        }
        if (progress) progress->report(in.fraction(), "reading binary trace");
    }
    try {
        return decoder.builder.finish();
    } catch (const InstructionStreamError& e) {
        throw InputError(atOffset(in.path(), static_cast<long long>(offset), e.what()));
    }
}

void storeInstructionStream(Workspace& ws, int64_t profileId, const InstructionStream& trace,
                            Progress* progress) {
    int64_t seq = 0;
    sql::Statement st(ws.db(), "INSERT INTO blobs(profile_id, stream, seq, data) VALUES(?,?,?,?)");
    encodeChunks(trace, nullptr, [&](const std::string& chunk, size_t done) {
        const std::string packed = zstdCompress(chunk);
        st.bind(1, profileId).bind(2, std::string_view(kBlobStream)).bind(3, seq++);
        st.bindBlob(4, packed.data(), packed.size());
        st.exec();
        if (progress)
            progress->report(trace.instrs.empty() ? 1.0 : double(done) / trace.instrs.size(),
                             "storing trace");
    });
}

InstructionStream loadInstructionStream(const Workspace& ws, int64_t profileId) {
    sql::Statement st(ws.db(),
                      "SELECT data FROM blobs WHERE profile_id = ? AND stream = ? ORDER BY seq");
    st.bind(1, profileId).bind(2, std::string_view(kBlobStream));
    ChunkDecoder decoder;
    replaypb::Chunk chunk;
    bool any = false;
    while (st.step()) {
        any = true;
        const std::string raw = zstdDecompress(st.blob(0));
        if (!chunk.ParseFromString(raw)) throw Failure("stored replay chunk is corrupt");
        decoder.decode(chunk);
    }
    if (!any) throw Failure("profile " + std::to_string(profileId) + " holds no replay trace");
    return decoder.builder.finish();
}

int64_t storedInstructionStreamBytes(const Workspace& ws, int64_t profileId) {
    sql::Statement st(ws.db(),
                      "SELECT coalesce(sum(length(data)), 0) FROM blobs WHERE profile_id = ? AND "
                      "stream = ?");
    st.bind(1, profileId).bind(2, std::string_view(kBlobStream));
    return st.step() ? st.int64(0) : 0;
}

}  // namespace stallscope::replay
