#pragma once

#include <QByteArray>
#include <QMainWindow>
#include <QStringList>
#include <optional>
#include <tuple>

#include "app/app_info.h"
#include "app/suggestion_flow.h"
#include "app/tab_registry.h"
#include "app/workspace_tasks.h"
#include "core/workspace.h"
#include "views/replay/replay_document.h"
#include "views/shell/status_line.h"
#include "views/shell/suggestions_dock.h"
#include "views/shell/workspace_dock.h"

class QAction;
class QDockWidget;
class QMenu;
class QMimeData;
class QStackedWidget;
class QTabWidget;
class QToolBar;
class QTreeWidget;

namespace stallscope {

class DetailsDock;
class WhatifBox;
class ImportRunner;
class ReplayProfileTab;

// The desktop window: workspace dock, tabs of opened views, details and suggestions docks and
// the import machinery. It wires them together; the work is done by TabRegistry (which tab shows
// what), SuggestionFlow (the suggestions dock), WorkspaceTasks (profile list and edits off the
// GUI thread) and ImportRunner.
class WorkspaceWatcher;

class MainWindow : public QMainWindow {
    Q_OBJECT
  public:
    using ViewFactory = TabRegistry::ViewFactory;

    static constexpr int kMaxRecentWorkspaces = appinfo::kMaxRecent;
    // The side docks never get narrower than this, so no view squeezes them to a sliver.
    static constexpr int kSideDockMinimumWidth = 200;

    explicit MainWindow(const QString& workspacePath, QWidget* parent = nullptr);
    ~MainWindow() override;

    QString workspacePath() const { return workspacePath_; }
    // Switches to another workspace file (created if missing). Refused while importing.
    bool openWorkspace(const QString& path);

    // Imports files off the GUI thread in one transaction; a drop uses the same path. While an
    // import runs, further requests queue behind it.
    // asOneRun: the files are the hosts (ranks) of one run: one profile.
    void importFiles(const QStringList& paths, bool asOneRun = false);
    bool isImporting() const;
    void cancelImport();
    ImportRunner* importRunner() const { return runner_; }

    // Loads the profile list on a worker; profilesReloaded() follows.
    void reloadProfiles() { workspaceTasks_->reload(); }
    // Workspace edits on a worker, then a reload. deleteProfile() does not ask; the Delete
    // action asks first (confirmDeleteProfiles()).
    void renameProfile(qint64 id, const QString& newName);
    void deleteProfile(qint64 id) { deleteProfiles({id}); }
    void deleteProfiles(const std::vector<qint64>& ids);
    bool confirmDeleteProfiles(const std::vector<ProfileInfo>& profiles) {
        return WorkspaceDock::confirmDelete(this, profiles);
    }

    // Opens (or focuses) the tab of a profile, built by the view of its kind or as a read-only
    // summary page. Returns the tab's widget.
    virtual QWidget* openProfile(const ProfileInfo& profile) {
        return tabRegistry_->openProfile(profile);
    }
    void registerView(const QString& kind, ViewFactory factory) {
        tabRegistry_->registerView(kind, std::move(factory));
    }
    void closeTab(int index) { tabRegistry_->closeTab(index); }

    void setSuggestions(const QList<SuggestionItem>& suggestions) {
        suggestionFlow_->setSuggestions(suggestions);
    }
    // Opens a before (a) / after (b) comparison tab; nullptr for kinds without one.
    QWidget* openComparison(const ProfileInfo& a, const ProfileInfo& b) {
        return tabRegistry_->openComparison(a, b);
    }
    // Compares a profile derived by applying suggestions with its parent.
    void compareWithParent(qint64 derivedId) { suggestionFlow_->compareWithParent(derivedId); }
    // The replay profile whose suggestions the dock lists, and its analysed document.
    const std::optional<ProfileInfo>& suggestionsProfile() const {
        return suggestionFlow_->profile();
    }
    const ReplayDocumentPtr& suggestionsDocument() const { return suggestionFlow_->document(); }
    // Suggestion `index` of the dock: open the profile's tab and show it on the timeline (zoom,
    // backtail, ghost), show its re-simulated timeline under the original, or save the edited
    // trace as a derived profile "<parent> (suggestion applied)" on a worker (suggestionApplied).
    ReplayProfileTab* showSuggestion(int index) { return suggestionFlow_->show(index); }
    ReplayProfileTab* previewSuggestion(int index) { return suggestionFlow_->preview(index); }
    void applySuggestion(int index) { suggestionFlow_->apply(index); }

    QTreeWidget* profileTree() const { return workspaceDock_->tree(); }
    WorkspaceDock* workspaceDock() const { return workspaceDock_; }
    DetailsDock* detailsDock() const { return detailsDock_; }
    SuggestionsDock* suggestionsDock() const { return suggestionsDock_; }
    QTabWidget* tabs() const { return tabs_; }
    QString statusText() const { return statusLine_->message(); }

    // Most recent first, at most kMaxRecentWorkspaces, kept in QSettings.
    static QStringList recentWorkspaces() { return appinfo::recentWorkspaces(); }
    static void addRecentWorkspace(const QString& path) { appinfo::addRecentWorkspace(path); }
    static void clearRecentWorkspaces() { appinfo::clearRecentWorkspaces(); }
    // The About box text: versions of Stallscope and the libraries it runs on.
    static QString aboutText() { return appinfo::aboutText(); }

  signals:
    void profilesReloaded();
    void importFinished(bool ok, const QString& message);
    void suggestionsLoaded();
    void suggestionApplied(bool ok, qint64 profileId, const QString& message);

  protected:
    void closeEvent(QCloseEvent* event) override;
    void changeEvent(QEvent* event) override;
    bool event(QEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dragMoveEvent(QDragMoveEvent* event) override;
    void dropEvent(QDropEvent* event) override;

  private:
    void adoptTraceView(QWidget* view);
    void adoptWhatif(WhatifBox* box);
    void pinQueryTrack(qint64 profileId, const QString& title,
                       const std::vector<std::tuple<qint64, qint64, QString>>& rows);
    // The workspace's Query tab (views/query/query_view.h), opened or focused.
    QWidget* openQuery();
    void createActions();
    void createMenus();
    void createDocks();
    void connectDocks();
    void createStatusBar();
    QDockWidget* addDock(const QString& title, const QString& name, QWidget* content,
                         Qt::DockWidgetArea area);
    void restoreSettings();
    void saveSettings() const;
    void updateWindowTitle();
    void updateActions();
    void onImportStarted(const QStringList& files);
    void onImportProgress(double fraction, const QString& stage);
    void onImportFinished(bool ok, const QString& message, const QList<qint64>& profileIds);
    void onProfilesLoaded(const ProfileList& list);
    void onEdited(const QString& message, bool failed);
    void setStatus(const QString& text, bool error = false) {
        statusLine_->setMessage(text, error);
    }
    void showImportDialog();
    void showOpenWorkspaceDialog();
    void rebuildRecentMenu();
    void toggleFullScreen(bool on);
    void resetLayout();
    static QStringList localFiles(const QMimeData* mime);

    QString workspacePath_;
    WorkspaceWatcher* watcher_ = nullptr;
    bool workspaceWritable_ = true;
    std::optional<qint64> selectAfterReload_;
    QByteArray defaultState_;

    ImportRunner* runner_;
    WorkspaceTasks* workspaceTasks_ = nullptr;
    TabRegistry* tabRegistry_ = nullptr;
    SuggestionFlow* suggestionFlow_ = nullptr;
    WorkspaceDock* workspaceDock_ = nullptr;
    DetailsDock* detailsDock_ = nullptr;
    SuggestionsDock* suggestionsDock_ = nullptr;
    QDockWidget* workspaceDockWidget_ = nullptr;
    QDockWidget* detailsDockWidget_ = nullptr;
    QDockWidget* suggestionsDockWidget_ = nullptr;
    QStackedWidget* central_ = nullptr;
    QWidget* welcome_ = nullptr;
    QTabWidget* tabs_ = nullptr;
    QToolBar* toolBar_ = nullptr;
    StatusLine* statusLine_ = nullptr;
    QMenu* recentMenu_ = nullptr;

    QAction* importAction_ = nullptr;
    QAction* importFolderAction_ = nullptr;
    QAction* openWorkspaceAction_ = nullptr;
    QAction* closeTabAction_ = nullptr;
    QAction* quitAction_ = nullptr;
    QAction* fullScreenAction_ = nullptr;
    QAction* resetLayoutAction_ = nullptr;
    QAction* aboutAction_ = nullptr;
    QAction* queryAction_ = nullptr;
    QAction* reloadAction_ = nullptr;
    QAction* shortcutsAction_ = nullptr;
};

}  // namespace stallscope
