#pragma once

#include <QHash>
#include <QList>
#include <QObject>
#include <QSet>
#include <QString>
#include <optional>

#include "core/workspace.h"
#include "views/common/async_job.h"
#include "views/replay/replay_document.h"
#include "views/shell/suggestions_dock.h"

class QWidget;

namespace stallscope {

class ReplayProfileTab;
class TabRegistry;

// The suggestions dock's states, select → show → preview → apply → compare:
//  - select: the current profile changed. A replay profile is analysed on a worker (shared with
//    its tab through ReplayDocumentCache) and its suggestions listed; for other kinds the dock
//    lists what their open view derived (kept per profile until the profile is gone).
//  - show / preview: open the profile's tab and show the suggestion on its timeline, or stack
//    its re-simulated timeline under the original.
//  - apply: store the edited trace as a derived profile on a worker (profileCreated).
//  - compare: open a derived profile against its parent.
class SuggestionFlow : public QObject {
    Q_OBJECT
  public:
    SuggestionFlow(SuggestionsDock* dock, TabRegistry* tabs, const QString& workspacePath,
                   QObject* parent = nullptr);

    // Another workspace: forgets everything (profile ids belong to one workspace).
    void setWorkspacePath(const QString& path);
    void setWritable(bool writable) { writable_ = writable; }

    void select(const std::optional<ProfileInfo>& profile);
    ReplayProfileTab* show(int index);
    ReplayProfileTab* preview(int index);
    void apply(int index);
    void compareWithParent(qint64 derivedId);
    // Lists `suggestions` as they are (nothing is analysed).
    void setSuggestions(const QList<SuggestionItem>& suggestions);

    // A view of `profile` was created: share the analysed document with a replay tab, and keep
    // the suggestions a CPI or absorption view derives.
    void adoptView(QWidget* view, const ProfileInfo& profile);
    // Forgets what views derived for profiles no longer in the workspace (SQLite reuses the id
    // of a deleted newest profile).
    void keepOnly(const QSet<qint64>& presentIds);

    // The replay profile whose suggestions the dock lists, and its analysed document.
    const std::optional<ProfileInfo>& profile() const { return replayProfile_; }
    const ReplayDocumentPtr& document() const { return document_; }

  signals:
    void suggestionsLoaded();
    void applied(bool ok, qint64 profileId, const QString& message);
    void status(const QString& text, bool error);

  private:
    void showDocument(ReplayDocumentPtr document, const QString& error);
    QString emptyMessageFor(const std::optional<ProfileInfo>& profile) const;
    // Preview (or apply) in the view of a kind other than replay; false for a replay profile.
    bool previewInView(int index, bool apply);

    SuggestionsDock* dock_;
    TabRegistry* tabs_;
    QString workspacePath_;
    bool writable_ = true;
    std::optional<ProfileInfo> dockProfile_;    // the profile the dock is showing
    std::optional<ProfileInfo> replayProfile_;  // ... when it is a replay profile
    ReplayDocumentPtr document_;
    QHash<qint64, QList<SuggestionItem>> viewSuggestions_;
    QSet<qint64> adopted_;  // profiles whose view was created (its suggestions may be pending)
    async::JobSlot applyJob_;
    async::JobSlot documentJob_;
    async::JobSlot parentJob_;
};

}  // namespace stallscope
