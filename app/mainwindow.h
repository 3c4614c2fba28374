#pragma once

#include <QByteArray>
#include <QHash>
#include <QMainWindow>
#include <QStringList>
#include <QThreadPool>
#include <functional>
#include <optional>
#include <vector>

#include "core/workspace.h"
#include "views/replay/replay_document.h"
#include "views/shell/suggestions_dock.h"

class QAction;
class QDockWidget;
class QLabel;
class QMenu;
class QMimeData;
class QProgressBar;
class QStackedWidget;
class QTabWidget;
class QToolBar;
class QToolButton;
class QTreeWidget;

namespace stallscope {

class DetailsDock;
class ImportRunner;
class ReplayProfileTab;
class WorkspaceDock;

// The desktop window: workspace dock, tabs of opened views, details and suggestions docks and
// the import machinery. Wiring only; SQL runs on worker threads, never on the GUI thread.
class MainWindow : public QMainWindow {
    Q_OBJECT
  public:
    // Builds the widget shown in a tab for a profile of one kind.
    using ViewFactory =
        std::function<QWidget*(const ProfileInfo& profile, const QString& workspacePath)>;

    static constexpr int kMaxRecentWorkspaces = 8;

    explicit MainWindow(const QString& workspacePath, QWidget* parent = nullptr);
    ~MainWindow() override;

    QString workspacePath() const { return workspacePath_; }
    // Switches to another workspace file (created if missing). Refused while importing.
    bool openWorkspace(const QString& path);

    // Imports files off the GUI thread in one transaction; a drop uses the same path. While an
    // import runs, further requests queue behind it.
    void importFiles(const QStringList& paths);
    bool isImporting() const;
    void cancelImport();
    ImportRunner* importRunner() const { return runner_; }

    // Loads the profile list on a worker; profilesReloaded() follows.
    void reloadProfiles();
    // Workspace edits on a worker, then a reload. deleteProfile() does not ask; the Delete
    // action asks first (confirmDeleteProfile()).
    void renameProfile(qint64 id, const QString& newName);
    void deleteProfile(qint64 id);
    bool confirmDeleteProfile(const ProfileInfo& profile);

    // Opens (or focuses) the tab of a profile, built by the factory registered for its kind or
    // as a read-only summary page. Returns the tab's widget.
    virtual QWidget* openProfile(const ProfileInfo& profile);
    void registerView(const QString& kind, ViewFactory factory);
    void closeTab(int index);

    void setSuggestions(const QList<SuggestionItem>& suggestions);
    // Opens a before (a) / after (b) comparison tab; nullptr for kinds without one.
    QWidget* openComparison(const ProfileInfo& a, const ProfileInfo& b);
    // Compares a profile derived by applying suggestions with its parent.
    void compareWithParent(qint64 derivedId);
    // The replay profile whose suggestions the dock lists, and its analysed document.
    const std::optional<ProfileInfo>& suggestionsProfile() const { return suggestionsProfile_; }
    const ReplayDocumentPtr& suggestionsDocument() const { return suggestionsDocument_; }
    // Suggestion `index` of the dock: open the profile's tab and show it on the timeline (zoom,
    // backtail, ghost), show its re-simulated timeline under the original, or save the edited
    // trace as a derived profile "<parent> (suggestion applied)" on a worker (suggestionApplied).
    ReplayProfileTab* showSuggestion(int index);
    ReplayProfileTab* previewSuggestion(int index);
    void applySuggestion(int index);

    QTreeWidget* profileTree() const;
    WorkspaceDock* workspaceDock() const { return workspaceDock_; }
    DetailsDock* detailsDock() const { return detailsDock_; }
    SuggestionsDock* suggestionsDock() const { return suggestionsDock_; }
    QTabWidget* tabs() const { return tabs_; }
    QString statusText() const;

    // Most recent first, at most kMaxRecentWorkspaces, kept in QSettings.
    static QStringList recentWorkspaces();
    static void addRecentWorkspace(const QString& path);
    static void clearRecentWorkspaces();
    // The About box text: versions of Stallscope and the libraries it runs on.
    static QString aboutText();

  signals:
    void profilesReloaded();
    void importFinished(bool ok, const QString& message);
    void suggestionsLoaded();
    void suggestionApplied(bool ok, qint64 profileId, const QString& message);

  protected:
    void closeEvent(QCloseEvent* event) override;
    void changeEvent(QEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dragMoveEvent(QDragMoveEvent* event) override;
    void dropEvent(QDropEvent* event) override;

  private:
    struct ProfileList {
        quint64 generation = 0;
        std::vector<ProfileInfo> profiles;
        QString error;
        bool writable = true;
    };

    void createActions();
    void createMenus();
    void createDocks();
    void createStatusBar();
    void createWelcomePage();
    void restoreSettings();
    void saveSettings() const;
    void updateWindowTitle();
    void updateActions();
    void startNextImport();
    void onImportProgress(double fraction, const QString& stage);
    void onImportFinished(bool ok, const QString& message, const QList<qint64>& profileIds);
    void onProfilesLoaded(const ProfileList& list);
    void runWorkspaceEdit(const QString& description, std::function<void(Workspace&)> edit);
    void setStatus(const QString& text, bool error = false);
    // Analyses the selected replay profile on a worker and fills the suggestions dock.
    void loadSuggestionsFor(const std::optional<ProfileInfo>& profile);
    void showImportDialog();
    void showOpenWorkspaceDialog();
    void rebuildRecentMenu();
    void showAbout();
    void toggleFullScreen(bool on);
    void resetLayout();
    void closeTabsOfMissingProfiles();
    int tabIndexOfProfile(qint64 id) const;
    static QStringList localFiles(const QMimeData* mime);

    QString workspacePath_;
    bool workspaceWritable_ = true;
    quint64 listGeneration_ = 0;
    quint64 suggestionsGeneration_ = 0;
    std::optional<ProfileInfo> suggestionsProfile_;
    ReplayDocumentPtr suggestionsDocument_;
    std::optional<qint64> selectAfterReload_;
    QList<QStringList> pendingImports_;
    QStringList currentImport_;
    QHash<QString, ViewFactory> viewFactories_;
    QByteArray defaultState_;

    ImportRunner* runner_;
    // Short workspace reads (profile lists, renames, a comparison's profiles) on threads of their
    // own, so they never wait behind analyses running on the global pool.
    QThreadPool quickReads_;
    // Suggestions the CPI and absorption views derived, by profile, so the dock shows them again
    // when their profile becomes current.
    QHash<qint64, QList<SuggestionItem>> viewSuggestions_;
    std::optional<qint64> dockProfileId_;  // the profile the suggestions dock is showing
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
    QLabel* statusLabel_ = nullptr;
    QLabel* countLabel_ = nullptr;
    QProgressBar* importProgress_ = nullptr;
    QToolButton* cancelButton_ = nullptr;
    QMenu* recentMenu_ = nullptr;

    QAction* importAction_ = nullptr;
    QAction* openWorkspaceAction_ = nullptr;
    QAction* closeTabAction_ = nullptr;
    QAction* quitAction_ = nullptr;
    QAction* fullScreenAction_ = nullptr;
    QAction* resetLayoutAction_ = nullptr;
    QAction* aboutAction_ = nullptr;
};

}  // namespace stallscope
