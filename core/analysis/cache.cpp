#include "core/analysis/cache.h"

#include <chrono>
#include <mutex>
#include <set>
#include <tuple>

#include "core/analysis/registry.h"
#include "core/errors.h"
#include "core/sqlite.h"
#include "core/trace/trace_store.h"

namespace stallscope::analysis {

Encoded Definition::deriveForStorage(const trace::TraceStore& store) const {
    const Result result = derive(store);
    return {encode(result.get()), noteOf(result.get())};
}

QJsonObject Definition::noteOf(const void*) const {
    return {};
}

QJsonObject Definition::deferredNote(const trace::TraceStore&) const {
    return {};
}

std::optional<StoredPayload> readStored(const Workspace& workspace, int64_t profileId,
                                        std::string_view name) {
    sql::Statement st(workspace.db(),
                      "SELECT version, data FROM analyses WHERE profile_id = ? AND name = ? "
                      "ORDER BY seq");
    st.bind(1, profileId).bind(2, name);
    std::optional<StoredPayload> out;
    while (st.step()) {
        if (!out) out = StoredPayload{int(st.int64(0)), {}};
        out->payload += st.blob(1);
    }
    return out;
}

void writeStored(Workspace& workspace, int64_t profileId, std::string_view name, int version,
                 std::string_view payload) {
    // Its own transaction unless the caller (an import) has one open.
    std::optional<sql::Transaction> tx;
    if (sqlite3_get_autocommit(workspace.db())) tx.emplace(workspace.db());
    sql::Statement drop(workspace.db(), "DELETE FROM analyses WHERE profile_id = ? AND name = ?");
    drop.bind(1, profileId).bind(2, name);
    drop.exec();
    sql::Statement insert(workspace.db(),
                          "INSERT INTO analyses(profile_id, name, version, seq, data) "
                          "VALUES(?, ?, ?, ?, ?)");
    size_t at = 0;
    int64_t seq = 0;
    do {
        const std::string_view row = payload.substr(at, kRowBytes);
        insert.bind(1, profileId).bind(2, name).bind(3, version).bind(4, seq++);
        insert.bindBlob(5, row.data(), row.size());
        insert.exec();
        insert.reset();
        at += row.size();
    } while (at < payload.size());
    if (tx) tx->commit();
}

namespace {

// Told once per process: a newer build's result seen again in the same session is no news.
bool firstNotice(const Workspace& workspace, int64_t profileId, std::string_view name) {
    static std::mutex mutex;
    static std::set<std::tuple<std::string, int64_t, std::string>> told;
    std::lock_guard lock(mutex);
    return told.emplace(workspace.path(), profileId, std::string(name)).second;
}

std::string newerNotice(const Definition& analysis, int64_t profileId, int storedVersion,
                        bool decoded) {
    const std::string what = "profile " + std::to_string(profileId) + ": its " +
                             std::string(analysis.name()) + " analysis was stored by a newer " +
                             "Stallscope (version " + std::to_string(storedVersion) +
                             ", this one writes " + std::to_string(analysis.version()) + ")";
    return decoded ? what + "; shown as stored, read-only"
                   : what +
                         " in a form this one cannot read; computed again for this session "
                         "and not saved (the stored one is kept)";
}

}  // namespace

Result stored(const Workspace& workspace, int64_t profileId, const Definition& analysis) {
    const auto found = readStored(workspace, profileId, analysis.name());
    if (!found || found->version < analysis.version()) return nullptr;
    try {
        return analysis.decode(found->payload);
    } catch (const std::exception&) {
        return nullptr;  // malformed, or a newer form this build cannot read
    }
}

Result storedOrDerived(const Workspace& workspace, int64_t profileId, const Definition& analysis) {
    if (Result found = stored(workspace, profileId, analysis)) return found;
    return analysis.derive(trace::TraceStore(workspace, profileId));
}

Obtained obtain(Workspace& workspace, int64_t profileId, const Definition& analysis) {
    const auto found = readStored(workspace, profileId, analysis.name());
    Obtained out;
    if (found && found->version >= analysis.version()) {
        const bool newer = found->version > analysis.version();
        try {
            out.result = analysis.decode(found->payload);
            out.origin = newer ? Origin::StoredByNewer : Origin::Stored;
        } catch (const std::exception&) {
            out.result = nullptr;  // unreadable: derived again below
        }
        if (newer && firstNotice(workspace, profileId, analysis.name()))
            out.notice = newerNotice(analysis, profileId, found->version, bool(out.result));
        if (out.result) return out;
        if (newer) {
            const trace::TraceStore store(workspace, profileId);
            out.result = analysis.derive(store);
            out.origin = Origin::DerivedBesideNewer;
            return out;
        }
    }
    const trace::TraceStore store(workspace, profileId);
    out.result = analysis.derive(store);
    out.origin = Origin::Derived;
    if (!workspace.readOnly())
        writeStored(workspace, profileId, analysis.name(), analysis.version(),
                    analysis.encode(out.result.get()));
    return out;
}

QJsonObject deriveAtImport(Workspace& workspace, int64_t profileId,
                           const trace::TraceStore& store) {
    QJsonObject notes;
    for (const Definition* analysis : registry()) {
        if (!analysis->appliesTo(store)) continue;
        const QString key =
            QString::fromUtf8(analysis->name().data(), qsizetype(analysis->name().size()));
        if (analysis->runAt(store) != RunAt::Import) {
            const QJsonObject deferred = analysis->deferredNote(store);
            if (!deferred.isEmpty()) notes.insert(key, deferred);
            continue;
        }
        // A failure is a note, never a failed import: the profile itself is sound.
        const auto began = std::chrono::steady_clock::now();
        QJsonObject note;
        try {
            Encoded encoded = analysis->deriveForStorage(store);
            writeStored(workspace, profileId, analysis->name(), analysis->version(),
                        encoded.payload);
            note = std::move(encoded.note);
        } catch (const Cancelled&) {
            throw;
        } catch (const std::exception& e) {
            note.insert("error", QString::fromStdString(e.what()));
        }
        note.insert("derive_ms", std::chrono::duration<double, std::milli>(
                                     std::chrono::steady_clock::now() - began)
                                     .count());
        notes.insert(key, note);
    }
    return notes;
}

}  // namespace stallscope::analysis
