// XSpace metadata and stats: event and stat metadata read per plane, stat values written as JSON
// arguments (the event's own stats over its metadata's, which are stored once per metadata id).
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "core/errors.h"
#include "core/json_escape.h"
#include "importers/xprof/xspace_internal.h"

namespace stallscope::xspace {

void PlaneReader::readMapEntry(const Field& entry, size_t base) {
    WireReader r(entry.bytes, base, path_);
    Field f;
    int64_t key = 0;
    std::string_view value;
    while (r.next(f)) {
        if (f.number == 1 && f.wireType == 0) key = int64_t(f.value);
        if (f.number == 2 && f.wireType == 2) value = f.bytes;
    }
    if (entry.number == 4) {
        xprof::XEventMetadata m;
        if (!m.ParseFromArray(value.data(), int(value.size())))
            throw InputError(atOffset(path_, static_cast<long long>(entry.offset),
                                      "XSpace: malformed event metadata"));
        eventMeta_[key] = std::move(m);
    } else {
        xprof::XStatMetadata m;
        if (!m.ParseFromArray(value.data(), int(value.size())))
            throw InputError(atOffset(path_, static_cast<long long>(entry.offset),
                                      "XSpace: malformed stat metadata"));
        statMeta_[key] = std::move(m);
    }
}

PlaneReader::EventInfo& PlaneReader::eventInfo(int64_t metadataId) {
    // Metadata ids are small and dense in practice: a direct index first.
    if (metadataId >= 0 && metadataId < int64_t(eventInfoIndex_.size()) &&
        eventInfoIndex_[size_t(metadataId)])
        return *eventInfoIndex_[size_t(metadataId)];
    auto it = eventInfo_.find(metadataId);
    if (it != eventInfo_.end()) return it->second;
    EventInfo info;
    auto meta = eventMeta_.find(metadataId);
    if (meta == eventMeta_.end()) {
        info.shownName = "metadata " + std::to_string(metadataId);
    } else {
        const xprof::XEventMetadata& m = meta->second;
        const bool display = !m.display_name().empty();
        info.shownName = display ? m.display_name() : m.name();
        for (const xprof::XStat& stat : m.stats()) {
            info.tailText += ",";
            info.tailText += statKey(stat.metadata_id());
            appendStatValue(info.tailText, stat);
        }
        if (display && m.name() != m.display_name()) {
            info.tailText += ",\"long_name\":";
            json::appendString(info.tailText, m.name());
        }
    }
    info.name = writer_.intern(info.shownName);
    EventInfo& made = eventInfo_.emplace(metadataId, std::move(info)).first->second;
    if (metadataId >= 0 && metadataId < (int64_t(1) << 20)) {
        if (size_t(metadataId) >= eventInfoIndex_.size())
            eventInfoIndex_.resize(size_t(metadataId) + 1, nullptr);
        eventInfoIndex_[size_t(metadataId)] = &made;  // map nodes do not move
    }
    return made;
}

std::string PlaneReader::statName(int64_t id) const {
    auto it = statMeta_.find(id);
    return it == statMeta_.end() ? "stat " + std::to_string(id) : it->second.name();
}

const std::string& PlaneReader::statKey(int64_t id) {
    // Stat metadata ids are small in practice: a direct index first.
    const bool indexed = id >= 0 && id < 4096;
    if (indexed && size_t(id) < statKeyIndex_.size() && statKeyIndex_[size_t(id)])
        return *statKeyIndex_[size_t(id)];
    auto it = statKeys_.find(id);
    if (it == statKeys_.end()) {
        std::string key;
        json::appendString(key, statName(id));
        key.push_back(':');
        it = statKeys_.emplace(id, std::move(key)).first;
    }
    if (indexed) {
        if (size_t(id) >= statKeyIndex_.size()) statKeyIndex_.resize(size_t(id) + 1, nullptr);
        statKeyIndex_[size_t(id)] = &it->second;  // map nodes do not move
    }
    return it->second;
}

PlaneReader::StatView PlaneReader::viewOf(const xprof::XStat& s) {
    StatView v;
    v.metadataId = s.metadata_id();
    switch (s.value_case()) {
        case xprof::XStat::kDoubleValue: {
            const double d = s.double_value();
            std::memcpy(&v.number, &d, 8);
            v.field = 2;
            break;
        }
        case xprof::XStat::kUint64Value:
            v.field = 3;
            v.number = s.uint64_value();
            break;
        case xprof::XStat::kInt64Value:
            v.field = 4;
            v.number = uint64_t(s.int64_value());
            break;
        case xprof::XStat::kStrValue:
            v.field = 5;
            v.bytes = s.str_value();
            break;
        case xprof::XStat::kBytesValue:
            v.field = 6;
            v.bytes = s.bytes_value();
            break;
        case xprof::XStat::kRefValue:
            v.field = 7;
            v.number = s.ref_value();
            break;
        case xprof::XStat::kCompressedStrValue:
            v.field = 8;
            v.bytes = s.compressed_str_value();
            break;
        default:
            break;
    }
    return v;
}

PlaneReader::StatView PlaneReader::parseStat(std::string_view bytes, size_t base) const {
    StatView v;
    WireReader r(bytes, base, path_);
    Field f;
    while (r.next(f)) {
        if (f.number == 1 && f.wireType == 0) {
            v.metadataId = int64_t(f.value);
        } else if (f.number == 2 && f.wireType == 1) {
            v.field = 2;
            v.number = f.value;
        } else if ((f.number == 3 || f.number == 4 || f.number == 7) && f.wireType == 0) {
            v.field = f.number;
            v.number = f.value;
        } else if ((f.number == 5 || f.number == 6 || f.number == 8) && f.wireType == 2) {
            v.field = f.number;
            v.bytes = f.bytes;
        }
    }
    return v;
}

void PlaneReader::appendStatValue(std::string& out, const xprof::XStat& s) {
    appendStatValue(out, viewOf(s));
}

trace::ArgValue PlaneReader::argValue(const StatView& s) {
    trace::ArgValue v;
    v.number = s.number;
    v.text = s.bytes;
    v.kind = s.field == 2   ? trace::ArgValue::Kind::Double
             : s.field == 3 ? trace::ArgValue::Kind::Unsigned
             : s.field == 4 ? trace::ArgValue::Kind::Signed
                            : trace::ArgValue::Kind::String;
    return v;
}

void PlaneReader::appendStatValue(std::string& out, const StatView& s) {
    switch (s.field) {
        case 2:
        case 3:
        case 4:
        case 5:
            trace::appendArgValue(out, argValue(s));
            break;
        case 6:
            json::appendString(out, "<" + std::to_string(s.bytes.size()) + " bytes>");
            break;
        case 7:
            json::appendString(out, statName(int64_t(s.number)));
            break;
        case 8: {
            ++compressedStats;
            const auto text = decompressStat(s.bytes);
            if (text) {
                json::appendString(out, *text);
            } else {
                ++corruptCompressedStats;
                json::appendString(
                    out, "<" + std::to_string(s.bytes.size()) + " bytes that do not decompress>");
            }
            break;
        }
        default:
            out += "null";
    }
}

bool PlaneReader::fastStats(std::string_view stats) {
    packedValues_.clear();
    layoutKey_.clear();
    const char* p = stats.data();
    const char* const end = p + stats.size();
    while (p < end) {
        if (*p++ != 0x22) return false;  // field 4, length-delimited
        uint64_t n;
        if (!smallVarint(p, end, n) || n > uint64_t(end - p)) return false;
        const char* q = p;
        const char* const statEnd = p + n;
        p = statEnd;
        if (q == statEnd || *q++ != 0x08) return false;  // metadata_id
        uint64_t id;
        if (!smallVarint(q, statEnd, id) || q == statEnd) return false;
        using Kind = trace::ArgValue::Kind;
        trace::ArgValue value;
        const uint8_t tag = uint8_t(*q++);
        if (tag == 0x11) {  // double
            if (statEnd - q != 8) return false;
            std::memcpy(&value.number, q, 8);
            value.kind = Kind::Double;
        } else if (tag == 0x18 || tag == 0x20) {  // uint64, int64
            if (!smallVarint(q, statEnd, value.number) || q != statEnd) return false;
            value.kind = tag == 0x18 ? Kind::Unsigned : Kind::Signed;
        } else if (tag == 0x38) {  // ref: the referenced stat metadata's name
            uint64_t ref;
            if (!smallVarint(q, statEnd, ref) || q != statEnd) return false;
            value.text = refName(int64_t(ref));
            value.kind = Kind::String;
        } else if (tag == 0x2a) {  // str_value
            uint64_t len;
            if (!smallVarint(q, statEnd, len) || len != uint64_t(statEnd - q)) return false;
            value.text = std::string_view(q, size_t(len));
            value.kind = Kind::String;
        } else {
            return false;
        }
        layoutKey_.append(reinterpret_cast<const char*>(&id), sizeof id);
        packedValues_.push_back(value);
    }
    return true;
}

const std::string& PlaneReader::refName(int64_t id) {
    auto it = refNames_.find(id);
    if (it == refNames_.end()) it = refNames_.emplace(id, statName(id)).first;
    return it->second;  // map nodes do not move
}

uint32_t PlaneReader::argsLayout() {
    if (layoutKey_ == lastLayoutKey_) return lastLayout_;
    auto it = argsLayouts_.find(layoutKey_);
    if (it == argsLayouts_.end()) {
        std::vector<std::string> keys;
        for (size_t at = 0; at < layoutKey_.size(); at += sizeof(uint64_t)) {
            uint64_t id;
            std::memcpy(&id, layoutKey_.data() + at, sizeof id);
            keys.push_back(statKey(int64_t(id)));
        }
        it = argsLayouts_.emplace(layoutKey_, writer_.addArgsLayout(std::move(keys))).first;
    }
    lastLayoutKey_ = layoutKey_;
    lastLayout_ = it->second;
    return lastLayout_;
}

uint64_t PlaneReader::eventArgs(EventInfo& info, std::string_view stats, size_t base) {
    if (!info.sharedArgsMade) {
        info.sharedArgsMade = true;
        info.sharedArgs =
            info.tailText.empty() ? 0 : writer_.addArgs("{" + info.tailText.substr(1) + "}");
    }
    if (fastStats(stats)) {
        if (packedValues_.empty()) return info.sharedArgs;
        return writer_.addArgsPacked(info.sharedArgs, argsLayout(), packedValues_.data(),
                                     packedValues_.size());
    }
    args_.assign("{");
    WireReader r(stats, base, path_);
    Field f;
    while (r.next(f)) {
        if (f.number != 4 || f.wireType != 2) continue;
        const StatView stat = parseStat(f.bytes, f.offset);
        if (args_.size() > 1) args_.push_back(',');
        args_ += statKey(stat.metadataId);
        appendStatValue(args_, stat);
    }
    if (args_.size() == 1) return info.sharedArgs;
    args_.push_back('}');
    return writer_.addArgsOver(info.sharedArgs, args_);
}

}  // namespace stallscope::xspace
