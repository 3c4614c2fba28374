#include "core/schema.h"

#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include "core/kernel_metric_sets.h"
#include "core/sqlite.h"

namespace stallscope::schema {

namespace {

// Each entry brings the schema from version (index) to (index + 1).
const char* const kMigrations[] = {
    // 0 -> 1
    R"sql(
    CREATE TABLE profiles(
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL,
        source_path TEXT,
        source_size INTEGER,
        source_hash TEXT,
        imported_at TEXT NOT NULL,
        metadata TEXT NOT NULL DEFAULT '{}'
    );
    )sql",
    // 1 -> 2: derived profiles and binary payloads.
    R"sql(
    ALTER TABLE profiles ADD COLUMN parent_id INTEGER REFERENCES profiles(id) ON DELETE SET NULL;
    CREATE TABLE blobs(
        profile_id INTEGER NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
        stream TEXT NOT NULL,
        seq INTEGER NOT NULL,
        data BLOB NOT NULL,
        PRIMARY KEY(profile_id, stream, seq)
    ) WITHOUT ROWID;
    )sql",
    // 2 -> 3: row data of noise-injection, CPI-stack and estimate profiles.
    R"sql(
    CREATE TABLE noise_runs(
        profile_id INTEGER NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
        line INTEGER NOT NULL,
        machine TEXT NOT NULL DEFAULT '',
        region TEXT NOT NULL,
        mode TEXT NOT NULL,
        k REAL NOT NULL,
        time REAL NOT NULL,
        time_unit TEXT NOT NULL,
        rep INTEGER,
        body_instr REAL,
        payload_instr REAL,
        overhead_instr REAL,
        cores INTEGER,
        perf REAL,
        params TEXT NOT NULL DEFAULT '{}',
        extra TEXT NOT NULL DEFAULT '{}'
    );
    CREATE INDEX noise_runs_profile ON noise_runs(profile_id);
    CREATE TABLE cpi_stacks(
        profile_id INTEGER NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
        kernel TEXT NOT NULL,
        source TEXT NOT NULL,
        grp TEXT NOT NULL DEFAULT '',
        category TEXT NOT NULL,
        cycles REAL NOT NULL
    );
    CREATE INDEX cpi_stacks_profile ON cpi_stacks(profile_id);
    CREATE TABLE kernel_metrics(
        profile_id INTEGER NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
        kernel TEXT NOT NULL,
        source TEXT NOT NULL,
        name TEXT NOT NULL,
        unit TEXT NOT NULL DEFAULT '',
        value REAL,
        text TEXT
    );
    CREATE INDEX kernel_metrics_profile ON kernel_metrics(profile_id);
    CREATE TABLE estimates(
        profile_id INTEGER NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
        workload TEXT NOT NULL,
        region TEXT NOT NULL,
        hardware TEXT NOT NULL,
        estimator TEXT NOT NULL,
        predicted_us REAL NOT NULL,
        measured_us REAL,
        wall_s REAL
    );
    CREATE INDEX estimates_profile ON estimates(profile_id);
    )sql",
    // 3 -> 4: trace profiles (XProf, Chrome JSON, Chakra): tracks, packed slice/counter chunks
    // per (track, LOD level), strings, zstd-packed args, flows, per-name op statistics.
    R"sql(
    CREATE TABLE trace_tracks(
        profile_id INTEGER NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
        id INTEGER NOT NULL,
        parent_id INTEGER,
        kind TEXT NOT NULL,
        name TEXT NOT NULL,
        sort_index INTEGER NOT NULL DEFAULT 0,
        pid TEXT NOT NULL DEFAULT '',
        tid TEXT NOT NULL DEFAULT '',
        slices INTEGER NOT NULL DEFAULT 0,
        instants INTEGER NOT NULL DEFAULT 0,
        samples INTEGER NOT NULL DEFAULT 0,
        max_depth INTEGER NOT NULL DEFAULT 0,
        start_ns INTEGER,
        end_ns INTEGER,
        levels TEXT NOT NULL DEFAULT '0',
        PRIMARY KEY(profile_id, id)
    ) WITHOUT ROWID;
    CREATE TABLE trace_chunks(
        profile_id INTEGER NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
        track_id INTEGER NOT NULL,
        level INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        first_ns INTEGER NOT NULL,
        end_ns INTEGER NOT NULL,
        count INTEGER NOT NULL,
        data BLOB NOT NULL,
        PRIMARY KEY(profile_id, track_id, level, seq)
    ) WITHOUT ROWID;
    CREATE TABLE trace_strings(
        profile_id INTEGER NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
        id INTEGER NOT NULL,
        text TEXT NOT NULL,
        PRIMARY KEY(profile_id, id)
    ) WITHOUT ROWID;
    CREATE TABLE trace_args(
        profile_id INTEGER NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        data BLOB NOT NULL,
        PRIMARY KEY(profile_id, seq)
    ) WITHOUT ROWID;
    CREATE TABLE trace_flows(
        profile_id INTEGER NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
        id INTEGER NOT NULL,
        name_id INTEGER NOT NULL,
        from_track INTEGER NOT NULL,
        from_ns INTEGER NOT NULL,
        from_depth INTEGER NOT NULL,
        to_track INTEGER NOT NULL,
        to_ns INTEGER NOT NULL,
        to_depth INTEGER NOT NULL,
        PRIMARY KEY(profile_id, id)
    ) WITHOUT ROWID;
    CREATE TABLE trace_ops(
        profile_id INTEGER NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
        name_id INTEGER NOT NULL,
        count INTEGER NOT NULL,
        total_ns INTEGER NOT NULL,
        self_ns INTEGER NOT NULL,
        min_ns INTEGER NOT NULL,
        max_ns INTEGER NOT NULL,
        p50_ns INTEGER NOT NULL,
        p95_ns INTEGER NOT NULL,
        PRIMARY KEY(profile_id, name_id)
    ) WITHOUT ROWID;
    )sql",
    // 4 -> 5: kernel metrics packed per (kernel, source) against a per-profile dictionary of
    // (name, unit) pairs (kernel_metric_sets.h); migrateFrom() then moves the old rows over.
    // The sets are a rowid table: kilobyte rows in a WITHOUT ROWID b-tree spill into mostly
    // empty overflow pages.
    R"sql(
    CREATE TABLE kernel_metric_names(
        profile_id INTEGER NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
        id INTEGER NOT NULL,
        name TEXT NOT NULL,
        unit TEXT NOT NULL,
        PRIMARY KEY(profile_id, id)
    ) WITHOUT ROWID;
    CREATE TABLE kernel_metric_sets(
        profile_id INTEGER NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        kernel TEXT NOT NULL,
        source TEXT NOT NULL,
        metrics INTEGER NOT NULL,
        data BLOB NOT NULL
    );
    CREATE INDEX kernel_metric_sets_profile ON kernel_metric_sets(profile_id, seq);
    )sql",
    // 5 -> 6: results of the registered analyses (core/analysis/cache.h), one versioned scheme
    // for all. Those stored by earlier builds, each in a scheme of its own, are derived again
    // on their first request; a merged run's host summaries are its data and stay.
    R"sql(
    CREATE TABLE analyses(
        profile_id INTEGER NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        version INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        data BLOB NOT NULL,
        PRIMARY KEY(profile_id, name, seq)
    ) WITHOUT ROWID;
    DELETE FROM blobs WHERE stream IN ('trace.steps', 'trace.transfers');
    DELETE FROM blobs WHERE stream = 'trace.hosts' AND profile_id IN
        (SELECT id FROM profiles WHERE coalesce(json_extract(metadata, '$.run.merged'), 0) = 0);
    )sql",
};
static_assert(std::size(kMigrations) == kVersion);

// Schema 4 -> 5: moves the rows of the old one-row-per-metric kernel_metrics table into sets,
// profile by profile in row order, and drops it.
void convertKernelMetricRowsToSets(sqlite3* db) {
    {
        sql::Statement rows(db,
                            "SELECT profile_id, kernel, source, name, unit, value, text "
                            "FROM kernel_metrics ORDER BY profile_id, rowid");
        std::optional<MetricSetWriter> writer;
        int64_t profile = -1;
        while (rows.step()) {
            if (!writer || rows.int64(0) != profile) {
                if (writer) writer->finish();
                profile = rows.int64(0);
                writer.emplace(db, profile);
            }
            std::optional<double> value;
            if (!rows.isNull(5)) value = rows.real(5);
            std::optional<std::string> text;
            if (!rows.isNull(6)) text = rows.text(6);
            writer->add(rows.text(1), rows.text(2), rows.text(3), rows.text(4), value,
                        text ? std::optional<std::string_view>(*text) : std::nullopt);
        }
        if (writer) writer->finish();
    }
    sql::exec(db, "DROP TABLE kernel_metrics");
}

}  // namespace

void migrateFrom(sqlite3* db, int version) {
    sql::exec(db, kMigrations[version]);
    // What SQL alone cannot do: pack the one-row-per-metric table into sets.
    if (version == 4) convertKernelMetricRowsToSets(db);
}

}  // namespace stallscope::schema
