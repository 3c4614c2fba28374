// `compare A B --json`: before/after deltas of two profiles of the same kind (CONTRACT §5).
#include <QJsonDocument>
#include <iostream>

#include "app/commands.h"
#include "core/errors.h"
#include "core/kinds.h"
#include "core/workspace.h"

namespace stallscope {

int runCompare(const cli::Options& o) {
    const std::vector<std::string>& names = o.positional;
    const bool json = o.has("--json");
    CompareOptions options;  // --op (traces), --align-op (replays): see core/kinds.h
    options.cdfOp = o.value("--op");
    options.alignOp = o.value("--align-op");
    if (names.size() != 2) throw InputError("compare: give two profiles, A (before) and B (after)");
    auto workspace = Workspace::openExisting(o.store);
    const ProfileInfo a = workspace->resolveProfile(names[0]);
    const ProfileInfo b = workspace->resolveProfile(names[1]);
    const QJsonObject result = compareProfiles(*workspace, a, b, options);
    if (json)
        std::cout << QJsonDocument(result).toJson(QJsonDocument::Indented).toStdString();
    else
        std::cout << result.value("summary").toString().toStdString() << '\n';
    return 0;
}

}  // namespace stallscope
