#include "views/trace/trace_view.h"

#include <QComboBox>
#include <QCoreApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPainter>
#include <QPushButton>
#include <QScrollBar>
#include <QSettings>
#include <QShortcut>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTableView>
#include <QTextBrowser>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <QtConcurrent>
#include <algorithm>

#include "core/analysis/cache.h"
#include "core/analysis/registry.h"
#include "views/common/format.h"
#include "views/common/table_kit.h"
#include "views/common/timeline_view.h"
#include "views/shell/elided_label.h"
#include "views/trace/area_summary_panel.h"
#include "views/trace/args_html.h"

namespace stallscope {

namespace {

const char* const kFlowDisplayKey = "trace/flowDisplay";

constexpr int kTrackIdRole = Qt::UserRole + 1;
using tablekit::kSortRole;

struct Opened {
    TraceSourcePtr source;
    std::vector<trace::OpStat> ops;
};

QStandardItem* numberItem(double sortValue, const QString& text) {
    return tablekit::standardCell(text, sortValue);
}

QString htmlEscape(const QString& s) {
    return s.toHtmlEscaped();
}

}  // namespace

TraceView::TraceView(QWidget* parent)
    : QWidget(parent),
      highlight_(std::make_shared<TraceHighlight>()),
      openJob_(this, [this](const QString& error) { status_->setText(error); }),
      densityJob_(this,
                  [this](const QString& error) {
                      status_->setText(tr("No overview strip: %1").arg(error));
                  }),
      findJob_(this, [this](const QString& error) { status_->setText(error); }),
      argsJob_(this, [this](const QString& error) {
          details_->append(tr("Cannot read the arguments: %1").arg(error));
      }) {
    timeline_ = new TimelineView;
    for (const TracePanelFactory& make : tracePanelFactories()) {
        panels_.push_back(make(*this));
        TracePanel* panel = panels_.back().get();
        analysisJobs_.push_back(
            std::make_unique<async::JobSlot>(this, [panel](const QString& error) {
                panel->showMessage(tr("No %1 analysis: %2")
                                       .arg(QString::fromUtf8(panel->analysis().data(),
                                                              qsizetype(panel->analysis().size())),
                                            error));
            }));
    }
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(buildFindBar());
    // The timeline across the whole width (its label column names the tracks; the track tree
    // for filtering, moving and pinning is a tab below), over about two thirds of the height.
    auto* vertical = new QSplitter(Qt::Vertical);
    vertical->addWidget(timeline_);
    vertical->addWidget(buildTabs());
    vertical->setStretchFactor(0, 2);
    vertical->setStretchFactor(1, 1);
    vertical->setSizes({640, 320});
    vertical->setCollapsible(0, false);
    layout->addWidget(vertical, 1);
    connect(timeline_, &TimelineView::selectionChanged, this, &TraceView::showSelectionDetails);
    connectExploring();
    // W/A/S/D, F and Home move the timeline wherever the view's focus is (Perfetto's habit); a
    // text field keeps its typing (it overrides shortcuts for printable keys).
    for (const Qt::Key key :
         {Qt::Key_W, Qt::Key_A, Qt::Key_S, Qt::Key_D, Qt::Key_F, Qt::Key_Home}) {
        auto* shortcut = new QShortcut(QKeySequence(key), this);
        shortcut->setContext(Qt::WidgetWithChildrenShortcut);
        connect(shortcut, &QShortcut::activated, this,
                [this, key] { timeline_->navigateByKey(key); });
    }
}

QLayout* TraceView::buildFindBar() {
    auto* findBar = new QHBoxLayout;
    findEdit_ = new QLineEdit;
    findEdit_->setPlaceholderText(tr("Find slices by name"));
    auto* previous = new QPushButton(tr("Previous"));
    auto* next = new QPushButton(tr("Next"));
    // Elided: a recommendation's sentence must not widen the window.
    status_ = new ElidedLabel;
    findEdit_->setMinimumWidth(160);
    findBar->addWidget(findEdit_, 2);
    findBar->addWidget(previous);
    findBar->addWidget(next);
    findBar->addWidget(status_, 1);
    for (const auto& panel : panels_)
        for (QWidget* w : panel->findBarWidgets()) findBar->addWidget(w);
    findBar->addWidget(new QLabel(tr("Flows:")));
    flowDisplay_ = new QComboBox;
    flowDisplay_->addItem(tr("Selected slice"), int(FlowDisplay::Selected));
    flowDisplay_->addItem(tr("All"), int(FlowDisplay::All));
    flowDisplay_->addItem(tr("None"), int(FlowDisplay::None));
    flowDisplay_->setToolTip(
        tr("Flow arrows of the selected slice (one without any, an aten op: those of the "
           "slices nested in it, while they are few), of every slice, or none"));
    flowDisplay_->setCurrentIndex(
        std::clamp(QSettings().value(kFlowDisplayKey, 0).toInt(), 0, flowDisplay_->count() - 1));
    findBar->addWidget(flowDisplay_);
    connect(flowDisplay_, &QComboBox::activated, this, [this](int index) {
        QSettings().setValue(kFlowDisplayKey, index);
        if (binding_) binding_->setFlowDisplay(FlowDisplay(flowDisplay_->itemData(index).toInt()));
    });
    connect(findEdit_, &QLineEdit::returnPressed, this,
            [this] { findNext(findEdit_->text(), true); });
    connect(findEdit_, &QLineEdit::textChanged, this, &TraceView::countMatches);
    connect(next, &QPushButton::clicked, this, [this] { findNext(findEdit_->text(), true); });
    connect(previous, &QPushButton::clicked, this, [this] { findNext(findEdit_->text(), false); });
    return findBar;
}

QWidget* TraceView::buildTreePane() {
    auto* treePane = new QWidget;
    auto* treeLayout = new QVBoxLayout(treePane);
    treeLayout->setContentsMargins(0, 0, 0, 0);
    treeFilter_ = new QLineEdit;
    treeFilter_->setPlaceholderText(tr("Filter tracks"));
    tree_ = new QTreeWidget;
    tree_->setHeaderLabels({tr("Track"), tr("Slices")});
    tree_->setContextMenuPolicy(Qt::CustomContextMenu);
    // Reorder and pin: buttons, Alt+Up/Down and the context menu act on the current track.
    auto* treeButtons = new QHBoxLayout;
    auto* up = new QPushButton(tr("Up"));
    auto* down = new QPushButton(tr("Down"));
    auto* pin = new QPushButton(tr("Pin"));
    up->setToolTip(tr("Move the track up (Alt+Up)"));
    down->setToolTip(tr("Move the track down (Alt+Down)"));
    pin->setToolTip(tr("Pin the track (or process) to the top of the timeline, or unpin it"));
    for (QPushButton* b : {up, down, pin}) treeButtons->addWidget(b);
    connect(up, &QPushButton::clicked, this, [this] { moveCurrent(-1); });
    connect(down, &QPushButton::clicked, this, [this] { moveCurrent(1); });
    connect(pin, &QPushButton::clicked, this, [this] { togglePinCurrent(); });
    auto* upKey = new QShortcut(QKeySequence(Qt::ALT | Qt::Key_Up), tree_);
    auto* downKey = new QShortcut(QKeySequence(Qt::ALT | Qt::Key_Down), tree_);
    upKey->setContext(Qt::WidgetShortcut);
    downKey->setContext(Qt::WidgetShortcut);
    connect(upKey, &QShortcut::activated, this, [this] { moveCurrent(-1); });
    connect(downKey, &QShortcut::activated, this, [this] { moveCurrent(1); });
    connect(tree_, &QTreeWidget::customContextMenuRequested, this, [this](const QPoint& pos) {
        QTreeWidgetItem* item = tree_->itemAt(pos);
        if (!item) return;
        tree_->setCurrentItem(item);
        const int64_t id = item->data(0, kTrackIdRole).toLongLong();
        QMenu menu;
        menu.addAction(tr("Move up"), this, [this] { moveCurrent(-1); });
        menu.addAction(tr("Move down"), this, [this] { moveCurrent(1); });
        menu.addAction(isPinned(id) ? tr("Unpin") : tr("Pin to top"), this,
                       [this] { togglePinCurrent(); });
        menu.exec(tree_->viewport()->mapToGlobal(pos));
    });
    // A row the user chose (a click, or the arrow keys from a row): not the first row Qt makes
    // current when the tree takes focus, which jumped to Details and zoomed out.
    connect(tree_, &QTreeWidget::currentItemChanged, this,
            [this](QTreeWidgetItem* item, QTreeWidgetItem* previous) {
                if (item && previous && !fillingTree_)
                    showTrackDetails(item->data(0, kTrackIdRole).toLongLong());
            });
    connect(tree_, &QTreeWidget::itemClicked, this, [this](QTreeWidgetItem* item) {
        if (item && !fillingTree_) showTrackDetails(item->data(0, kTrackIdRole).toLongLong());
    });
    treeLayout->addWidget(treeFilter_);
    treeLayout->addLayout(treeButtons);
    treeLayout->addWidget(tree_);
    connect(treeFilter_, &QLineEdit::textChanged, this, &TraceView::setTrackFilter);
    connect(tree_, &QTreeWidget::itemChanged, this, [this] {
        if (!fillingTree_) applyTreeToTimeline();
    });
    connect(tree_, &QTreeWidget::itemCollapsed, this, [this] { applyTreeToTimeline(); });
    connect(tree_, &QTreeWidget::itemExpanded, this, [this] { applyTreeToTimeline(); });

    return treePane;
}

QTabWidget* TraceView::buildTabs() {
    tabs_ = new QTabWidget;
    opModel_ = new QStandardItemModel(this);
    opModel_->setHorizontalHeaderLabels(
        {tr("Op"), tr("Count"), tr("Total"), tr("Self"), tr("Mean"), tr("p50"), tr("p95")});
    opProxy_ = tablekit::sortingProxy(opModel_, this);
    opTable_ = new QTableView;
    opTable_->setModel(opProxy_);
    opTable_->setSortingEnabled(true);
    opTable_->setSelectionBehavior(QAbstractItemView::SelectRows);
    opTable_->setSelectionMode(QAbstractItemView::SingleSelection);
    opTable_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    opTable_->verticalHeader()->hide();
    connect(opTable_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                if (current.isValid() && !syncingOpTable_)
                    selectOp(opProxy_->index(current.row(), 0).data(kSortRole).toString());
            });
    details_ = new QTextBrowser;
    overview_ = new QTextBrowser;
    overview_->setFrameShape(QFrame::NoFrame);
    auto* overviewPage = new QWidget;
    auto* overviewLayout = new QVBoxLayout(overviewPage);
    overviewLayout->setContentsMargins(0, 0, 0, 0);
    overviewLayout->setSpacing(0);
    for (const auto& panel : panels_)
        if (QWidget* header = panel->overviewHeader()) overviewLayout->addWidget(header);
    overviewLayout->addWidget(overview_, 1);
    tabs_->addTab(overviewPage, tr("Overview"));
    tabs_->addTab(buildTreePane(), tr("Tracks"));
    tabs_->addTab(opTable_, tr("Ops"));
    summary_ = new AreaSummaryPanel;
    tabs_->addTab(summary_, tr("Summary"));
    tabs_->addTab(details_, tr("Details"));
    syncPanelTabs();
    return tabs_;
}

// The panels' tabs after the overview, in the panels' order, for those that apply.
void TraceView::syncPanelTabs() {
    int at = 1;  // after the overview (before Tracks, Ops and Details)
    for (const auto& panel : panels_) {
        QWidget* widget = panel->widget();
        if (panel->title().isEmpty() || !widget) continue;
        const bool applies = panel->appliesTo(source_.get());
        const int index = tabs_->indexOf(widget);
        if (applies && index < 0) tabs_->insertTab(at, widget, panel->title());
        if (!applies && index >= 0) tabs_->removeTab(index);
        if (applies) ++at;
    }
}

TraceView::~TraceView() = default;

void TraceView::open(const std::string& workspacePath, int64_t profileId) {
    status_->setText(tr("Opening…"));
    // Opening reads the track list and string table and the op statistics: not on the GUI thread.
    openJob_.start(
        [workspacePath, profileId] {
            Opened out;
            out.source = std::make_shared<TraceSource>(workspacePath, profileId);
            out.ops = out.source->query([](const trace::TraceStore& s) { return s.opStats(); });
            return out;
        },
        [this, workspacePath, profileId](Opened opened) {
            status_->clear();
            const TraceSourcePtr source = opened.source;
            setSource(std::move(opened.source), std::move(opened.ops));
            loadAnalyses(workspacePath, profileId);
            // The minimap's density comes after the first frame, from its own worker.
            densityJob_.start(
                [source] {
                    return source->query([](const trace::TraceStore& s) {
                        return trackBusyDensity(s, kOverviewBins);
                    });
                },
                [this, source](std::vector<double> density) {
                    if (source != source_) return;  // another profile was opened since
                    // Timeline times are relative to the profile's start (the source's origin).
                    const TimeRange extent{0, double(source->store().end() - source->origin())};
                    timeline_->setOverviewPainter(densityOverview(std::move(density), extent));
                });
        });
}

void TraceView::setSource(TraceSourcePtr source, std::vector<trace::OpStat> ops) {
    source_ = std::move(source);
    ops_ = std::move(ops);
    foldedOpNames_.clear();
    binding_ = std::make_unique<TraceTimelineBinding>(*timeline_, source_, highlight_);
    binding_->setFlowDisplay(FlowDisplay(flowDisplay_->currentData().toInt()));
    // Analyses of another profile do not apply; open() loads this one's.
    for (const auto& panel : panels_) panel->clear();
    syncPanelTabs();
    buildTree();
    applyTreeToTimeline();
    timeline_->fitAll();
    fillOpTable(ops_);
    overview_->setHtml(overviewHtml());
    emit loaded();
}

void TraceView::buildTree() {
    fillingTree_ = true;
    tree_->clear();
    treeItems_.clear();
    pinned_.clear();
    const trace::TraceStore& store = source_->store();
    std::function<void(int64_t, QTreeWidgetItem*)> add = [&](int64_t parent,
                                                             QTreeWidgetItem* into) {
        for (const trace::TrackRow* row : store.children(parent)) {
            auto* item = into ? new QTreeWidgetItem(into) : new QTreeWidgetItem(tree_);
            const QString name = QString::fromStdString(row->name.empty() ? row->tid : row->name);
            item->setText(0, name);
            item->setText(1, QString::number(row->slices + row->instants + row->samples));
            item->setData(0, kTrackIdRole, qint64(row->id));
            treeItems_[row->id] = item;
            item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
            item->setCheckState(0, Qt::Checked);
            add(row->id, item);
        }
    };
    add(-1, nullptr);
    tree_->expandAll();
    tree_->resizeColumnToContents(0);
    fillingTree_ = false;
}

void TraceView::applyTreeToTimeline() {
    if (!binding_) return;
    // (track id, pin rank): pinned tracks and the tracks of pinned processes go first, in the
    // order they were pinned; the rest follow in tree order.
    std::vector<std::pair<int64_t, size_t>> shown;
    const size_t unpinned = pinned_.size();
    auto pinRank = [&](int64_t id) {
        const auto it = std::find(pinned_.begin(), pinned_.end(), id);
        return it == pinned_.end() ? unpinned : size_t(it - pinned_.begin());
    };
    // A track shows when it and all its ancestors are checked, visible (filter) and expanded.
    std::function<void(QTreeWidgetItem*, bool, size_t)> walk = [&](QTreeWidgetItem* item,
                                                                   bool parentOpen, size_t rank) {
        const int64_t id = item->data(0, kTrackIdRole).toLongLong();
        rank = std::min(rank, pinRank(id));
        const bool visible = parentOpen && !item->isHidden() && item->checkState(0) == Qt::Checked;
        if (visible) shown.emplace_back(id, rank);
        for (int i = 0; i < item->childCount(); ++i)
            walk(item->child(i), visible && (item->isExpanded() || item->childCount() == 0), rank);
    };
    for (int i = 0; i < tree_->topLevelItemCount(); ++i)
        walk(tree_->topLevelItem(i), true, unpinned);
    std::erase_if(shown, [&](const auto& s) {
        const trace::TrackRow* row = source_->store().track(s.first);
        return !row || row->slices + row->instants + row->samples == 0;
    });
    std::stable_sort(shown.begin(), shown.end(),
                     [](const auto& a, const auto& b) { return a.second < b.second; });
    std::vector<int64_t> ids;
    ids.reserve(shown.size());
    for (const auto& s : shown) ids.push_back(s.first);
    binding_->show(ids);
}

std::vector<int64_t> TraceView::shownTrackIds() const {
    std::vector<int64_t> ids;
    if (!binding_) return ids;
    for (const auto& track : timeline_->tracks())
        for (const auto& [id, shown] : binding_->shown().byTrackId)
            if (shown == track.get()) ids.push_back(id);
    return ids;
}

void TraceView::moveTrack(int64_t trackId, int delta) {
    const auto found = treeItems_.find(trackId);
    if (found == treeItems_.end() || delta == 0) return;
    QTreeWidgetItem* item = found->second;
    QTreeWidgetItem* parent = item->parent();
    const int count = parent ? parent->childCount() : tree_->topLevelItemCount();
    const int index = parent ? parent->indexOfChild(item) : tree_->indexOfTopLevelItem(item);
    const int target = std::clamp(index + delta, 0, count - 1);
    if (target == index) return;
    // Taking an item out forgets the expansion of its subtree: remember and restore it.
    std::vector<std::pair<QTreeWidgetItem*, bool>> expanded;
    std::function<void(QTreeWidgetItem*)> remember = [&](QTreeWidgetItem* i) {
        expanded.emplace_back(i, i->isExpanded());
        for (int c = 0; c < i->childCount(); ++c) remember(i->child(c));
    };
    remember(item);
    fillingTree_ = true;
    if (parent) {
        parent->takeChild(index);
        parent->insertChild(target, item);
    } else {
        tree_->takeTopLevelItem(index);
        tree_->insertTopLevelItem(target, item);
    }
    for (const auto& [i, open] : expanded) i->setExpanded(open);
    tree_->setCurrentItem(item);
    fillingTree_ = false;
    applyTreeToTimeline();
}

bool TraceView::isPinned(int64_t trackId) const {
    return std::find(pinned_.begin(), pinned_.end(), trackId) != pinned_.end();
}

void TraceView::markPinned(QTreeWidgetItem* item, bool pinned) {
    QFont font = item->font(0);
    font.setBold(pinned);
    item->setFont(0, font);
    item->setToolTip(0, pinned ? tr("Pinned to the top of the timeline") : QString());
}

void TraceView::setPinned(int64_t trackId, bool pinned) {
    const auto found = treeItems_.find(trackId);
    if (found == treeItems_.end() || pinned == isPinned(trackId)) return;
    if (pinned)
        pinned_.push_back(trackId);
    else
        std::erase(pinned_, trackId);
    fillingTree_ = true;
    markPinned(found->second, pinned);
    fillingTree_ = false;
    applyTreeToTimeline();
    timeline_->verticalScrollBar()->setValue(0);
}

void TraceView::moveCurrent(int delta) {
    if (QTreeWidgetItem* item = tree_->currentItem())
        moveTrack(item->data(0, kTrackIdRole).toLongLong(), delta);
}

void TraceView::togglePinCurrent() {
    if (QTreeWidgetItem* item = tree_->currentItem()) {
        const int64_t id = item->data(0, kTrackIdRole).toLongLong();
        setPinned(id, !isPinned(id));
    }
}

void TraceView::setTrackFilter(const QString& text) {
    fillingTree_ = true;
    std::function<bool(QTreeWidgetItem*, bool)> filter = [&](QTreeWidgetItem* item,
                                                             bool parentMatches) {
        const bool matches =
            parentMatches || text.isEmpty() || item->text(0).contains(text, Qt::CaseInsensitive);
        bool anyChild = false;
        for (int i = 0; i < item->childCount(); ++i)
            anyChild = filter(item->child(i), matches) || anyChild;
        item->setHidden(!(matches || anyChild));
        return matches || anyChild;
    };
    for (int i = 0; i < tree_->topLevelItemCount(); ++i) filter(tree_->topLevelItem(i), false);
    fillingTree_ = false;
    applyTreeToTimeline();
}

// As the find field is typed: how many slices on the timeline have a name containing the text
// (case-folded, as find() matches), from the op statistics already loaded (no slice is read); the
// matched names are drawn in colour, every other slice dimmed.
void TraceView::countMatches(const QString& text) {
    highlight_->names.clear();
    timeline_->viewport()->update();
    if (text.isEmpty()) {
        if (status_->text() == matchText_) status_->clear();
        matchText_.clear();
        return;
    }
    const QString needle = text.toCaseFolded();
    if (foldedOpNames_.size() != ops_.size()) {
        foldedOpNames_.clear();
        for (const trace::OpStat& op : ops_)
            foldedOpNames_.push_back(QString::fromStdString(op.name).toCaseFolded());
    }
    uint64_t slices = 0, names = 0;
    for (size_t i = 0; i < ops_.size(); ++i) {
        const trace::OpStat& op = ops_[i];
        if (!foldedOpNames_[i].contains(needle)) continue;
        highlight_->names.insert(op.name);  // every match is drawn in colour, the rest dimmed
        slices += op.count - op.aggregated + op.unended;
        ++names;
    }
    matchText_ =
        names == 0 ? tr("No slice matches “%1”").arg(text)
                   : tr("%1 %2 “%3” in %4 %5: Enter or Next steps through them")
                         .arg(format::count(double(slices)),
                              slices == 1 ? tr("slice matches") : tr("slices match"), text,
                              format::count(double(names)), names == 1 ? tr("name") : tr("names"));
    status_->setText(matchText_);
}

void TraceView::fillOpTable(const std::vector<trace::OpStat>& ops) {
    opModel_->removeRows(0, opModel_->rowCount());
    // XProf aggregated events (num_occurrences): a column saying how many of the count are known
    // only in aggregate (they have no percentiles).
    const bool aggregated = std::any_of(ops.begin(), ops.end(),
                                        [](const trace::OpStat& op) { return op.aggregated > 0; });
    QStringList headers{tr("Op"),   tr("Count"), tr("Total"), tr("Self"),
                        tr("Mean"), tr("p50"),   tr("p95")};
    if (aggregated) headers << tr("Aggregated");
    // Slices that never ended: beside the figures they are left out of.
    const bool unended =
        std::any_of(ops.begin(), ops.end(), [](const trace::OpStat& op) { return op.unended > 0; });
    if (unended) headers << tr("Did not end");
    opModel_->setColumnCount(int(headers.size()));
    opModel_->setHorizontalHeaderLabels(headers);
    for (const trace::OpStat& op : ops) {
        auto* name = new QStandardItem(QString::fromStdString(op.name));
        name->setData(QString::fromStdString(op.name), kSortRole);
        name->setEditable(false);
        name->setForeground(traceNameColor(op.name).darker(170));
        const bool timed = op.count > op.aggregated;
        if (op.unended > 0)
            name->setToolTip(
                tr("%n slice(s) of this op never ended; they are drawn to the end of "
                   "the trace and left out of count, total, mean and percentiles",
                   nullptr, int(op.unended)));
        auto percentile = [&](int64_t v) {
            return timed ? numberItem(double(v), format::nanoseconds(double(v)))
                         : numberItem(-1, QStringLiteral("–"));
        };
        QList<QStandardItem*> row{
            name,
            numberItem(double(op.count), QString::number(op.count)),
            numberItem(double(op.total), format::nanoseconds(double(op.total))),
            numberItem(double(op.self), format::nanoseconds(double(op.self))),
            numberItem(op.mean(), format::nanoseconds(op.mean())),
            percentile(op.p50),
            percentile(op.p95)};
        if (aggregated)
            row.append(numberItem(double(op.aggregated), QString::number(op.aggregated)));
        if (unended)
            row.append(numberItem(double(op.unended),
                                  op.unended ? QString::number(op.unended) : QString()));
        opModel_->appendRow(row);
    }
    opTable_->sortByColumn(2, Qt::DescendingOrder);
    opTable_->resizeColumnsToContents();
}

void TraceView::selectOp(const QString& name) {
    findEdit_->setText(name);
    // The op alone, not every name containing it (the find field's highlight).
    highlight_->names = {name.toStdString()};
    timeline_->viewport()->update();
    findNext(name, true);
}

void TraceView::findNext(const QString& needle, bool forward) {
    if (!source_ || needle.isEmpty()) return;
    const int64_t origin = source_->origin();
    double after = forward ? timeline_->window().start - 1 : timeline_->window().end + 1;
    if (const auto& selection = timeline_->selection()) after = selection->item.start;
    const int64_t afterNs = origin + int64_t(std::llround(after));
    TraceSourcePtr source = source_;
    const std::string text = needle.toStdString();
    findJob_.start(
        [source, text, afterNs, forward] {
            return source->query(
                [&](const trace::TraceStore& store) { return store.find(text, afterNs, forward); });
        },
        [this, origin](std::optional<trace::FoundSlice> found) {
            if (!found) {
                status_->setText(tr("No more matches"));
                emit foundSlice(false);
                return;
            }
            const TimelineTrack* track = binding_->trackFor(found->track);
            trace::SliceItem slice = found->slice;
            slice.start -= origin;
            const TimelineItem item = TraceSliceTrack::itemOf(slice);
            if (!track) {
                status_->setText(tr("Match on a hidden track"));
                emit foundSlice(false);
                return;
            }
            status_->setText(QString::fromStdString(source_->text(slice.name)) + " @ " +
                             format::nanoseconds(item.start));
            // Its arguments are shown as for a clicked slice (the match was not hit).
            if (const auto* slices = dynamic_cast<const TraceSliceTrack*>(track))
                slices->noteSelected(slice);
            revealSlice(track, item);
            emit foundSlice(true);
        });
}

void TraceView::selectOpRow(const std::string& name) {
    const QList<QStandardItem*> found =
        opModel_->findItems(QString::fromStdString(name), Qt::MatchExactly, 0);
    if (found.isEmpty()) return;
    const QModelIndex index = opProxy_->mapFromSource(found.front()->index());
    syncingOpTable_ = true;
    opTable_->selectionModel()->setCurrentIndex(
        index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    opTable_->scrollTo(index);
    syncingOpTable_ = false;
}

void TraceView::showTrackDetails(int64_t trackId) {
    if (!source_) return;
    const trace::TrackRow* row = source_->store().track(trackId);
    if (!row) return;
    argsJob_.supersede();  // late arguments of an earlier selection are dropped
    DetailFields fields;
    if (row->kind == trace::TrackKind::Process) {
        fields = source_->processDetails(*row);
    } else {
        fields.append({"Track", QString::fromStdString(row->name)});
        fields.append({"Kind", QString::fromLatin1(trace::trackKindName(row->kind))});
        if (!row->pid.empty()) fields.append({"pid", QString::fromStdString(row->pid)});
        if (!row->tid.empty()) fields.append({"tid", QString::fromStdString(row->tid)});
        if (row->slices) fields.append({"Slices", QString::number(row->slices)});
        if (row->instants) fields.append({"Instants", QString::number(row->instants)});
        if (row->samples) fields.append({"Samples", QString::number(row->samples)});
        if (row->slices + row->instants + row->samples > 0) {
            fields.append({"From", format::nanoseconds(double(row->start - source_->origin()))});
            fields.append({"To", format::nanoseconds(double(row->end - source_->origin()))});
        }
        if (const trace::TrackRow* process = source_->store().track(row->parent))
            fields += source_->processDetails(*process);
    }
    QString html = "<table>";
    for (const auto& [field, value] : fields)
        html +=
            "<tr><td><b>" + htmlEscape(field) + "</b></td><td>" + htmlEscape(value) + "</td></tr>";
    details_->setHtml(html + "</table>");
    tabs_->setCurrentWidget(details_);
    summarizeTrack(trackId);  // its slices by name in the Summary tab (a CUDA API summary)
}

QString TraceView::detailsText() const {
    return details_->toPlainText();
}

void TraceView::showSelectionDetails() {
    const auto& selection = timeline_->selection();
    argsJob_.supersede();  // late arguments of an earlier selection are dropped
    if (!selection || !selection->track) {
        details_->clear();
        return;
    }
    // The op table follows the timeline: the selected slice's op becomes the current row.
    if (const auto* slices = dynamic_cast<const TraceSliceTrack*>(selection->track);
        slices && selection->item.id >= 0)
        selectOpRow(source_->text(uint32_t(selection->item.id)));
    QString html = "<table>";
    for (const auto& [field, value] : selection->track->details(selection->item))
        html +=
            "<tr><td><b>" + htmlEscape(field) + "</b></td><td>" + htmlEscape(value) + "</td></tr>";
    html += "</table>" + flowsHtml(*selection);
    details_->setHtml(html);
    tabs_->setCurrentWidget(details_);
    if (selection->track->isHeader())
        if (const auto* header = dynamic_cast<const TraceProcessHeaderTrack*>(selection->track))
            summarizeTrack(header->trackId());
    const auto* slices = dynamic_cast<const TraceSliceTrack*>(selection->track);
    const uint64_t argsId = slices ? slices->argsOf(selection->item) : 0;
    if (argsId == 0) return;
    // Arguments live in compressed chunks: read them on a worker.
    TraceSourcePtr source = source_;
    argsJob_.start(
        [source, argsId] {
            return source->query([&](const trace::TraceStore& s) { return s.args(argsId); });
        },
        [this, html](std::string args) {
            const QByteArray json = QByteArray::fromStdString(args);
            const QJsonDocument doc = QJsonDocument::fromJson(json);
            // A table of keys, not raw JSON one array element per line (issue 32 #13).
            details_->setHtml(html + "<h4>Arguments</h4>" +
                              (doc.isObject()
                                   ? argumentsHtml(doc.object())
                                   : "<pre>" + htmlEscape(QString::fromUtf8(json)) + "</pre>"));
        });
}

QString TraceView::overviewHtml() const {
    if (!source_) return {};
    const trace::TraceStore& store = source_->store();
    uint64_t slices = 0, instants = 0, samples = 0;
    std::vector<const trace::TrackRow*> busiest;
    for (const trace::TrackRow& t : store.tracks()) {
        slices += t.slices;
        instants += t.instants;
        samples += t.samples;
        if (t.slices > 0) busiest.push_back(&t);
    }
    std::sort(busiest.begin(), busiest.end(), [](const auto* a, const auto* b) {
        return a->slices != b->slices ? a->slices > b->slices : a->id < b->id;
    });
    QString html = QStringLiteral("<h3>Time range</h3><p>%1 (%2 → %3 ns)</p>")
                       .arg(format::nanoseconds(double(store.end() - store.start())))
                       .arg(store.start())
                       .arg(store.end());
    // The panels' sections (the run, steps, transfers), in their overview order.
    std::vector<const TracePanel*> sections;
    for (const auto& panel : panels_) sections.push_back(panel.get());
    std::stable_sort(sections.begin(), sections.end(), [](const auto* a, const auto* b) {
        return a->overviewOrder() < b->overviewOrder();
    });
    for (const TracePanel* panel : sections) html += panel->overviewHtml();
    // Devices (XProf planes with a device type) and what the importer warned about.
    QString devices;
    for (const auto& p : source_->metadata().value("plane_details").toArray()) {
        const QJsonObject plane = p.toObject();
        const QJsonObject stats = plane.value("stats").toObject();
        if (!stats.contains("device_type_string")) continue;
        QString line = htmlEscape(plane.value("name").toString()) + ": " +
                       htmlEscape(stats.value("device_type_string").toString());
        if (stats.contains("peak_teraflops_per_second"))
            line += QStringLiteral(", %1 TFLOP/s peak")
                        .arg(stats.value("peak_teraflops_per_second").toDouble(), 0, 'g', 6);
        if (stats.contains("peak_hbm_bw_gigabytes_per_second"))
            line += QStringLiteral(", %1 GB/s HBM")
                        .arg(stats.value("peak_hbm_bw_gigabytes_per_second").toDouble(), 0, 'f', 0);
        devices += "<li>" + line + "</li>";
    }
    if (!devices.isEmpty()) html += "<h3>Devices</h3><ul>" + devices + "</ul>";
    QString warnings;
    for (const auto& w : source_->metadata().value("warnings").toArray())
        warnings += "<li>" + htmlEscape(w.toString()) + "</li>";
    if (!warnings.isEmpty()) html += "<h3>Import notes</h3><ul>" + warnings + "</ul>";
    html += QStringLiteral("<p>%1 tracks, %2 slices, %3 instants, %4 counter samples, %5 flows</p>")
                .arg(store.tracks().size())
                .arg(slices)
                .arg(instants)
                .arg(samples)
                .arg(source_->metadata().value("trace").toObject().value("flows").toInteger());
    html +=
        "<h3>Top ops</h3><table cellspacing=0 cellpadding=3><tr><th "
        "align=left>Op</th><th>Count</th><th>Total</th></tr>";
    for (size_t i = 0; i < ops_.size() && i < 10; ++i)
        html += QStringLiteral("<tr><td>%1</td><td align=right>%2</td><td align=right>%3</td></tr>")
                    .arg(htmlEscape(QString::fromStdString(ops_[i].name)))
                    .arg(ops_[i].count)
                    .arg(format::nanoseconds(double(ops_[i].total)));
    html +=
        "</table><h3>Busiest tracks</h3><table cellspacing=0 cellpadding=3><tr><th "
        "align=left>Track</th><th>Slices</th></tr>";
    for (size_t i = 0; i < busiest.size() && i < 10; ++i)
        html += QStringLiteral("<tr><td>%1</td><td align=right>%2</td></tr>")
                    .arg(htmlEscape(QString::fromStdString(busiest[i]->name)))
                    .arg(busiest[i]->slices);
    return html + "</table>";
}

QWidget* createTraceView(const ProfileInfo& profile, const QString& workspacePath) {
    auto* view = new TraceView;
    view->open(workspacePath.toStdString(), profile.id);
    return view;
}

}  // namespace stallscope
