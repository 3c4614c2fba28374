#include "views/trace/trace_view.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
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

#include "core/trace/hosts_registration.h"
#include "core/trace/step_registration.h"
#include "core/transfers/transfers_registration.h"
#include "views/common/format.h"
#include "views/common/table_kit.h"
#include "views/common/timeline_view.h"
#include "views/shell/elided_label.h"
#include "views/trace/hosts_panel.h"
#include "views/trace/step_tracks.h"
#include "views/trace/steps_panel.h"
#include "views/trace/transfer_tracks.h"

namespace stallscope {

namespace {

const char* const kFlowDisplayKey = "trace/flowDisplay";

constexpr int kTrackIdRole = Qt::UserRole + 1;
using tablekit::kSortRole;

struct Opened {
    TraceSourcePtr source;
    std::vector<trace::OpStat> ops;
};

constexpr size_t kOverviewBins = 1024;

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
      argsJob_(this,
               [this](const QString& error) {
                   details_->append(tr("Cannot read the arguments: %1").arg(error));
               }),
      stepsJob_(this,
                [this](const QString& error) {
                    stepsPanel_->showMessage(tr("No step analysis: %1").arg(error));
                }),
      transfersJob_(this,
                    [this](const QString& error) {
                        status_->setText(tr("No transfer analysis: %1").arg(error));
                    }),
      hostsJob_(this, [this](const QString& error) {
          status_->setText(tr("No analysis across hosts: %1").arg(error));
      }) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);

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
    stepPicker_ = new QComboBox;
    stepPicker_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    stepPicker_->setToolTip(tr("Zoom to a step ([ and ] go to the previous and next step)"));
    stepPicker_->setEnabled(false);
    stepPicker_->addItem(tr("Steps…"));
    findBar->addWidget(stepPicker_);
    findBar->addWidget(new QLabel(tr("Flows:")));
    flowDisplay_ = new QComboBox;
    flowDisplay_->addItem(tr("Selected slice"), int(FlowDisplay::Selected));
    flowDisplay_->addItem(tr("All"), int(FlowDisplay::All));
    flowDisplay_->addItem(tr("None"), int(FlowDisplay::None));
    flowDisplay_->setToolTip(
        tr("Flow arrows of the selected slice and the slices nested in it (select a step to see "
           "its launches), of every slice, or none"));
    flowDisplay_->setCurrentIndex(
        std::clamp(QSettings().value(kFlowDisplayKey, 0).toInt(), 0, flowDisplay_->count() - 1));
    findBar->addWidget(flowDisplay_);
    layout->addLayout(findBar);
    connect(flowDisplay_, &QComboBox::activated, this, [this](int index) {
        QSettings().setValue(kFlowDisplayKey, index);
        if (binding_) binding_->setFlowDisplay(FlowDisplay(flowDisplay_->itemData(index).toInt()));
    });
    connect(findEdit_, &QLineEdit::returnPressed, this,
            [this] { findNext(findEdit_->text(), true); });
    connect(next, &QPushButton::clicked, this, [this] { findNext(findEdit_->text(), true); });
    connect(previous, &QPushButton::clicked, this, [this] { findNext(findEdit_->text(), false); });

    auto* vertical = new QSplitter(Qt::Vertical);
    auto* horizontal = new QSplitter(Qt::Horizontal);
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
    connect(tree_, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem* item) {
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

    timeline_ = new TimelineView;
    horizontal->addWidget(treePane);
    horizontal->addWidget(timeline_);
    horizontal->setStretchFactor(1, 1);
    horizontal->setSizes({220, 900});

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
    transferCards_ = new CardStrip;
    transferCards_->hide();
    auto* overviewPage = new QWidget;
    auto* overviewLayout = new QVBoxLayout(overviewPage);
    overviewLayout->setContentsMargins(0, 0, 0, 0);
    overviewLayout->setSpacing(0);
    overviewLayout->addWidget(transferCards_);
    overviewLayout->addWidget(overview_, 1);
    stepsPanel_ = new StepsPanel;
    tabs_->addTab(overviewPage, tr("Overview"));
    tabs_->addTab(stepsPanel_, tr("Steps"));
    tabs_->addTab(opTable_, tr("Ops"));
    tabs_->addTab(details_, tr("Details"));
    vertical->addWidget(horizontal);
    vertical->addWidget(tabs_);
    vertical->setStretchFactor(0, 3);
    vertical->setStretchFactor(1, 1);
    layout->addWidget(vertical, 1);

    connect(timeline_, &TimelineView::selectionChanged, this, &TraceView::showSelectionDetails);
    connect(stepPicker_, &QComboBox::activated, this, [this](int index) {
        if (index > 0) showStep(index - 1);
    });
    for (const auto& [key, delta] :
         {std::pair{Qt::Key_BracketLeft, -1}, std::pair{Qt::Key_BracketRight, 1}}) {
        auto* shortcut = new QShortcut(QKeySequence(key), timeline_);
        shortcut->setContext(Qt::WidgetWithChildrenShortcut);
        connect(shortcut, &QShortcut::activated, this, [this, delta = delta] {
            if (!steps_ || steps_->steps.empty()) return;
            const int current = stepPicker_->currentIndex() - 1;
            const int next =
                std::clamp(current < 0 ? 0 : current + delta, 0, int(steps_->steps.size()) - 1);
            showStep(next);
        });
    }
    connect(stepsPanel_, &StepsPanel::stepActivated, this, &TraceView::showStep);
    connect(stepsPanel_, &StepsPanel::rangeActivated, this,
            [this](int64_t start, int64_t end, int64_t) { showRange(start, end); });
    connect(stepsPanel_, &StepsPanel::recommendationActivated, this,
            &TraceView::showRecommendation);
    connect(stepsPanel_, &StepsPanel::deviceChanged, this, &TraceView::setStepDevice);
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
            loadSteps(workspacePath, profileId);
            loadTransfers(workspacePath, profileId);
            if (trace::isRunProfile(source_->metadata())) loadHosts(workspacePath, profileId);
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
    binding_ = std::make_unique<TraceTimelineBinding>(*timeline_, source_, highlight_);
    binding_->setFlowDisplay(FlowDisplay(flowDisplay_->currentData().toInt()));
    // Analyses of another profile do not apply; open() loads this one's.
    steps_.reset();
    transfers_.reset();
    hosts_.reset();
    if (stepBoundaries_) timeline_->removeOverlay(stepBoundaries_.get());
    stepBoundaries_.reset();
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
    highlight_->name = name.toStdString();
    timeline_->viewport()->update();
    findEdit_->setText(name);
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
            const TimeRange window = timeline_->window();
            if (item.end - item.start > window.length())
                timeline_->fitRange({item.start, item.end});
            else if (!window.contains(item.start) || !window.contains(item.end))
                timeline_->setWindow({(item.start + item.end - window.length()) / 2,
                                      (item.start + item.end + window.length()) / 2});
            timeline_->select(track, item);
            timeline_->ensureTrackVisible(track, TraceSliceTrack::rowCenter(item.row));
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
    html += "</table>";
    details_->setHtml(html);
    tabs_->setCurrentWidget(details_);
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
            const QString text = doc.isNull()
                                     ? QString::fromUtf8(json)
                                     : QString::fromUtf8(doc.toJson(QJsonDocument::Indented));
            details_->setHtml(html + "<h4>Arguments</h4><pre>" + htmlEscape(text) + "</pre>");
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
    // A multi-host run: how its clocks were aligned and which host is slow where.
    if (hosts_ && !hosts_->hosts.empty()) {
        const QJsonObject run = source_->metadata().value(trace::kRunMetadataKey).toObject();
        html += tr("<h3>Run</h3><p>%n host(s), clocks aligned by %1", nullptr,
                   int(hosts_->hosts.size()))
                    .arg(htmlEscape(run.value("alignment").toString()));
        const trace::Straggler* worst = nullptr;
        for (const trace::Straggler& st : hosts_->stragglers)
            if (!worst || st.excessPct > worst->excessPct) worst = &st;
        if (worst)
            html += tr("; slowest: %1 in %2, %3 over the step's median")
                        .arg(htmlEscape(QString::fromStdString(worst->hostName)),
                             htmlEscape(QString::fromStdString(worst->stepName)),
                             format::signedPercent(worst->excessPct));
        if (!hosts_->variableOps.empty())
            html += tr("; the op varying most across hosts: %1")
                        .arg(htmlEscape(QString::fromStdString(hosts_->variableOps.front().name)));
        html += tr(" (Hosts tab)</p>");
    }
    // Steps first: where the time goes and what to change is what people open a trace for.
    if (steps_) {
        html += "<h3>Steps</h3><p>" + htmlEscape(stepOverviewText(*steps_)) + "</p>";
        int64_t commTotal = 0, commHidden = 0, copyTotal = 0, copyHidden = 0;
        for (const trace::DeviceStepBreakdown& b : steps_->breakdown) {
            commTotal += b.communicationTotal;
            commHidden += b.communicationHidden;
            copyTotal += b.memcpyTotal;
            copyHidden += b.memcpyHidden;
        }
        const auto overlap = [](const QString& what, int64_t total, int64_t hidden) {
            return tr("<p>%1: %2 in all, %3 hidden behind compute (%4), %5 exposed</p>")
                .arg(what, format::nanoseconds(double(total)), format::nanoseconds(double(hidden)),
                     format::percentOf(double(hidden), double(total)),
                     format::nanoseconds(double(total - hidden)));
        };
        if (commTotal > 0) html += overlap(tr("Communication"), commTotal, commHidden);
        if (copyTotal > 0) html += overlap(tr("Memory copies"), copyTotal, copyHidden);
        if (steps_->launchLatency.count > 0)
            html += tr("<p>Kernel launch latency (launch → start): p50 %1, p95 %2 over %3 "
                       "kernels</p>")
                        .arg(format::nanoseconds(double(steps_->launchLatency.p50)),
                             format::nanoseconds(double(steps_->launchLatency.p95)),
                             format::count(double(steps_->launchLatency.count)));
        if (!steps_->recommendations.empty()) {
            html += "<h3>Recommendations</h3><ol>";
            for (const trace::StepRecommendation& r : steps_->recommendations)
                html += QStringLiteral("<li><b>%1</b> (up to %2 % of step time): %3</li>")
                            .arg(htmlEscape(QString::fromStdString(r.kind)))
                            .arg(r.sharePct, 0, 'f', r.sharePct < 10 ? 1 : 0)
                            .arg(htmlEscape(QString::fromStdString(r.text)));
            html += "</ol>";
        }
    }
    html += transfersHtml();
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
                .arg(source_->flows().size());
    html += "<h3>Top ops</h3><table><tr><th align=left>Op</th><th>Count</th><th>Total</th></tr>";
    for (size_t i = 0; i < ops_.size() && i < 10; ++i)
        html += QStringLiteral("<tr><td>%1</td><td align=right>%2</td><td align=right>%3</td></tr>")
                    .arg(htmlEscape(QString::fromStdString(ops_[i].name)))
                    .arg(ops_[i].count)
                    .arg(format::nanoseconds(double(ops_[i].total)));
    html +=
        "</table><h3>Busiest tracks</h3><table><tr><th align=left>Track</th><th>Slices</th></tr>";
    for (size_t i = 0; i < busiest.size() && i < 10; ++i)
        html += QStringLiteral("<tr><td>%1</td><td align=right>%2</td></tr>")
                    .arg(htmlEscape(QString::fromStdString(busiest[i]->name)))
                    .arg(busiest[i]->slices);
    return html + "</table>";
}

// ---- steps -------------------------------------------------------------------------------------

std::unique_ptr<Workspace> openForAnalyses(const std::string& workspacePath) {
    try {
        return Workspace::open(workspacePath);  // stores a first analysis
    } catch (const std::exception&) {
        return Workspace::open(workspacePath, Workspace::Mode::ReadOnly);  // computes only
    }
}

void TraceView::loadSteps(const std::string& workspacePath, int64_t profileId) {
    stepsPanel_->showMessage(tr("Analysing steps…"));
    // Stored with the profile after the first analysis: reopening reads it back.
    stepsJob_.start(
        [workspacePath, profileId] {
            const std::unique_ptr<Workspace> workspace = openForAnalyses(workspacePath);
            return std::make_shared<const trace::StepAnalysis>(
                trace::loadOrAnalyzeSteps(*workspace, profileId));
        },
        [this](std::shared_ptr<const trace::StepAnalysis> analysis) {
            setStepAnalysis(std::move(analysis));
        });
}

void TraceView::setStepAnalysis(std::shared_ptr<const trace::StepAnalysis> analysis) {
    steps_ = std::move(analysis);
    if (stepBoundaries_) timeline_->removeOverlay(stepBoundaries_.get());
    stepBoundaries_.reset();
    stepPicker_->clear();
    stepPicker_->addItem(tr("Steps…"));
    stepPicker_->setEnabled(steps_ && !steps_->steps.empty());
    if (!steps_ || !source_) return;
    for (const trace::Step& s : steps_->steps)
        stepPicker_->addItem(tr("Step %1 · %2")
                                 .arg(s.index)
                                 .arg(format::nanoseconds(double(steps_->stepTime(s.index)))));
    stepsPanel_->setAnalysis(steps_);
    if (steps_->source != trace::StepSource::WholeTrace) {
        stepBoundaries_ = std::make_shared<StepBoundaryOverlay>(steps_, source_->origin());
        timeline_->addOverlay(stepBoundaries_);
    }
    setStepDevice(stepsPanel_->device());
    overview_->setHtml(overviewHtml());
    emit stepsReady();
    emit suggestionsReady(suggestionItems());
}

void TraceView::setStepDevice(int device) {
    stepDevice_ = device;
    updateLeadingTracks();
}

void TraceView::updateLeadingTracks() {
    if (!binding_ || !source_) return;
    std::vector<std::shared_ptr<TimelineTrack>> leading;
    if (steps_ && !steps_->devices.empty())
        leading.push_back(std::make_shared<StepStripTrack>(
            steps_, source_->origin(),
            std::clamp(stepDevice_, 0, int(steps_->devices.size()) - 1)));
    if (transfers_)
        for (auto& track : makeTransferTracks(transfers_, source_->origin()))
            leading.push_back(std::move(track));
    binding_->setLeadingTracks(std::move(leading));
}

void TraceView::loadTransfers(const std::string& workspacePath, int64_t profileId) {
    // Derived at import for all but the largest XProf profiles; those derive here once.
    transfersJob_.start(
        [workspacePath, profileId] {
            const std::unique_ptr<Workspace> workspace = openForAnalyses(workspacePath);
            return std::make_shared<const transfers::Analysis>(
                transfers::ofProfile(*workspace, profileId));
        },
        [this](std::shared_ptr<const transfers::Analysis> analysis) {
            setTransferAnalysis(std::move(analysis));
        });
}

void TraceView::setTransferAnalysis(std::shared_ptr<const transfers::Analysis> analysis) {
    QStringList unmatched;
    if (analysis)
        for (const auto& [key, count] : analysis->unmatched)
            unmatched << QString::fromStdString(key).replace('_', ' ') + " " +
                             format::count(double(count));
    transfersUnmatched_ = unmatched.join(", ");
    transfers_ = analysis && !analysis->transfers.empty() ? std::move(analysis) : nullptr;
    transferCards_->setCards(transfers_ ? transferCardsOf(*transfers_) : std::vector<Card>{});
    updateLeadingTracks();
    overview_->setHtml(overviewHtml());
    emit suggestionsReady(suggestionItems());
}

void TraceView::showTransfer(uint32_t id) {
    if (!transfers_ || id >= transfers_->transfers.size() || !source_) return;
    const transfers::Transfer& t = transfers_->transfers[id];
    const int64_t end = std::max({t.complete, t.waitEnd, t.issue});
    showRange(std::min(t.backtail, t.issue), end);
    for (const auto& track : timeline_->tracks())
        if (const auto* link = dynamic_cast<const TransferLinkTrack*>(track.get());
            link && link->link() == t.link) {
            TimelineItem item;
            item.id = t.id;
            item.start = double(t.issue - source_->origin());
            item.end = double(end - source_->origin());
            item.row = link->rowOf(t.id);
            timeline_->select(link, item);
        }
}

void TraceView::loadHosts(const std::string& workspacePath, int64_t profileId) {
    hostsJob_.start(
        [workspacePath, profileId] {
            const std::unique_ptr<Workspace> workspace = openForAnalyses(workspacePath);
            return std::make_shared<const trace::HostsAnalysis>(
                trace::loadOrAnalyzeHosts(*workspace, profileId));
        },
        [this](std::shared_ptr<const trace::HostsAnalysis> analysis) {
            setHostsAnalysis(std::move(analysis));
        });
}

void TraceView::setHostsAnalysis(std::shared_ptr<const trace::HostsAnalysis> analysis) {
    hosts_ = std::move(analysis);
    if (!hostsPanel_) {
        hostsPanel_ = new HostsPanel;
        tabs_->insertTab(2, hostsPanel_, tr("Hosts"));
        connect(hostsPanel_, &HostsPanel::hostStepActivated, this, &TraceView::showHostStep);
    }
    hostsPanel_->setAnalysis(hosts_);
    overview_->setHtml(overviewHtml());
    applyPendingHostStep();
}

void TraceView::revealHostStep(const QString& host, const QString& step, int stepIndex) {
    pendingHostStep_ = HostStepTarget{host, step, stepIndex};
    applyPendingHostStep();
}

void TraceView::applyPendingHostStep() {
    if (!pendingHostStep_ || !hosts_ || !source_) return;
    const HostStepTarget target = *pendingHostStep_;
    pendingHostStep_.reset();
    int host = -1;
    for (size_t h = 0; h < hosts_->hosts.size(); ++h)
        if (QString::fromStdString(hosts_->hosts[h].host.name) == target.host) host = int(h);
    int step = target.stepIndex;
    for (size_t i = 0; i < hosts_->steps.size(); ++i)
        if (hosts_->matchedByName && QString::fromStdString(hosts_->steps[i]) == target.step)
            step = int(i);
    if (tabs_->indexOf(hostsPanel_) >= 0) tabs_->setCurrentWidget(hostsPanel_);
    showHostStep(host, step);
}

void TraceView::showHostStep(int host, int step) {
    if (!hosts_ || host < 0 || size_t(host) >= hosts_->hosts.size() || step < 0 ||
        size_t(step) >= hosts_->steps.size())
        return;
    const trace::RunHost& where = hosts_->hosts[size_t(host)].host;
    if (where.track < 0 && !where.shard.empty()) {
        emit hostTimelineRequested(QString::fromStdString(where.shard), where.shardProfile,
                                   QString::fromStdString(where.name),
                                   QString::fromStdString(hosts_->steps[size_t(step)]), step);
        return;
    }
    const int index = hosts_->stepOfHost[size_t(step)][size_t(host)];
    if (index < 0) return;
    const trace::HostStep& s = hosts_->hosts[size_t(host)].steps[size_t(index)];
    showRange(s.start, s.start + s.duration);
    // The host's own tracks: its first shown track (the host track has no slices itself).
    const int64_t hostTrack = hosts_->hosts[size_t(host)].host.track;
    if (!binding_ || hostTrack < 0) return;
    for (const int64_t id : shownTrackIds()) {
        int64_t ancestor = id;
        while (ancestor >= 0 && ancestor != hostTrack) {
            const trace::TrackRow* row = source_->store().track(ancestor);
            ancestor = row ? row->parent : -1;
        }
        if (ancestor == hostTrack) {
            if (const TimelineTrack* track = binding_->trackFor(id))
                timeline_->ensureTrackVisible(track);
            break;
        }
    }
}

void TraceView::showSuggestion(int index) {
    const int transferCount = transfers_ ? int(transfers_->suggestions.size()) : 0;
    if (index < transferCount) {
        const transfers::Suggestion& s = transfers_->suggestions[size_t(index)];
        if (!s.transfers.empty()) showTransfer(s.transfers.front());
        status_->setText(QString::fromStdString(s.text));
        return;
    }
    showRecommendation(index - transferCount);
}

std::vector<Card> TraceView::transferCardsOf(const transfers::Analysis& a) {
    int64_t slack = 0;
    size_t late = 0;
    for (const transfers::Transfer& t : a.transfers) {
        slack += t.slack;
        if (t.slack > 0) ++late;
    }
    const transfers::Link* busiest = nullptr;
    for (const transfers::Link& l : a.links)
        if (!busiest || l.busyNs > busiest->busyNs) busiest = &l;
    const double total = double(a.totalNs), stall = double(a.stallNs);
    std::vector<Card> cards{
        {tr("Run time"), format::nanoseconds(total),
         tr("%1 runs").arg(format::count(double(a.modules.size()))), QColor(60, 60, 60)},
        {tr("Stalled"), format::nanoseconds(stall),
         tr("%1 at waits").arg(format::percentOf(stall, total)), QColor(215, 60, 50)},
        {tr("Base latency"), format::nanoseconds(double(a.baseStallNs)),
         tr("%1 of stalls").arg(format::percentOf(double(a.baseStallNs), stall)),
         QColor(250, 205, 110)},
        {tr("Transfer"), format::nanoseconds(double(a.transferStallNs)),
         tr("%1 of stalls").arg(format::percentOf(double(a.transferStallNs), stall)),
         QColor(60, 120, 190)},
        {tr("Slack"), format::nanoseconds(double(slack)),
         late == 0 ? tr("no wait is late")
                   : tr("%1 of %2 waits late")
                         .arg(format::count(double(late)))
                         .arg(format::count(double(a.transfers.size()))),
         QColor(120, 170, 90)}};
    // A link's busy share of the runs on its device (links are per device).
    double deviceTime = 0;
    if (busiest)
        for (const transfers::ModuleRun& m : a.modules)
            if (m.device == busiest->device) deviceTime += double(m.measuredNs());
    if (busiest && busiest->busyNs > 0 && deviceTime > 0)
        cards.push_back(
            {tr("Busiest link"), format::percentOf(double(busiest->busyNs), deviceTime),
             tr("%1 · %2 GB/s%3 · %4")
                 .arg(QString::fromStdString(busiest->name))
                 .arg(busiest->achievedBytesPerNs(), 0, 'f', 1)
                 .arg(busiest->peakBytesPerNs > 0
                          ? tr(" (%1 % of peak)").arg(100 * busiest->peakFraction(), 0, 'f', 0)
                          : QString(),
                      QString::fromStdString(busiest->device)),
             QColor(60, 120, 190)});
    return cards;
}

QString TraceView::transfersHtml() const {
    const QString unmatched =
        transfersUnmatched_.isEmpty()
            ? QString()
            : tr("<p>Not made into transfers (as <tt>dma --json</tt> counts them): %1</p>")
                  .arg(htmlEscape(transfersUnmatched_));
    if (!transfers_)
        return unmatched.isEmpty()
                   ? QString()
                   : tr("<h3>Transfers</h3><p>No async transfer found.</p>") + unmatched;
    const transfers::Analysis& a = *transfers_;
    uint64_t bytes = 0;
    int64_t slack = 0;
    for (const transfers::Transfer& t : a.transfers) {
        bytes += t.bytes;
        slack += t.slack;
    }
    QString html =
        tr("<h3>Transfers</h3><p>%1 async transfers (%2), %3 in %4 module runs; "
           "stalled at the waits %5 of %6 (%7): base latency %8, transfer %9; "
           "slack %10. Model error %11 % (re-simulating each run unchanged).</p>")
            .arg(format::count(double(a.transfers.size())), QString::fromStdString(a.source),
                 format::dataSize(int64_t(bytes)), format::count(double(a.modules.size())),
                 format::nanoseconds(double(a.stallNs)), format::nanoseconds(double(a.totalNs)),
                 format::percentOf(double(a.stallNs), double(a.totalNs)),
                 format::nanoseconds(double(a.baseStallNs)),
                 format::nanoseconds(double(a.transferStallNs)), format::nanoseconds(double(slack)))
            .arg(a.modelErrorPct, 0, 'f', 1);
    html +=
        tr("<table><tr><th align=left>Link</th><th>Transfers</th><th>Bytes</th>"
           "<th>Achieved</th><th>Peak</th><th>Busy</th></tr>");
    for (const transfers::Link& l : a.links) {
        if (l.transfers == 0) continue;
        html += QStringLiteral(
                    "<tr><td>%1 (%2)</td><td align=right>%3</td><td align=right>%4</td>"
                    "<td align=right>%5 GB/s</td><td align=right>%6</td>"
                    "<td align=right>%7</td></tr>")
                    .arg(htmlEscape(QString::fromStdString(l.name)),
                         htmlEscape(QString::fromStdString(l.device)),
                         format::count(double(l.transfers)), format::dataSize(int64_t(l.bytes)))
                    .arg(l.achievedBytesPerNs(), 0, 'f', 2)
                    .arg(l.peakBytesPerNs > 0 ? tr("%1 GB/s (%2 %)")
                                                    .arg(l.peakBytesPerNs, 0, 'f', 0)
                                                    .arg(100 * l.peakFraction(), 0, 'f', 1)
                                              : tr("not stated"))
                    .arg(format::nanoseconds(double(l.busyNs)));
    }
    return html + "</table>" + unmatched;
}

void TraceView::showRange(int64_t start, int64_t end) {
    if (!source_) return;
    const double from = double(start - source_->origin()), to = double(end - source_->origin());
    const double margin = std::max((to - from) * 0.03, 1.0);
    timeline_->setWindow({from - margin, to + margin});
}

void TraceView::showStep(int index) {
    if (!steps_ || index < 0 || size_t(index) >= steps_->steps.size()) return;
    const trace::Step& s = steps_->steps[size_t(index)];
    stepPicker_->setCurrentIndex(index + 1);
    showRange(s.start, s.end);
}

void TraceView::showRecommendation(int index) {
    if (!steps_ || index < 0 || size_t(index) >= steps_->recommendations.size()) return;
    const trace::StepRecommendation& r = steps_->recommendations[size_t(index)];
    if (r.end > r.start) showRange(r.start, r.end);
    status_->setText(QString::fromStdString(r.text));
}

namespace {

// A suggestion's evidence as "key=value" pairs: numbers to 6 digits, lists (a run's hosts)
// by their first items and how many more.
QString evidenceText(const QJsonObject& evidence) {
    const auto valueText = [](const QJsonValue& v) -> QString {
        if (v.isDouble()) return QString::number(v.toDouble(), 'g', 6);
        if (!v.isArray()) return v.toVariant().toString();
        const QJsonArray list = v.toArray();
        QStringList items;
        for (qsizetype i = 0; i < list.size() && i < 4; ++i)
            items << (list[i].isDouble() ? QString::number(list[i].toDouble(), 'g', 6)
                                         : list[i].toVariant().toString());
        if (list.size() > 4) items << QObject::tr("%1 more").arg(list.size() - 4);
        return "[" + items.join(QStringLiteral(", ")) + "]";
    };
    QStringList pairs;
    for (auto it = evidence.begin(); it != evidence.end(); ++it)
        pairs << QStringLiteral("%1=%2").arg(it.key(), valueText(it.value()));
    return pairs.join(QStringLiteral(", "));
}

}  // namespace

QList<SuggestionItem> TraceView::suggestionItems() const {
    QList<SuggestionItem> items;
    if (transfers_)
        for (const transfers::Suggestion& s : transfers_->suggestions) {
            SuggestionItem item;
            item.kind = QString::fromStdString(s.kind);
            item.text =
                tr("%1 (re-simulated: saves %2 over %3 runs)")
                    .arg(QString::fromStdString(s.text), format::nanoseconds(double(s.savingNs)))
                    .arg(s.runs);
            for (uint32_t id : s.transfers) item.dmas.append(id);
            item.evidence = evidenceText(s.evidence);
            items.append(item);
        }
    if (!steps_) return items;
    for (const trace::StepRecommendation& r : steps_->recommendations) {
        SuggestionItem item;
        item.kind = QString::fromStdString(r.kind);
        item.text = tr("%1 (up to %2 % of step time)")
                        .arg(QString::fromStdString(r.text))
                        .arg(r.sharePct, 0, 'f', r.sharePct < 10 ? 1 : 0);
        item.evidence = evidenceText(r.evidence);
        items.append(item);
    }
    return items;
}

QWidget* createTraceView(const ProfileInfo& profile, const QString& workspacePath) {
    auto* view = new TraceView;
    view->open(workspacePath.toStdString(), profile.id);
    return view;
}

QImage renderTraceTimelineImage(const TraceSourcePtr& source, const RenderOptions& options) {
    TimelineView view;
    view.setAsynchronous(false);
    TraceTimelineBinding binding(view, source);
    binding.setFlowDisplay(FlowDisplay::All);  // an image has no selection to follow
    binding.show(traceTracksInOrder(source->store()));
    // The same minimap as the GUI's (here on the calling thread: this is the headless path).
    view.setOverviewPainter(
        densityOverview(source->query([](const trace::TraceStore& s) {
            return trackBusyDensity(s, kOverviewBins);
        }),
                        TimeRange{0, double(source->store().end() - source->origin())}));
    if (options.from && options.to)
        view.setWindow({*options.from, *options.to});
    else
        view.fitAll();
    const QSize size = options.sizeGiven ? options.size : view.fittedSize(options.size);
    QImage image = view.renderImage(size);
    // Tracks below the image: say how many, and how tall an image would show them all.
    const TimelineView::Layout layout = view.layoutFor(size);
    int y = layout.tracks.top(), cut = 0;
    for (const auto& track : view.tracks()) {
        if (y + track->height() > layout.tracks.bottom() + 1 && !track->isHeader()) ++cut;
        y += track->height();
    }
    if (cut > 0) {
        const int needed = view.fittedSize(QSize(size.width(), 1 << 20)).height();
        QPainter painter(&image);
        painter.fillRect(layout.legend, QColor(255, 236, 200));
        painter.setPen(QColor(120, 60, 0));
        QFont bold = painter.font();
        bold.setBold(true);
        painter.setFont(bold);
        painter.drawText(layout.legend.adjusted(8, 0, -8, 0), Qt::AlignVCenter | Qt::AlignLeft,
                         QStringLiteral("▼ %1 more track%2 below; render with --size %3x%4 to "
                                        "see all of them")
                             .arg(cut)
                             .arg(cut == 1 ? "" : "s")
                             .arg(size.width())
                             .arg(needed));
    }
    return image;
}

QImage renderTraceTimeline(const Workspace& workspace, const ProfileInfo& profile,
                           const RenderOptions& options) {
    return renderTraceTimelineImage(std::make_shared<TraceSource>(workspace.path(), profile.id),
                                    options);
}

}  // namespace stallscope
