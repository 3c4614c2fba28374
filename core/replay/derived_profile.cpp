#include "core/replay/derived_profile.h"

#include <QJsonDocument>
#include <QJsonObject>

#include "core/errors.h"
#include "core/kinds.h"
#include "core/profile_source.h"
#include "core/replay/codec.h"
#include "core/replay/whatif.h"
#include "core/sqlite.h"

namespace stallscope::replay {

ProfileInfo writeDerivedProfile(Workspace& workspace, const ProfileInfo& parent,
                                const InstructionStream& trace, const Suggestion& suggestion) {
    if (workspace.readOnly())
        throw InputError(workspace.path() + ": workspace is read-only; cannot store the edit");
    const EditedTrace edited = applyPlan(trace, suggestion.plan);
    sql::Transaction transaction(workspace.db());
    ProfileInfo info;
    info.name = workspace.uniqueName(parent.name + " (suggestion applied)");
    info.kind = std::string(kinds::kReplay);
    info.sourcePath = parent.sourcePath;
    info.parentId = parent.id;
    QJsonObject meta;
    meta.insert("machine", QString::fromStdString(edited.trace.machine.name));
    meta.insert("instructions", static_cast<qint64>(edited.trace.instrs.size()));
    meta.insert("dmas", static_cast<qint64>(edited.trace.dmas.size()));
    meta.insert("hlo_ops", static_cast<qint64>(edited.trace.hlos.size()));
    meta.insert("measured", false);
    meta.insert("format", "derived");
    meta.insert("applied", QString::fromStdString(suggestion.text));
    meta.insert("predicted_saving", static_cast<qint64>(suggestion.savingCycles));
    info.metadataJson = QJsonDocument(meta).toJson(QJsonDocument::Compact).toStdString();
    info.id = workspace.insertProfile(info);
    storeInstructionStream(workspace, info.id, edited.trace);
    // There is no file behind a derived profile: its size is what the workspace stores of it.
    recordProfileSource(workspace, info.id, info.sourcePath,
                        storedInstructionStreamBytes(workspace, info.id));
    transaction.commit();
    return *workspace.profile(info.id);
}

}  // namespace stallscope::replay
