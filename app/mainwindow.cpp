#include "app/mainwindow.h"

#include <QAction>
#include <QCloseEvent>
#include <QDockWidget>
#include <QFileInfo>
#include <QGuiApplication>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPushButton>
#include <QScreen>
#include <QSet>
#include <QSettings>
#include <QStackedWidget>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QToolBar>

#include <algorithm>

#include "app/import_runner.h"
#include "app/workspace_watcher.h"
#include "importers/import_service.h"
#include "views/common/async_job.h"
#include "views/common/file_dialogs.h"
#include "views/query/query_view.h"
#include "views/shell/details_dock.h"
#include "views/shell/shortcut_sheet.h"
#include "views/shell/status_line.h"
#include "views/shell/welcome_page.h"
#include "views/shell/workspace_dock.h"
#include "views/trace/critical_path_trace_panel.h"
#include "views/trace/hosts_trace_panel.h"
#include "views/trace/query_tracks.h"
#include "views/trace/trace_view.h"
#include "views/trace/whatif_box.h"

// Resources of a static library are only linked in when something references them.
static void initStallscopeResources() {
    Q_INIT_RESOURCE(resources);
}

namespace stallscope {
namespace {

constexpr int kStateVersion = 2;  // 2: suggestions moved under the details
constexpr char kGeometryKey[] = "MainWindow/geometry";
constexpr char kStateKey[] = "MainWindow/state";
// Dock sizes of a new window and after Reset Layout.
constexpr int kWorkspaceDockWidth = 240;
constexpr int kDetailsDockWidth = 300;
constexpr int kSuggestionsDockHeight = 300;

QString fileNames(const QStringList& paths) {
    QStringList names;
    for (const QString& path : paths) names << QFileInfo(path).fileName();
    return names.join(QStringLiteral(", "));
}

}  // namespace

MainWindow::MainWindow(const QString& workspacePath, QWidget* parent)
    : QMainWindow(parent),
      workspacePath_(QFileInfo(workspacePath).absoluteFilePath()),
      runner_(new ImportRunner(this)) {
    initStallscopeResources();
    setWindowIcon(appinfo::applicationIcon());
    setAcceptDrops(true);
    setDockNestingEnabled(true);

    tabs_ = new QTabWidget(this);
    tabs_->setTabsClosable(true);
    tabs_->setMovable(true);
    tabs_->setDocumentMode(true);
    // Titles whole, scrolling when they do not fit (shrunk to "t…" they named nothing).
    tabs_->setUsesScrollButtons(true);
    tabs_->setElideMode(Qt::ElideNone);
    workspaceTasks_ = new WorkspaceTasks(workspacePath_, this);
    tabRegistry_ = new TabRegistry(tabs_, workspacePath_, this);

    createActions();
    createMenus();
    createDocks();
    createStatusBar();
    suggestionFlow_ = new SuggestionFlow(suggestionsDock_, tabRegistry_, workspacePath_, this);
    connectDocks();

    central_ = new QStackedWidget(this);
    welcome_ = new WelcomePage(windowIcon(), importAction_, importFolderAction_, central_);
    central_->addWidget(welcome_);
    central_->addWidget(tabs_);
    setCentralWidget(central_);

    resize(1280, 800);
    resizeDocks({workspaceDockWidget_, detailsDockWidget_},
                {kWorkspaceDockWidth, kDetailsDockWidth}, Qt::Horizontal);
    resizeDocks({suggestionsDockWidget_}, {kSuggestionsDockHeight}, Qt::Vertical);
    defaultState_ = saveState(kStateVersion);
    restoreSettings();

    // A command-line import into this workspace shows up without a reload by hand; the
    // window's own imports reload when they end.
    watcher_ = new WorkspaceWatcher(this);
    connect(watcher_, &WorkspaceWatcher::changed, this, [this] {
        if (!isImporting()) reloadProfiles();
    });
    watcher_->watch(workspacePath_);

    addRecentWorkspace(workspacePath_);
    rebuildRecentMenu();
    updateWindowTitle();
    updateActions();
    reloadProfiles();
}

MainWindow::~MainWindow() {
    // Children are destroyed after this body; their last signals must not reach the
    // half-destroyed window.
    for (QObject* sender : std::initializer_list<QObject*>{
             tabs_, workspaceDock_, runner_, tabRegistry_, suggestionFlow_, workspaceTasks_})
        sender->disconnect(this);
    // A running import is cancelled; its worker rolls it back (the application waits for the
    // thread pool before it exits).
    runner_->cancel();
}

void MainWindow::createActions() {
    importAction_ =
        new QAction(QIcon::fromTheme(QStringLiteral("document-import"),
                                     style()->standardIcon(QStyle::SP_DialogOpenButton)),
                    tr("&Import…"), this);
    importAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_O));
    importAction_->setStatusTip(tr("Import traces and results into the workspace"));
    importAction_->setToolTip(tr("Import files (Ctrl+O)"));
    connect(importAction_, &QAction::triggered, this, &MainWindow::showImportDialog);

    importFolderAction_ = new QAction(tr("Import &Folder…"), this);
    importFolderAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_I));
    importFolderAction_->setStatusTip(
        tr("Import a folder: the rank files of a multi-host run become one profile with a host "
           "each (a Sniper output folder: its result)"));
    connect(importFolderAction_, &QAction::triggered, this, [this] {
        const QString folder = dialogs::askFolder(this, tr("Import Folder"), QString());
        if (!folder.isEmpty()) importFiles({folder});
    });

    openWorkspaceAction_ = new QAction(tr("Open &Workspace…"), this);
    openWorkspaceAction_->setStatusTip(tr("Open or create another workspace file"));
    connect(openWorkspaceAction_, &QAction::triggered, this, &MainWindow::showOpenWorkspaceDialog);

    closeTabAction_ = new QAction(tr("&Close Tab"), this);
    closeTabAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_W));
    connect(closeTabAction_, &QAction::triggered, this, [this] {
        if (tabs_->currentIndex() >= 0) closeTab(tabs_->currentIndex());
    });

    quitAction_ =
        new QAction(QIcon::fromTheme(QStringLiteral("application-exit")), tr("&Quit"), this);
    quitAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Q));
    quitAction_->setMenuRole(QAction::QuitRole);
    connect(quitAction_, &QAction::triggered, this, &QWidget::close);

    reloadAction_ = new QAction(tr("Re&load Workspace"), this);
    reloadAction_->setShortcut(QKeySequence::Refresh);
    reloadAction_->setStatusTip(
        tr("Read the profile list again (the window also follows changes other programs make)"));
    connect(reloadAction_, &QAction::triggered, this, &MainWindow::reloadProfiles);

    fullScreenAction_ = new QAction(tr("&Full Screen"), this);
    fullScreenAction_->setShortcut(QKeySequence(Qt::Key_F11));
    fullScreenAction_->setCheckable(true);
    connect(fullScreenAction_, &QAction::toggled, this, &MainWindow::toggleFullScreen);

    resetLayoutAction_ = new QAction(tr("&Reset Layout"), this);
    resetLayoutAction_->setStatusTip(tr("Put the docks and the toolbar back where they started"));
    connect(resetLayoutAction_, &QAction::triggered, this, &MainWindow::resetLayout);

    queryAction_ = new QAction(tr("&Query (SQL)"), this);
    queryAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E));
    queryAction_->setStatusTip(
        tr("Ask the workspace in SQL: slices, steps, flows, critical "
           "paths of every profile (read-only)"));
    connect(queryAction_, &QAction::triggered, this, [this] { openQuery(); });

    shortcutsAction_ = new QAction(tr("&Keyboard and Mouse"), this);
    shortcutsAction_->setShortcut(QKeySequence(QStringLiteral("?")));
    connect(shortcutsAction_, &QAction::triggered, this, [this] {
        auto* sheet = new ShortcutSheet(this);
        sheet->setAttribute(Qt::WA_DeleteOnClose);
        sheet->open();
    });

    aboutAction_ = new QAction(tr("&About Stallscope"), this);
    aboutAction_->setMenuRole(QAction::AboutRole);
    connect(aboutAction_, &QAction::triggered, this,
            [this] { QMessageBox::about(this, tr("About Stallscope"), aboutText()); });

    // Status tips become tooltips (the status line keeps its message; see event()).
    for (QAction* action : findChildren<QAction*>())
        if (!action->statusTip().isEmpty()) action->setToolTip(action->statusTip());
    // Window-wide shortcuts keep working while a dock has focus.
    for (QAction* action : {importAction_, importFolderAction_, closeTabAction_, quitAction_,
                            fullScreenAction_, queryAction_, reloadAction_, shortcutsAction_})
        addAction(action);
}

void MainWindow::createMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(importAction_);
    file->addAction(importFolderAction_);
    file->addSeparator();
    file->addAction(openWorkspaceAction_);
    recentMenu_ = file->addMenu(tr("&Recent Workspaces"));
    connect(recentMenu_, &QMenu::aboutToShow, this, &MainWindow::rebuildRecentMenu);
    file->addAction(reloadAction_);
    file->addSeparator();
    file->addAction(closeTabAction_);
    file->addSeparator();
    file->addAction(quitAction_);

    toolBar_ = new QToolBar(tr("Main Toolbar"), this);
    toolBar_->setObjectName(QStringLiteral("mainToolBar"));
    toolBar_->setMovable(false);
    toolBar_->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    toolBar_->setIconSize(QSize(20, 20));
    toolBar_->addAction(importAction_);
    addToolBar(Qt::TopToolBarArea, toolBar_);
}

QDockWidget* MainWindow::addDock(const QString& title, const QString& name, QWidget* content,
                                 Qt::DockWidgetArea area) {
    auto* dock = new QDockWidget(title, this);
    dock->setObjectName(name);
    dock->setWidget(content);
    addDockWidget(area, dock);
    return dock;
}

void MainWindow::createDocks() {
    workspaceDock_ = new WorkspaceDock(this);
    workspaceDock_->setMinimumWidth(kSideDockMinimumWidth);
    workspaceDockWidget_ = addDock(tr("Workspace"), QStringLiteral("workspaceDock"), workspaceDock_,
                                   Qt::LeftDockWidgetArea);
    detailsDock_ = new DetailsDock(this);
    detailsDock_->setMinimumWidth(kSideDockMinimumWidth);
    detailsDockWidget_ = addDock(tr("Details"), QStringLiteral("detailsDock"), detailsDock_,
                                 Qt::RightDockWidgetArea);
    suggestionsDock_ = new SuggestionsDock(this);
    // Suggestions under the details, on the right: the tabs keep the window's whole height
    // (under the tabs they left a trace's timeline about 200 px tall at 1280x800).
    suggestionsDockWidget_ = addDock(tr("Suggestions"), QStringLiteral("suggestionsDock"),
                                     suggestionsDock_, Qt::RightDockWidgetArea);
    splitDockWidget(detailsDockWidget_, suggestionsDockWidget_, Qt::Vertical);
    // The side docks run full height.
    setCorner(Qt::BottomLeftCorner, Qt::LeftDockWidgetArea);
    setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    for (QDockWidget* dock : {workspaceDockWidget_, detailsDockWidget_, suggestionsDockWidget_})
        view->addAction(dock->toggleViewAction());
    view->addAction(toolBar_->toggleViewAction());
    view->addSeparator();
    view->addAction(queryAction_);
    view->addSeparator();
    view->addAction(fullScreenAction_);
    view->addAction(resetLayoutAction_);
    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(shortcutsAction_);
    help->addAction(aboutAction_);
}

void MainWindow::connectDocks() {
    connect(workspaceDock_, &WorkspaceDock::profileActivated, this,
            [this](const ProfileInfo& profile) { openProfile(profile); });
    connect(workspaceDock_, &WorkspaceDock::currentProfileChanged, detailsDock_,
            &DetailsDock::setProfile);
    connect(workspaceDock_, &WorkspaceDock::currentProfileChanged, suggestionFlow_,
            &SuggestionFlow::select);
    connect(workspaceDock_, &WorkspaceDock::renameRequested, this, &MainWindow::renameProfile);
    connect(workspaceDock_, &WorkspaceDock::deleteRequested, this,
            [this](const std::vector<ProfileInfo>& profiles) {
                if (!confirmDeleteProfiles(profiles)) return;
                std::vector<qint64> ids;
                for (const ProfileInfo& p : profiles) ids.push_back(p.id);
                deleteProfiles(ids);
            });
    connect(workspaceDock_, &WorkspaceDock::importRequested, importAction_, &QAction::trigger);
    connect(workspaceDock_, &WorkspaceDock::compareRequested, this, &MainWindow::openComparison);

    // The workspace tree follows the tab, and with it the details and suggestions docks.
    connect(tabs_, &QTabWidget::tabCloseRequested, this, &MainWindow::closeTab);
    connect(tabs_, &QTabWidget::currentChanged, this, [this](int index) {
        updateActions();
        if (const std::optional<qint64> id = tabRegistry_->profileIdAt(index))
            workspaceDock_->selectProfile(*id);
    });
    connect(tabRegistry_, &TabRegistry::countChanged, this, &MainWindow::updateActions);
    connect(tabRegistry_, &TabRegistry::failed, this,
            [this](const QString& message) { setStatus(message, true); });
    connect(tabRegistry_, &TabRegistry::viewCreated, suggestionFlow_, &SuggestionFlow::adoptView);
    connect(tabRegistry_, &TabRegistry::viewCreated, this, &MainWindow::adoptTraceView);

    connect(suggestionFlow_, &SuggestionFlow::status, this, &MainWindow::setStatus);
    connect(suggestionFlow_, &SuggestionFlow::suggestionsLoaded, this,
            &MainWindow::suggestionsLoaded);
    connect(suggestionFlow_, &SuggestionFlow::applied, this,
            [this](bool ok, qint64 id, const QString& message) {
                if (ok) {
                    selectAfterReload_ = id;
                    reloadProfiles();
                }
                emit suggestionApplied(ok, id, message);
            });

    connect(workspaceTasks_, &WorkspaceTasks::listLoaded, this, &MainWindow::onProfilesLoaded);
    connect(workspaceTasks_, &WorkspaceTasks::edited, this, &MainWindow::onEdited);
    connect(runner_, &ImportRunner::started, this, &MainWindow::onImportStarted);
    connect(runner_, &ImportRunner::progressChanged, this, &MainWindow::onImportProgress);
    connect(runner_, &ImportRunner::finished, this, &MainWindow::onImportFinished);
    // Background work of any view that failed without a place of its own to say so.
    connect(&async::JobErrors::instance(), &async::JobErrors::failed, this,
            [this](const QString& message) { setStatus(message, true); });
}

void MainWindow::createStatusBar() {
    statusLine_ = new StatusLine(this);
    statusBar()->addWidget(statusLine_, 1);
    connect(statusLine_, &StatusLine::cancelRequested, this, &MainWindow::cancelImport);
    setStatus(tr("Loading workspace…"));
}

void MainWindow::restoreSettings() {
    QSettings settings;
    const QByteArray geometry = settings.value(kGeometryKey).toByteArray();
    if (geometry.isEmpty() || !restoreGeometry(geometry)) {
        // First run: most of the screen (a 1920x1080 screen opened a 1280x800 window), never
        // more than it has.
        if (const QScreen* screen = QGuiApplication::primaryScreen()) {
            const QRect available = screen->availableGeometry();
            const QSize wanted = available.size() * 0.92;
            resize(wanted.expandedTo(QSize(1280, 800)).boundedTo(available.size()));
            move(available.center() - rect().center());
        }
    }
    const QByteArray state = settings.value(kStateKey).toByteArray();
    if (!state.isEmpty()) restoreState(state, kStateVersion);
}

void MainWindow::saveSettings() const {
    QSettings settings;
    settings.setValue(kGeometryKey, saveGeometry());
    settings.setValue(kStateKey, saveState(kStateVersion));
}

void MainWindow::rebuildRecentMenu() {
    appinfo::fillRecentMenu(recentMenu_, workspacePath_,
                            [this](const QString& path) { openWorkspace(path); });
}

bool MainWindow::openWorkspace(const QString& path) {
    if (isImporting()) {
        setStatus(tr("Cancel or finish the import before switching workspaces."), true);
        return false;
    }
    tabRegistry_->closeAll();
    workspacePath_ = QFileInfo(path).absoluteFilePath();
    workspaceTasks_->setPath(workspacePath_);
    watcher_->watch(workspacePath_);
    tabRegistry_->setWorkspacePath(workspacePath_);
    suggestionFlow_->setWorkspacePath(workspacePath_);
    addRecentWorkspace(workspacePath_);
    rebuildRecentMenu();
    updateWindowTitle();
    workspaceDock_->setProfiles({});
    detailsDock_->setProfile(std::nullopt);
    setStatus(tr("Loading workspace…"));
    reloadProfiles();
    return true;
}

void MainWindow::updateWindowTitle() {
    setWindowTitle(tr("%1 — Stallscope").arg(QFileInfo(workspacePath_).fileName()));
    setWindowFilePath(workspacePath_);
}

void MainWindow::updateActions() {
    const bool importing = isImporting();
    importAction_->setEnabled(workspaceWritable_);
    importFolderAction_->setEnabled(workspaceWritable_);
    openWorkspaceAction_->setEnabled(!importing);
    recentMenu_->setEnabled(!importing);
    closeTabAction_->setEnabled(tabs_->count() > 0);
    // An import holds the write lock; edits would wait on it and time out.
    workspaceDock_->setEditingEnabled(workspaceWritable_ && !importing);
    if (central_)
        central_->setCurrentWidget(tabs_->count() > 0 ? static_cast<QWidget*>(tabs_) : welcome_);
}

// ---- profile list and edits -----------------------------------------------------------------

void MainWindow::onProfilesLoaded(const ProfileList& list) {
    workspaceWritable_ = list.writable;
    suggestionFlow_->setWritable(list.writable);
    if (!list.error.isEmpty()) {
        workspaceDock_->showError(tr("Cannot open this workspace:\n%1").arg(list.error));
        statusLine_->setProfileCount(std::nullopt);
        setStatus(list.error, true);
    } else {
        QSet<qint64> present;
        for (const ProfileInfo& p : list.profiles) present.insert(p.id);
        suggestionFlow_->keepOnly(present);
        workspaceDock_->setProfiles(list.profiles);
        statusLine_->setProfileCount(static_cast<int>(list.profiles.size()));
        if (statusText() == tr("Loading workspace…"))
            setStatus(workspaceWritable_ ? tr("Ready") : tr("Workspace is read-only"));
        if (selectAfterReload_) workspaceDock_->selectProfile(*selectAfterReload_);
    }
    selectAfterReload_.reset();
    // Open tabs follow renames and deletions.
    tabRegistry_->followProfiles([this](qint64 id) { return workspaceDock_->profile(id); });
    updateActions();
    emit profilesReloaded();
}

void MainWindow::onEdited(const QString& message, bool failed) {
    setStatus(message, failed);
    if (failed) {
        auto* box =
            new QMessageBox(QMessageBox::Warning, tr("Stallscope"), message, QMessageBox::Ok, this);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    }
    reloadProfiles();
}

void MainWindow::renameProfile(qint64 id, const QString& newName) {
    const std::string name = newName.trimmed().toStdString();
    workspaceTasks_->edit(tr("Renamed profile to “%1”").arg(newName.trimmed()),
                          [id, name](Workspace& workspace) { workspace.renameProfile(id, name); });
}

void MainWindow::deleteProfiles(const std::vector<qint64>& ids) {
    if (ids.empty()) return;
    const std::optional<ProfileInfo> first = workspaceDock_->profile(ids.front());
    const QString name = first ? QString::fromStdString(first->name) : QString::number(ids[0]);
    const QString message = ids.size() == 1 ? tr("Deleted profile “%1”").arg(name)
                                            : tr("Deleted %1 profiles").arg(ids.size());
    workspaceTasks_->edit(message, [ids](Workspace& workspace) {
        for (qint64 id : ids) workspace.deleteProfile(id);
    });
}

// ---- import -------------------------------------------------------------------------------

bool MainWindow::isImporting() const {
    return runner_->isBusy();
}

void MainWindow::importFiles(const QStringList& paths, bool asOneRun) {
    QStringList files;
    for (const QString& path : paths)
        if (!path.isEmpty()) files << QFileInfo(path).absoluteFilePath();
    if (files.isEmpty()) return;
    if (!workspaceWritable_) {
        setStatus(tr("This workspace is read-only; nothing can be imported into it."), true);
        emit importFinished(false, statusText());
        return;
    }
    runner_->enqueue(workspacePath_, files, asOneRun);
    updateActions();
}

void MainWindow::cancelImport() {
    runner_->cancel();
    if (runner_->isRunning()) setStatus(tr("Cancelling import…"));
}

void MainWindow::onImportStarted(const QStringList& files) {
    statusLine_->beginImport();
    setStatus(tr("Importing %1…").arg(fileNames(files)));
    updateActions();
}

void MainWindow::onImportProgress(double fraction, const QString& stage) {
    statusLine_->setImportProgress(fraction);
    setStatus(tr("Importing %1: %2").arg(fileNames(runner_->currentFiles()), stage));
}

void MainWindow::onImportFinished(bool ok, const QString& message,
                                  const QList<qint64>& profileIds) {
    statusLine_->endImport();
    setStatus(message, !ok && !runner_->lastOutcome().cancelled);
    if (ok) {
        if (!profileIds.isEmpty()) selectAfterReload_ = profileIds.front();
        reloadProfiles();
    } else if (!runner_->lastOutcome().cancelled) {
        auto* box = new QMessageBox(QMessageBox::Warning, tr("Import Failed"),
                                    tr("Nothing was imported."), QMessageBox::Ok, this);
        box->setInformativeText(message);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    }
    updateActions();
    emit importFinished(ok, message);
}

void MainWindow::showImportDialog() {
    const QStringList files = dialogs::askOpenFiles(
        this, tr("Import Files"), QString(),
        tr("Traces and results (*.jsonl *.jsonl.zst *.ssrp *.zst *.pb *.csv *.json *.json.gz "
           "*.gz *.et *.log *.txt *.sqlite3);;All files (*)"));
    // Several trace files chosen together are often the ranks of one run (8 rank files became
    // 8 profiles): ask.
    const auto isTrace = [](const QString& f) {
        return f.endsWith(".json") || f.endsWith(".json.gz") || f.endsWith(".pb") ||
               f.endsWith(".pb.gz");
    };
    bool asOneRun = false;
    if (files.size() >= 2 && std::all_of(files.begin(), files.end(), isTrace)) {
        QMessageBox ask(QMessageBox::Question, tr("Import %1 Traces").arg(files.size()),
                        tr("Are these %1 traces the hosts (ranks) of one run?").arg(files.size()),
                        QMessageBox::NoButton, this);
        ask.setInformativeText(
            tr("One run is one profile with a host each, its clocks aligned "
               "and its steps compared across hosts."));
        QPushButton* oneRun = ask.addButton(tr("One Run"), QMessageBox::AcceptRole);
        ask.addButton(tr("Separate Profiles"), QMessageBox::RejectRole);
        QPushButton* cancel = ask.addButton(QMessageBox::Cancel);
        ask.setDefaultButton(oneRun);
        ask.exec();
        if (ask.clickedButton() == cancel) return;
        asOneRun = ask.clickedButton() == oneRun;
    }
    importFiles(files, asOneRun);
}

void MainWindow::showOpenWorkspaceDialog() {
    const QString path = dialogs::askWorkspace(
        this, tr("Open or Create Workspace"), QFileInfo(workspacePath_).absolutePath(),
        tr("Stallscope workspaces (*.sqlite *.db);;All files (*)"));
    if (!path.isEmpty()) openWorkspace(path);
}

// ---- drag and drop ------------------------------------------------------------------------

QStringList MainWindow::localFiles(const QMimeData* mime) {
    QStringList files;
    if (!mime || !mime->hasUrls()) return files;
    for (const QUrl& url : mime->urls())
        // A folder is one run (its rank files the hosts), or the one result it holds.
        if (url.isLocalFile() && QFileInfo::exists(url.toLocalFile())) files << url.toLocalFile();
    return files;
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (workspaceWritable_ && !localFiles(event->mimeData()).isEmpty())
        event->acceptProposedAction();
}

void MainWindow::dragMoveEvent(QDragMoveEvent* event) {
    if (workspaceWritable_ && !localFiles(event->mimeData()).isEmpty())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    const QStringList files = localFiles(event->mimeData());
    if (files.isEmpty()) return;
    event->acceptProposedAction();
    importFiles(files);
}

// ---- window -------------------------------------------------------------------------------

void MainWindow::closeEvent(QCloseEvent* event) {
    saveSettings();
    cancelImport();
    event->accept();
}

bool MainWindow::event(QEvent* event) {
    // Hovering an action put its status tip in the status bar over the status line (an
    // import's progress, the last message): the tip is shown as the action's tooltip instead.
    if (event->type() == QEvent::StatusTip) return true;
    return QMainWindow::event(event);
}

void MainWindow::changeEvent(QEvent* event) {
    // Leaving full screen through the window manager must uncheck the action too.
    if (event->type() == QEvent::WindowStateChange) {
        const QSignalBlocker blocker(fullScreenAction_);
        fullScreenAction_->setChecked(isFullScreen());
    }
    QMainWindow::changeEvent(event);
}

void MainWindow::toggleFullScreen(bool on) {
    setWindowState(on ? windowState() | Qt::WindowFullScreen
                      : windowState() & ~Qt::WindowFullScreen);
}

void MainWindow::resetLayout() {
    restoreState(defaultState_, kStateVersion);
    for (QDockWidget* dock : {workspaceDockWidget_, detailsDockWidget_, suggestionsDockWidget_}) {
        dock->setFloating(false);
        dock->show();
    }
    toolBar_->show();
    resizeDocks({workspaceDockWidget_, detailsDockWidget_},
                {kWorkspaceDockWidth, kDetailsDockWidth}, Qt::Horizontal);
    resizeDocks({suggestionsDockWidget_}, {kSuggestionsDockHeight}, Qt::Vertical);
}

// One Query tab per workspace; a row naming a time opens its profile at that time.
QWidget* MainWindow::openQuery() {
    const QString path = workspacePath_;
    return tabRegistry_->openForeign(
        "query:" + path, tr("Query"), tr("SQL over %1 (read-only)").arg(path), [this, path] {
            auto* query = new QueryView(path);
            connect(query, &QueryView::trackRequested, this,
                    [this](qint64 profileId, const QString& title,
                           const std::vector<std::tuple<qint64, qint64, QString>>& rows) {
                        pinQueryTrack(profileId, title, rows);
                    });
            connect(query, &QueryView::timeRequested, this,
                    [this](qint64 profileId, qint64 start, qint64 end) {
                        const std::optional<ProfileInfo> profile =
                            workspaceDock_->profile(profileId);
                        if (!profile) {
                            setStatus(tr("No profile %1 in this workspace (give profile_id "
                                         "with ts and dur)")
                                          .arg(profileId),
                                      true);
                            return;
                        }
                        if (auto* trace = qobject_cast<TraceView*>(openProfile(*profile)))
                            trace->showRange(start, end);
                    });
            return query;
        });
}

// A what-if's predicted trace is imported like any file (one transaction, on a worker), marked
// as derived from its trace, and compared with it on request.
void MainWindow::adoptWhatif(WhatifBox* box) {
    connect(box, &WhatifBox::saveRequested, this,
            [this, box](const QString& file, const QString& name, qint64 parentId) {
                if (!workspaceWritable_) {
                    box->saveFailed(
                        tr("This workspace is read-only; the predicted trace cannot "
                           "be saved."));
                    return;
                }
                auto savedId = std::make_shared<int64_t>(-1);
                const QString description = tr("Saved “%1”").arg(name);
                workspaceTasks_->edit(
                    description, [file = file.toStdString(), name = name.toStdString(), parentId,
                                  savedId](Workspace& workspace) {
                        Progress progress;
                        const auto imported = stallscope::importFiles(
                            workspace, ImportRequest{{file}, name, "chrome-json"}, progress);
                        workspace.setParentProfile(imported.at(0).id, parentId);
                        *savedId = imported.at(0).id;
                    });
                connect(
                    workspaceTasks_, &WorkspaceTasks::edited, box,
                    [this, box, savedId, description, name](const QString& message, bool failed) {
                        if (failed)
                            box->saveFailed(message);
                        else if (message == description && *savedId >= 0) {
                            selectAfterReload_ = *savedId;
                            box->setSaved(*savedId, name);
                        }
                    },
                    Qt::SingleShotConnection);
            });
    connect(box, &WhatifBox::compareRequested, suggestionFlow_, &SuggestionFlow::compareWithParent);
}

// A query result as a track on its profile's timeline, once that timeline is loaded.
void MainWindow::pinQueryTrack(qint64 profileId, const QString& title,
                               const std::vector<std::tuple<qint64, qint64, QString>>& rows) {
    const std::optional<ProfileInfo> profile = workspaceDock_->profile(profileId);
    auto* trace = profile ? qobject_cast<TraceView*>(openProfile(*profile)) : nullptr;
    if (!trace) {
        setStatus(tr("Profile %1 has no timeline to pin the result on").arg(profileId), true);
        return;
    }
    std::vector<QueryTrackItem> items;
    items.reserve(rows.size());
    for (const auto& [ts, dur, label] : rows) items.push_back({ts, dur, label});
    auto data = QueryTrackData::make(title, std::move(items));
    const auto pin = [trace, data] { trace->panel<QueryTracksPanel>()->pin(data); };
    if (trace->source())
        pin();
    else
        connect(trace, &TraceView::loaded, trace, pin, Qt::SingleShotConnection);
}

// A merged run's host opens from its shard workspace, in a tab of its own, at the step clicked;
// that view's hosts open further shards the same way.
void MainWindow::adoptTraceView(QWidget* view) {
    auto* trace = qobject_cast<TraceView*>(view);
    if (!trace) return;
    adoptWhatif(trace->panel<CriticalPathTracePanel>()->whatif());
    connect(trace->panel<HostsTracePanel>(), &HostsTracePanel::hostTimelineRequested, this,
            [this](const QString& shard, qint64 profileId, const QString& host, const QString& step,
                   int stepIndex) {
                if (!QFileInfo::exists(shard)) {
                    setStatus(tr("%1's timeline is in the shard %2, which is not there any more")
                                  .arg(host, shard),
                              true);
                    return;
                }
                const QString key = shard + '#' + QString::number(profileId);
                QWidget* page = tabRegistry_->openForeign(
                    key, tr("%1 (shard)").arg(host),
                    tr("%1's timeline in %2, profile %3").arg(host, shard).arg(profileId), [&] {
                        auto* shardView = new TraceView;
                        shardView->open(shard.toStdString(), profileId);
                        adoptTraceView(shardView);
                        return shardView;
                    });
                if (auto* shardView = qobject_cast<TraceView*>(page))
                    shardView->panel<HostsTracePanel>()->revealHostStep(host, step, stepIndex);
            });
}

}  // namespace stallscope
