// `query [--json|--csv] SQL`: one read-only SQL statement over the workspace's tables
// (core/query/tables.h, docs/sql.md), rows streamed to stdout as they come.

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "app/commands.h"
#include "app/terminal.h"
#include "core/errors.h"
#include "core/json_escape.h"
#include "core/query/tables.h"

namespace stallscope {

namespace {

std::string plain(const query::Value& v) {
    switch (v.type) {
        case query::Value::Type::Integer:
            return std::to_string(v.integer);
        case query::Value::Type::Real: {
            char buf[40];
            std::snprintf(buf, sizeof buf, "%.17g", v.real);
            return buf;
        }
        case query::Value::Type::Text:
            return v.text;
        default:
            return {};
    }
}

std::string jsonValue(const query::Value& v) {
    if (v.type == query::Value::Type::Null ||
        (v.type == query::Value::Type::Real && !std::isfinite(v.real)))
        return "null";
    if (v.type != query::Value::Type::Text) return plain(v);
    std::string out;
    json::appendString(out, v.text);
    return out;
}

std::string csvField(const std::string& text) {
    if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
    std::string out = "\"";
    for (const char c : text) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + '"';
}

enum class Format { Text, Json, Csv };

}  // namespace

// The extension's path: installed beside this binary (PREFIX/bin/stallscope ->
// PREFIX/<libdir>/stallscope/libstallscope.so), else the build's own.
std::string extensionPath() {
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe");
    const std::filesystem::path installed =
        self.parent_path().parent_path() / STALLSCOPE_EXTENSION_INSTALLED;
    if (std::filesystem::exists(installed)) return installed.string();
    if (std::filesystem::exists(STALLSCOPE_EXTENSION_BUILT)) return STALLSCOPE_EXTENSION_BUILT;
    throw Failure("the SQLite extension is not installed (expected " + installed.string() + ")");
}

int runQuery(const cli::Options& o) {
    if (o.has("--extension")) {
        if (!o.positional.empty()) throw InputError("query --extension takes no SQL");
        std::cout << extensionPath() << '\n';
        return 0;
    }
    const std::string& sql = o.only("SQL");
    if (o.has("--json") && o.has("--csv"))
        throw InputError("query: give --json or --csv, not both");
    const Format format = o.has("--json")  ? Format::Json
                          : o.has("--csv") ? Format::Csv
                                           : Format::Text;
    if (!std::filesystem::exists(o.store)) throw InputError(o.store + ": no such workspace");
    auto ws = Workspace::open(o.store, Workspace::Mode::ReadOnly);
    Progress progress(terminalProgressBar());
    const CancelOnInterrupt interrupt(progress);
    std::string out;
    bool firstRow = true;
    const auto flush = [&](bool always) {
        if (!always && out.size() < (1 << 16)) return;
        clearTerminalProgressBar();
        std::cout << out;
        out.clear();
    };
    query::run(
        *ws, sql,
        [&](const std::vector<std::string>& columns) {
            if (format == Format::Json) {
                out += "{\"columns\":[";
                for (size_t c = 0; c < columns.size(); ++c) {
                    if (c) out += ',';
                    json::appendString(out, columns[c]);
                }
                out += "],\"rows\":[";
                return;
            }
            for (size_t c = 0; c < columns.size(); ++c) {
                if (c) out += format == Format::Csv ? ',' : '\t';
                out += format == Format::Csv ? csvField(columns[c]) : columns[c];
            }
            out += '\n';
        },
        [&](const std::vector<query::Value>& row) {
            if (format == Format::Json) {
                out += firstRow ? "\n[" : ",\n[";
                for (size_t c = 0; c < row.size(); ++c) {
                    if (c) out += ',';
                    out += jsonValue(row[c]);
                }
                out += ']';
            } else {
                for (size_t c = 0; c < row.size(); ++c) {
                    if (c) out += format == Format::Csv ? ',' : '\t';
                    out += format == Format::Csv ? csvField(plain(row[c])) : plain(row[c]);
                }
                out += '\n';
            }
            firstRow = false;
            flush(false);
        },
        &progress);
    if (format == Format::Json) out += "\n]}\n";
    flush(true);
    return 0;
}

}  // namespace stallscope
