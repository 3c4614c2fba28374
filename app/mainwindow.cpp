#include "app/mainwindow.h"

#include <google/protobuf/stubs/common.h>
#include <sqlite3.h>
#include <xxhash.h>
#include <zlib.h>
#include <zstd.h>

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPainter>
#include <QProgressBar>
#include <QPushButton>
#include <QSet>
#include <QSettings>
#include <QStackedWidget>
#include <QStatusBar>
#include <QStyle>
#include <QSvgRenderer>
#include <QTabWidget>
#include <QToolBar>
#include <QToolButton>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <QtConcurrent>

#include "app/import_runner.h"
#include "core/errors.h"
#include "core/replay/codec.h"
#include "core/replay/suggest.h"
#include "importers/import_service.h"
#include "views/cpi/cpi_compare_view.h"
#include "views/cpi/cpi_view.h"
#include "views/estimates/estimates_view.h"
#include "views/noise/absorption_view.h"
#include "views/noise/noise_compare_view.h"
#include "views/replay/replay_compare_view.h"
#include "views/replay/replay_profile_tab.h"
#include "views/shell/details_dock.h"
#include "views/shell/profile_summary.h"
#include "views/shell/workspace_dock.h"
#include "views/trace/trace_compare_view.h"
#include "views/trace/trace_view.h"

// Resources of a static library are only linked in when something references them.
static void initStallscopeResources() {
    Q_INIT_RESOURCE(resources);
}

namespace stallscope {
namespace {

constexpr int kStateVersion = 1;
constexpr char kGeometryKey[] = "MainWindow/geometry";
constexpr char kStateKey[] = "MainWindow/state";
constexpr char kRecentKey[] = "recentWorkspaces";
constexpr char kProfileIdProperty[] = "stallscopeProfileId";
// A comparison tab's two profiles (A, B): it closes when either is deleted.
constexpr char kComparedIdsProperty[] = "stallscopeComparedIds";
constexpr int kProgressSteps = 1000;

// Rendered with QSvgRenderer so the icon shows even where Qt's SVG plugins are missing.
QIcon applicationIcon() {
    QSvgRenderer renderer(QStringLiteral(":/stallscope.svg"));
    QIcon icon;
    for (int size : {16, 22, 24, 32, 48, 64, 96, 128, 256}) {
        QPixmap pixmap(size, size);
        pixmap.fill(Qt::transparent);
        QPainter painter(&pixmap);
        renderer.render(&painter);
        painter.end();
        icon.addPixmap(pixmap);
    }
    return icon;
}

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
    setWindowIcon(applicationIcon());
    setAcceptDrops(true);
    setDockNestingEnabled(true);

    tabs_ = new QTabWidget(this);
    central_ = new QStackedWidget(this);

    createActions();
    createMenus();
    createDocks();
    createStatusBar();
    createWelcomePage();

    tabs_->setTabsClosable(true);
    tabs_->setMovable(true);
    tabs_->setDocumentMode(true);
    tabs_->setUsesScrollButtons(true);
    tabs_->setElideMode(Qt::ElideRight);
    connect(tabs_, &QTabWidget::tabCloseRequested, this, &MainWindow::closeTab);
    connect(tabs_, &QTabWidget::currentChanged, this, [this](int index) {
        updateActions();
        // The workspace tree follows the tab, and with it the details and suggestions docks.
        if (QWidget* page = tabs_->widget(index)) {
            const QVariant id = page->property(kProfileIdProperty);
            if (id.isValid() && workspaceDock_) workspaceDock_->selectProfile(id.toLongLong());
        }
    });

    central_->addWidget(welcome_);
    central_->addWidget(tabs_);
    setCentralWidget(central_);

    // Replay profiles open as overview + timeline + data-cache tabs.
    registerView(QStringLiteral("replay"), [this](const ProfileInfo& profile, const QString& path) {
        auto* tab = new ReplayProfileTab(profile, path);
        // The dock may already hold this profile's document: share it instead of waiting.
        if (suggestionsDocument_ && suggestionsProfile_ && suggestionsProfile_->id == profile.id &&
            suggestionsProfile_->importedAt == profile.importedAt)
            tab->setDocument(suggestionsDocument_);
        return tab;
    });
    // Views of the other kinds load their data on workers; those that derive suggestions from
    // it hand them to the dock when they are ready.
    const auto keepViewSuggestions = [this](qint64 id) {
        return [this, id](const QList<SuggestionItem>& suggestions) {
            viewSuggestions_[id] = suggestions;
            if (dockProfileId_ == id) setSuggestions(suggestions);
        };
    };
    registerView(QStringLiteral("noise"),
                 [this, keepViewSuggestions](const ProfileInfo& profile, const QString& path) {
                     QWidget* view = createNoiseView(profile, path);
                     if (auto* absorption = qobject_cast<AbsorptionView*>(view))
                         connect(absorption, &AbsorptionView::suggestionsReady, this,
                                 keepViewSuggestions(profile.id));
                     return view;
                 });
    registerView(QStringLiteral("cpi"), [this, keepViewSuggestions](const ProfileInfo& profile,
                                                                    const QString& path) {
        QWidget* view = createCpiView(profile, path);
        if (auto* cpi = qobject_cast<CpiView*>(view))
            connect(cpi, &CpiView::suggestionsChanged, this, keepViewSuggestions(profile.id));
        return view;
    });
    registerView(QStringLiteral("estimates"), [](const ProfileInfo& profile, const QString& path) {
        return createEstimatesView(profile, path);
    });
    registerView(QStringLiteral("trace"), [](const ProfileInfo& profile, const QString& path) {
        return createTraceView(profile, path);
    });

    connect(runner_, &ImportRunner::progressChanged, this, &MainWindow::onImportProgress);
    connect(runner_, &ImportRunner::finished, this, &MainWindow::onImportFinished);

    resize(1280, 800);
    resizeDocks({workspaceDockWidget_, detailsDockWidget_}, {300, 330}, Qt::Horizontal);
    resizeDocks({suggestionsDockWidget_}, {150}, Qt::Vertical);
    defaultState_ = saveState(kStateVersion);
    restoreSettings();

    addRecentWorkspace(workspacePath_);
    rebuildRecentMenu();
    updateWindowTitle();
    updateActions();
    reloadProfiles();
}

MainWindow::~MainWindow() {
    // Children are destroyed after this body; their last signals must not reach the
    // half-destroyed window.
    for (QObject* sender : {static_cast<QObject*>(tabs_), static_cast<QObject*>(workspaceDock_),
                            static_cast<QObject*>(runner_)})
        sender->disconnect(this);
    // Waits for a running import's worker, which rolls the cancelled import back.
    delete runner_;
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

    fullScreenAction_ = new QAction(tr("&Full Screen"), this);
    fullScreenAction_->setShortcut(QKeySequence(Qt::Key_F11));
    fullScreenAction_->setCheckable(true);
    connect(fullScreenAction_, &QAction::toggled, this, &MainWindow::toggleFullScreen);

    resetLayoutAction_ = new QAction(tr("&Reset Layout"), this);
    resetLayoutAction_->setStatusTip(tr("Put the docks and the toolbar back where they started"));
    connect(resetLayoutAction_, &QAction::triggered, this, &MainWindow::resetLayout);

    aboutAction_ = new QAction(tr("&About Stallscope"), this);
    aboutAction_->setMenuRole(QAction::AboutRole);
    connect(aboutAction_, &QAction::triggered, this, &MainWindow::showAbout);

    // Window-wide shortcuts keep working while a dock has focus.
    for (QAction* action : {importAction_, closeTabAction_, quitAction_, fullScreenAction_})
        addAction(action);
}

void MainWindow::createMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(importAction_);
    file->addSeparator();
    file->addAction(openWorkspaceAction_);
    recentMenu_ = file->addMenu(tr("&Recent Workspaces"));
    connect(recentMenu_, &QMenu::aboutToShow, this, &MainWindow::rebuildRecentMenu);
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

void MainWindow::createDocks() {
    workspaceDock_ = new WorkspaceDock(this);
    workspaceDockWidget_ = new QDockWidget(tr("Workspace"), this);
    workspaceDockWidget_->setObjectName(QStringLiteral("workspaceDock"));
    workspaceDockWidget_->setWidget(workspaceDock_);
    addDockWidget(Qt::LeftDockWidgetArea, workspaceDockWidget_);

    detailsDock_ = new DetailsDock(this);
    detailsDockWidget_ = new QDockWidget(tr("Details"), this);
    detailsDockWidget_->setObjectName(QStringLiteral("detailsDock"));
    detailsDockWidget_->setWidget(detailsDock_);
    addDockWidget(Qt::RightDockWidgetArea, detailsDockWidget_);

    suggestionsDock_ = new SuggestionsDock(this);
    suggestionsDockWidget_ = new QDockWidget(tr("Suggestions"), this);
    suggestionsDockWidget_->setObjectName(QStringLiteral("suggestionsDock"));
    suggestionsDockWidget_->setWidget(suggestionsDock_);
    addDockWidget(Qt::BottomDockWidgetArea, suggestionsDockWidget_);

    // The side docks run full height; the suggestions dock sits under the tabs only.
    setCorner(Qt::BottomLeftCorner, Qt::LeftDockWidgetArea);
    setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);

    connect(workspaceDock_, &WorkspaceDock::profileActivated, this,
            [this](const ProfileInfo& profile) { openProfile(profile); });
    connect(workspaceDock_, &WorkspaceDock::currentProfileChanged, detailsDock_,
            &DetailsDock::setProfile);
    connect(workspaceDock_, &WorkspaceDock::currentProfileChanged, this,
            &MainWindow::loadSuggestionsFor);
    connect(workspaceDock_, &WorkspaceDock::renameRequested, this, &MainWindow::renameProfile);
    connect(workspaceDock_, &WorkspaceDock::deleteRequested, this,
            [this](const ProfileInfo& profile) {
                if (confirmDeleteProfile(profile)) deleteProfile(profile.id);
            });
    connect(workspaceDock_, &WorkspaceDock::importRequested, importAction_, &QAction::trigger);
    connect(suggestionsDock_, &SuggestionsDock::suggestionActivated, this,
            &MainWindow::showSuggestion);
    connect(suggestionsDock_, &SuggestionsDock::previewRequested, this,
            &MainWindow::previewSuggestion);
    connect(suggestionsDock_, &SuggestionsDock::applyRequested, this, &MainWindow::applySuggestion);
    connect(this, &MainWindow::suggestionApplied, this, [this](bool ok, qint64 id, const QString&) {
        if (ok) suggestionsDock_->setDerivedProfile(id);
    });
    connect(suggestionsDock_, &SuggestionsDock::compareWithParentRequested, this,
            &MainWindow::compareWithParent);
    connect(workspaceDock_, &WorkspaceDock::compareRequested, this, &MainWindow::openComparison);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    view->addAction(workspaceDockWidget_->toggleViewAction());
    view->addAction(detailsDockWidget_->toggleViewAction());
    view->addAction(suggestionsDockWidget_->toggleViewAction());
    view->addAction(toolBar_->toggleViewAction());
    view->addSeparator();
    view->addAction(fullScreenAction_);
    view->addAction(resetLayoutAction_);

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(aboutAction_);
}

void MainWindow::createStatusBar() {
    statusLabel_ = new QLabel(this);
    statusLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    statusLabel_->setMinimumWidth(100);
    countLabel_ = new QLabel(this);
    importProgress_ = new QProgressBar(this);
    importProgress_->setRange(0, kProgressSteps);
    importProgress_->setMaximumWidth(220);
    importProgress_->setMaximumHeight(statusLabel_->sizeHint().height() + 4);
    cancelButton_ = new QToolButton(this);
    cancelButton_->setText(tr("Cancel"));
    cancelButton_->setToolTip(tr("Cancel the import; nothing of it is stored"));
    cancelButton_->setAutoRaise(true);
    connect(cancelButton_, &QToolButton::clicked, this, &MainWindow::cancelImport);

    statusBar()->addWidget(statusLabel_, 1);
    statusBar()->addPermanentWidget(importProgress_);
    statusBar()->addPermanentWidget(cancelButton_);
    statusBar()->addPermanentWidget(countLabel_);
    importProgress_->hide();
    cancelButton_->hide();
    setStatus(tr("Loading workspace…"));
}

// Shown while no tab is open, so the central area never looks broken.
void MainWindow::createWelcomePage() {
    welcome_ = new QWidget(this);
    auto* welcomeLayout = new QVBoxLayout(welcome_);
    welcomeLayout->addStretch(2);
    auto* logo = new QLabel(welcome_);
    logo->setPixmap(windowIcon().pixmap(96, 96));
    logo->setAlignment(Qt::AlignCenter);
    auto* heading = new QLabel(tr("Stallscope"), welcome_);
    QFont headingFont = heading->font();
    headingFont.setPointSizeF(headingFont.pointSizeF() * 1.8);
    headingFont.setBold(true);
    heading->setFont(headingFont);
    heading->setAlignment(Qt::AlignCenter);
    auto* hint = new QLabel(tr("Double-click a profile in the workspace to open it.\n"
                               "Import replay traces, noise results, CPI stacks and estimates\n"
                               "with File ▸ Import… or by dropping the files here."),
                            welcome_);
    hint->setAlignment(Qt::AlignCenter);
    hint->setForegroundRole(QPalette::PlaceholderText);
    auto* importButton = new QPushButton(importAction_->icon(), tr("Import Files…"), welcome_);
    connect(importButton, &QPushButton::clicked, importAction_, &QAction::trigger);
    welcomeLayout->addWidget(logo);
    welcomeLayout->addSpacing(8);
    welcomeLayout->addWidget(heading);
    welcomeLayout->addWidget(hint);
    welcomeLayout->addSpacing(12);
    welcomeLayout->addWidget(importButton, 0, Qt::AlignHCenter);
    welcomeLayout->addStretch(3);
}

void MainWindow::restoreSettings() {
    QSettings settings;
    const QByteArray geometry = settings.value(kGeometryKey).toByteArray();
    if (!geometry.isEmpty()) restoreGeometry(geometry);
    const QByteArray state = settings.value(kStateKey).toByteArray();
    if (!state.isEmpty()) restoreState(state, kStateVersion);
}

void MainWindow::saveSettings() const {
    QSettings settings;
    settings.setValue(kGeometryKey, saveGeometry());
    settings.setValue(kStateKey, saveState(kStateVersion));
}

QStringList MainWindow::recentWorkspaces() {
    QStringList recent = QSettings().value(kRecentKey).toStringList();
    recent.removeAll(QString());
    recent.removeDuplicates();
    while (recent.size() > kMaxRecentWorkspaces) recent.removeLast();
    return recent;
}

void MainWindow::addRecentWorkspace(const QString& path) {
    const QString absolute = QFileInfo(path).absoluteFilePath();
    QStringList recent = recentWorkspaces();
    recent.removeAll(absolute);
    recent.prepend(absolute);
    while (recent.size() > kMaxRecentWorkspaces) recent.removeLast();
    QSettings().setValue(kRecentKey, recent);
}

void MainWindow::clearRecentWorkspaces() {
    QSettings().remove(kRecentKey);
}

void MainWindow::rebuildRecentMenu() {
    recentMenu_->clear();
    const QStringList recent = recentWorkspaces();
    for (int i = 0; i < recent.size(); ++i) {
        const QString& path = recent[i];
        QString label = QDir::toNativeSeparators(path);
        label.replace(QLatin1Char('&'), QStringLiteral("&&"));
        QAction* action = recentMenu_->addAction(QStringLiteral("&%1  %2").arg(i + 1).arg(label));
        action->setStatusTip(path);
        action->setCheckable(true);
        action->setChecked(path == workspacePath_);
        // A vanished file would silently become a new empty workspace.
        action->setEnabled(QFileInfo::exists(path));
        connect(action, &QAction::triggered, this, [this, path] { openWorkspace(path); });
    }
    if (recent.isEmpty()) recentMenu_->addAction(tr("No recent workspaces"))->setEnabled(false);
    recentMenu_->addSeparator();
    QAction* clear = recentMenu_->addAction(tr("&Clear Menu"));
    clear->setEnabled(!recent.isEmpty());
    connect(clear, &QAction::triggered, this, [this] {
        clearRecentWorkspaces();
        rebuildRecentMenu();
    });
}

bool MainWindow::openWorkspace(const QString& path) {
    if (isImporting()) {
        setStatus(tr("Cancel or finish the import before switching workspaces."), true);
        return false;
    }
    while (tabs_->count() > 0) closeTab(0);
    viewSuggestions_.clear();  // ids of another workspace
    dockProfileId_.reset();
    workspacePath_ = QFileInfo(path).absoluteFilePath();
    addRecentWorkspace(workspacePath_);
    rebuildRecentMenu();
    updateWindowTitle();
    workspaceDock_->setProfiles({});
    detailsDock_->setProfile(std::nullopt);
    suggestionsDock_->setSuggestions({});
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
    openWorkspaceAction_->setEnabled(!importing);
    recentMenu_->setEnabled(!importing);
    closeTabAction_->setEnabled(tabs_->count() > 0);
    // An import holds the write lock; edits would wait on it and time out.
    workspaceDock_->setEditingEnabled(workspaceWritable_ && !importing);
    central_->setCurrentWidget(tabs_->count() > 0 ? static_cast<QWidget*>(tabs_) : welcome_);
}

void MainWindow::setStatus(const QString& text, bool error) {
    statusLabel_->setText(text);
    statusLabel_->setToolTip(text);
    QPalette palette = statusLabel_->palette();
    palette.setColor(
        QPalette::WindowText,
        error ? QColor(0xc0, 0x1c, 0x28) : QApplication::palette().color(QPalette::WindowText));
    statusLabel_->setPalette(palette);
}

QString MainWindow::statusText() const {
    return statusLabel_->text();
}

QTreeWidget* MainWindow::profileTree() const {
    return workspaceDock_->tree();
}

// ---- profile list -------------------------------------------------------------------------

void MainWindow::reloadProfiles() {
    const quint64 generation = ++listGeneration_;
    const std::string path = workspacePath_.toStdString();
    auto* watcher = new QFutureWatcher<ProfileList>(this);
    connect(watcher, &QFutureWatcher<ProfileList>::finished, this, [this, watcher] {
        watcher->deleteLater();
        onProfilesLoaded(watcher->result());
    });
    watcher->setFuture(QtConcurrent::run(&quickReads_, [path, generation]() -> ProfileList {
        ProfileList list;
        list.generation = generation;
        try {
            std::unique_ptr<Workspace> workspace;
            try {
                workspace = Workspace::open(path, Workspace::Mode::ReadOnly);
            } catch (const InputError&) {
                // Missing, or an older schema: the writable open creates or migrates it.
                workspace = Workspace::open(path, Workspace::Mode::ReadWrite);
            }
            list.profiles = workspace->profiles();
            list.writable = Workspace::isWritable(path);
        } catch (const std::exception& error) {
            list.error = QString::fromStdString(error.what());
            list.writable = false;
        }
        return list;
    }));
}

void MainWindow::onProfilesLoaded(const ProfileList& list) {
    // A newer reload (or another workspace) superseded this one.
    if (list.generation != listGeneration_) return;

    workspaceWritable_ = list.writable;
    if (!list.error.isEmpty()) {
        workspaceDock_->showError(tr("Cannot open this workspace:\n%1").arg(list.error));
        countLabel_->clear();
        setStatus(list.error, true);
    } else {
        // SQLite reuses the id of a deleted newest profile: forget what views derived for
        // profiles that are gone, so a new profile never shows an old one's suggestions.
        QSet<qint64> present;
        for (const ProfileInfo& p : list.profiles) present.insert(p.id);
        for (auto it = viewSuggestions_.begin(); it != viewSuggestions_.end();)
            it = present.contains(it.key()) ? std::next(it) : viewSuggestions_.erase(it);
        workspaceDock_->setProfiles(list.profiles);
        const int count = static_cast<int>(list.profiles.size());
        countLabel_->setText(count == 1 ? tr("1 profile") : tr("%1 profiles").arg(count));
        if (statusLabel_->text() == tr("Loading workspace…"))
            setStatus(workspaceWritable_ ? tr("Ready") : tr("Workspace is read-only"));
        if (selectAfterReload_) workspaceDock_->selectProfile(*selectAfterReload_);
    }
    selectAfterReload_.reset();

    // Keep open tabs in step with renames and deletions.
    for (int i = tabs_->count() - 1; i >= 0; --i) {
        QWidget* page = tabs_->widget(i);
        if (!page->property(kProfileIdProperty).isValid()) {
            // A comparison (no single profile): it keeps its title while both profiles exist.
            // It used to be taken for profile 0 and closed by any reload.
            const QVariantList compared = page->property(kComparedIdsProperty).toList();
            for (const QVariant& id : compared)
                if (!workspaceDock_->profile(id.toLongLong())) {
                    closeTab(i);
                    break;
                }
            continue;
        }
        const qint64 id = page->property(kProfileIdProperty).toLongLong();
        const std::optional<ProfileInfo> profile = workspaceDock_->profile(id);
        if (!profile) {
            closeTab(i);
            continue;
        }
        tabs_->setTabText(i, QString::fromStdString(profile->name));
        if (auto* summary = qobject_cast<ProfileSummaryPage*>(page)) summary->setProfile(*profile);
    }
    updateActions();
    emit profilesReloaded();
}

void MainWindow::runWorkspaceEdit(const QString& description,
                                  std::function<void(Workspace&)> edit) {
    const std::string path = workspacePath_.toStdString();
    auto* watcher = new QFutureWatcher<QString>(this);
    connect(watcher, &QFutureWatcher<QString>::finished, this, [this, watcher, description] {
        watcher->deleteLater();
        const QString error = watcher->result();
        if (error.isEmpty()) {
            setStatus(description);
        } else {
            setStatus(error, true);
            auto* box = new QMessageBox(QMessageBox::Warning, tr("Stallscope"), error,
                                        QMessageBox::Ok, this);
            box->setAttribute(Qt::WA_DeleteOnClose);
            box->open();
        }
        reloadProfiles();
    });
    watcher->setFuture(QtConcurrent::run(&quickReads_, [path, edit = std::move(edit)]() -> QString {
        try {
            std::unique_ptr<Workspace> workspace = Workspace::open(path);
            edit(*workspace);
            return {};
        } catch (const std::exception& error) {
            return QString::fromStdString(error.what());
        }
    }));
}

void MainWindow::renameProfile(qint64 id, const QString& newName) {
    const std::string name = newName.trimmed().toStdString();
    runWorkspaceEdit(tr("Renamed profile to “%1”").arg(newName.trimmed()),
                     [id, name](Workspace& workspace) { workspace.renameProfile(id, name); });
}

void MainWindow::deleteProfile(qint64 id) {
    const std::optional<ProfileInfo> profile = workspaceDock_->profile(id);
    const QString name = profile ? QString::fromStdString(profile->name) : QString::number(id);
    runWorkspaceEdit(tr("Deleted profile “%1”").arg(name),
                     [id](Workspace& workspace) { workspace.deleteProfile(id); });
}

bool MainWindow::confirmDeleteProfile(const ProfileInfo& profile) {
    QMessageBox box(
        QMessageBox::Question, tr("Delete Profile"),
        tr("Delete the %1 profile “%2”?")
            .arg(QString::fromStdString(profile.kind), QString::fromStdString(profile.name)),
        QMessageBox::NoButton, this);
    box.setInformativeText(
        tr("Its data is removed from the workspace. The source file is not touched."));
    QPushButton* deleteButton = box.addButton(tr("Delete"), QMessageBox::DestructiveRole);
    QPushButton* cancel = box.addButton(QMessageBox::Cancel);
    box.setDefaultButton(cancel);
    box.exec();
    return box.clickedButton() == deleteButton;
}

// ---- tabs ---------------------------------------------------------------------------------

void MainWindow::registerView(const QString& kind, ViewFactory factory) {
    viewFactories_.insert(kind, std::move(factory));
}

int MainWindow::tabIndexOfProfile(qint64 id) const {
    for (int i = 0; i < tabs_->count(); ++i) {
        const QVariant tabId = tabs_->widget(i)->property(kProfileIdProperty);
        if (tabId.isValid() && tabId.toLongLong() == id) return i;
    }
    return -1;
}

QWidget* MainWindow::openProfile(const ProfileInfo& profile) {
    if (const int existing = tabIndexOfProfile(profile.id); existing >= 0) {
        tabs_->setCurrentIndex(existing);
        return tabs_->widget(existing);
    }
    const QString kind = QString::fromStdString(profile.kind);
    QWidget* page = nullptr;
    if (auto factory = viewFactories_.constFind(kind); factory != viewFactories_.constEnd())
        page = (*factory)(profile, workspacePath_);
    if (!page) page = new ProfileSummaryPage(profile);
    page->setProperty(kProfileIdProperty, QVariant::fromValue<qint64>(profile.id));
    const int index = tabs_->addTab(page, QString::fromStdString(profile.name));
    tabs_->setTabToolTip(index, tr("%1 (%2)\n%3")
                                    .arg(QString::fromStdString(profile.name), kind,
                                         QString::fromStdString(profile.sourcePath)));
    tabs_->setCurrentIndex(index);
    updateActions();
    return page;
}

void MainWindow::closeTab(int index) {
    QWidget* page = tabs_->widget(index);
    if (!page) return;
    tabs_->removeTab(index);
    page->deleteLater();
    updateActions();
}

void MainWindow::setSuggestions(const QList<SuggestionItem>& suggestions) {
    suggestionsDock_->setSuggestions(suggestions);
}

// ---- import -------------------------------------------------------------------------------

bool MainWindow::isImporting() const {
    return runner_->isRunning() || !pendingImports_.isEmpty();
}

void MainWindow::importFiles(const QStringList& paths) {
    QStringList files;
    for (const QString& path : paths)
        if (!path.isEmpty()) files << QFileInfo(path).absoluteFilePath();
    if (files.isEmpty()) return;
    if (!workspaceWritable_) {
        setStatus(tr("This workspace is read-only; nothing can be imported into it."), true);
        emit importFinished(false, statusText());
        return;
    }
    pendingImports_.append(files);
    if (!runner_->isRunning()) startNextImport();
    updateActions();
}

void MainWindow::startNextImport() {
    if (pendingImports_.isEmpty()) return;
    currentImport_ = pendingImports_.takeFirst();
    runner_->start(workspacePath_, currentImport_);
    importProgress_->setValue(0);
    importProgress_->show();
    cancelButton_->show();
    setStatus(tr("Importing %1…").arg(fileNames(currentImport_)));
    updateActions();
}

void MainWindow::cancelImport() {
    pendingImports_.clear();
    runner_->cancel();
    if (runner_->isRunning()) setStatus(tr("Cancelling import…"));
}

void MainWindow::onImportProgress(double fraction, const QString& stage) {
    importProgress_->setValue(static_cast<int>(fraction * kProgressSteps));
    setStatus(tr("Importing %1: %2").arg(fileNames(currentImport_), stage));
}

void MainWindow::onImportFinished(bool ok, const QString& message,
                                  const QList<qint64>& profileIds) {
    currentImport_.clear();
    importProgress_->hide();
    cancelButton_->hide();
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
    startNextImport();
    updateActions();
    emit importFinished(ok, message);
}

void MainWindow::showImportDialog() {
    const QStringList files = QFileDialog::getOpenFileNames(
        this, tr("Import Files"), QString(),
        tr("Traces and results (*.jsonl *.jsonl.zst *.ssrp *.zst *.pb *.csv *.json *.json.gz "
           "*.gz *.et *.log *.txt *.sqlite3);;All files (*)"));
    importFiles(files);
}

void MainWindow::showOpenWorkspaceDialog() {
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Open or Create Workspace"), QFileInfo(workspacePath_).absolutePath(),
        tr("Stallscope workspaces (*.sqlite *.db);;All files (*)"), nullptr,
        QFileDialog::DontConfirmOverwrite);
    if (!path.isEmpty()) openWorkspace(path);
}

// ---- drag and drop ------------------------------------------------------------------------

QStringList MainWindow::localFiles(const QMimeData* mime) {
    QStringList files;
    if (!mime || !mime->hasUrls()) return files;
    for (const QUrl& url : mime->urls())
        if (url.isLocalFile() && QFileInfo(url.toLocalFile()).isFile()) files << url.toLocalFile();
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
    // The runner's destructor waits for the worker, which rolls the cancelled import back.
    cancelImport();
    event->accept();
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
    resizeDocks({workspaceDockWidget_, detailsDockWidget_}, {300, 330}, Qt::Horizontal);
    resizeDocks({suggestionsDockWidget_}, {150}, Qt::Vertical);
}

QString MainWindow::aboutText() {
    const auto row = [](const QString& name, const QString& version) {
        return QStringLiteral("<tr><td>%1</td><td style='padding-left:12px'>%2</td></tr>")
            .arg(name, version.toHtmlEscaped());
    };
    return tr("<h3>Stallscope %1</h3>"
              "<p>Performance visualizer for ML accelerators and HPC kernels.</p>"
              "<table>%2</table>")
        .arg(QStringLiteral(STALLSCOPE_VERSION),
             row(QStringLiteral("Qt"), QString::fromLatin1(qVersion())) +
                 row(QStringLiteral("SQLite"), QString::fromLatin1(sqlite3_libversion())) +
                 row(QStringLiteral("zstd"), QString::fromLatin1(ZSTD_versionString())) +
                 row(QStringLiteral("zlib"), QString::fromLatin1(zlibVersion())) +
                 row(QStringLiteral("protobuf"),
                     QString::fromStdString(
                         google::protobuf::internal::VersionString(GOOGLE_PROTOBUF_VERSION))) +
                 row(QStringLiteral("simdjson"), QString::fromStdString(jsonParserVersion())) +
                 row(QStringLiteral("xxHash"), QStringLiteral("%1.%2.%3")
                                                   .arg(XXH_versionNumber() / 10000)
                                                   .arg(XXH_versionNumber() / 100 % 100)
                                                   .arg(XXH_versionNumber() % 100)));
}

void MainWindow::showAbout() {
    QMessageBox::about(this, tr("About Stallscope"), aboutText());
}

}  // namespace stallscope

namespace stallscope {

void MainWindow::loadSuggestionsFor(const std::optional<ProfileInfo>& profile) {
    const quint64 generation = ++suggestionsGeneration_;
    suggestionsProfile_.reset();
    suggestionsDocument_.reset();
    dockProfileId_.reset();
    if (profile) dockProfileId_ = profile->id;
    if (!profile || profile->kind != "replay") {
        // Other kinds: what their open view derived (nothing until it has loaded).
        suggestionsDock_->setSuggestions(profile ? viewSuggestions_.value(profile->id)
                                                 : QList<SuggestionItem>{});
        return;
    }
    suggestionsProfile_ = profile;
    // Loading and analysing a trace takes up to seconds on big ones: a worker does it (shared
    // with the profile's tab through the document cache), and a result for a profile that is no
    // longer selected is dropped.
    auto* watcher = new QFutureWatcher<ReplayDocumentPtr>(this);
    connect(
        watcher, &QFutureWatcher<ReplayDocumentPtr>::finished, this, [this, watcher, generation] {
            watcher->deleteLater();
            if (generation != suggestionsGeneration_) return;
            QList<SuggestionItem> items;
            try {
                suggestionsDocument_ = watcher->result();
                for (const auto& s : suggestionsDocument_->analysis.suggestions) {
                    SuggestionItem item{QString::fromStdString(s.kind),
                                        QString::fromStdString(s.text),
                                        static_cast<double>(s.savingCycles)};
                    for (int64_t id : s.dmas) item.dmas.append(id);
                    QStringList evidence;
                    for (const auto& [key, value] : s.evidence)
                        evidence
                            << QStringLiteral("%1=%2").arg(QString::fromStdString(key)).arg(value);
                    item.evidence = evidence.join(QStringLiteral(", "));
                    items.append(item);
                }
            } catch (const std::exception& e) {
                items.append({QStringLiteral("error"),
                              tr("Could not analyse this profile: %1").arg(e.what()), 0});
            }
            suggestionsDock_->setSuggestions(items);
            emit suggestionsLoaded();
        });
    watcher->setFuture(ReplayDocumentCache::instance().load(workspacePath_, *profile));
}

ReplayProfileTab* MainWindow::showSuggestion(int index) {
    if (!suggestionsProfile_ || !suggestionsDocument_) return nullptr;
    auto* tab = qobject_cast<ReplayProfileTab*>(openProfile(*suggestionsProfile_));
    if (!tab) return nullptr;
    if (!tab->isLoaded()) tab->setDocument(suggestionsDocument_);
    tab->showSuggestion(index);
    return tab;
}

ReplayProfileTab* MainWindow::previewSuggestion(int index) {
    ReplayProfileTab* tab = showSuggestion(index);
    if (tab) tab->previewSuggestion(index);
    return tab;
}

void MainWindow::applySuggestion(int index) {
    if (!suggestionsProfile_ || !suggestionsDocument_ || index < 0 ||
        size_t(index) >= suggestionsDocument_->analysis.suggestions.size())
        return;
    if (!workspaceWritable_) {
        setStatus(tr("This workspace is read-only; the edited trace cannot be saved."), true);
        return;
    }
    const QString path = workspacePath_;
    const ReplayDocumentPtr doc = suggestionsDocument_;
    setStatus(tr("Saving the edited trace…"));
    struct Outcome {
        qint64 id = 0;
        QString name, error;
    };
    auto* watcher = new QFutureWatcher<Outcome>(this);
    connect(watcher, &QFutureWatcher<Outcome>::finished, this, [this, watcher] {
        watcher->deleteLater();
        const Outcome outcome = watcher->result();
        if (!outcome.error.isEmpty()) {
            setStatus(tr("Could not save the edited trace: %1").arg(outcome.error), true);
            emit suggestionApplied(false, 0, outcome.error);
            return;
        }
        setStatus(tr("Saved “%1”, ready to compare with its parent").arg(outcome.name));
        selectAfterReload_ = outcome.id;
        reloadProfiles();
        emit suggestionApplied(true, outcome.id, outcome.name);
    });
    watcher->setFuture(QtConcurrent::run([path, doc, index]() -> Outcome {
        try {
            const ProfileInfo info = applySuggestionAsProfile(path, *doc, size_t(index));
            return {info.id, QString::fromStdString(info.name), {}};
        } catch (const std::exception& e) {
            return {0, {}, QString::fromUtf8(e.what())};
        }
    }));
}

QWidget* MainWindow::openComparison(const ProfileInfo& a, const ProfileInfo& b) {
    QWidget* view = nullptr;
    if (a.kind != b.kind) {
        setStatus(tr("Compare needs two profiles of the same kind"), true);
        return nullptr;
    }
    if (a.kind == "replay")
        view = new ReplayCompareView(a, b, workspacePath_);
    else if (a.kind == "trace")
        view = createCompareView(a, b, workspacePath_);
    else if (a.kind == "cpi")
        view = new CpiCompareView(a, b, workspacePath_);
    else if (a.kind == "noise")
        view = new NoiseCompareView(a, b, workspacePath_);
    if (!view) {
        setStatus(
            tr("%1 profiles have no side-by-side comparison").arg(QString::fromStdString(a.kind)),
            true);
        return nullptr;
    }
    view->setProperty(kComparedIdsProperty, QVariantList{QVariant::fromValue<qint64>(a.id),
                                                         QVariant::fromValue<qint64>(b.id)});
    const QString title = QString::fromStdString(b.name) + " vs " + QString::fromStdString(a.name);
    tabs_->setCurrentIndex(tabs_->addTab(view, title));
    tabs_->setTabToolTip(
        tabs_->currentIndex(),
        tr("B: %1\nA: %2").arg(QString::fromStdString(b.name), QString::fromStdString(a.name)));
    central_->setCurrentWidget(tabs_);
    return view;
}

void MainWindow::compareWithParent(qint64 derivedId) {
    // Profile rows are read on a worker; the comparison opens when both are known.
    const QString path = workspacePath_;
    struct Pair {
        std::optional<ProfileInfo> parent, derived;
        QString error;
    };
    auto* watcher = new QFutureWatcher<Pair>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher] {
        watcher->deleteLater();
        const Pair pair = watcher->result();
        if (pair.parent && pair.derived)
            openComparison(*pair.parent, *pair.derived);
        else if (!pair.error.isEmpty())
            setStatus(tr("Cannot compare with the original: %1").arg(pair.error), true);
        else
            setStatus(tr("The original of this profile is no longer in the workspace"), true);
    });
    watcher->setFuture(QtConcurrent::run(&quickReads_, [path, derivedId] {
        Pair out;
        try {
            auto workspace = Workspace::open(path.toStdString(), Workspace::Mode::ReadOnly);
            out.derived = workspace->profile(derivedId);
            if (out.derived && out.derived->parentId)
                out.parent = workspace->profile(*out.derived->parentId);
        } catch (const std::exception& e) {
            out.error = QString::fromUtf8(e.what());
        }
        return out;
    }));
}

}  // namespace stallscope
