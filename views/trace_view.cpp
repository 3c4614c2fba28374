#include "trace_view.h"

#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
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

#include "timeline_view.h"

namespace stallscope {

namespace {

constexpr int kTrackIdRole = Qt::UserRole + 1;
constexpr int kSortRole = Qt::UserRole + 2;

struct Opened {
    TraceSourcePtr source;
    std::vector<trace::OpStat> ops;
    QString error;
};

QStandardItem* numberItem(double sortValue, const QString& text) {
    auto* item = new QStandardItem(text);
    item->setData(sortValue, kSortRole);
    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    item->setEditable(false);
    return item;
}

QString htmlEscape(const QString& s) {
    return s.toHtmlEscaped();
}

}  // namespace

TraceView::TraceView(QWidget* parent)
    : QWidget(parent), highlight_(std::make_shared<TraceHighlight>()) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);

    auto* findBar = new QHBoxLayout;
    findEdit_ = new QLineEdit;
    findEdit_->setPlaceholderText(tr("Find slices by name"));
    auto* previous = new QPushButton(tr("Previous"));
    auto* next = new QPushButton(tr("Next"));
    status_ = new QLabel;
    findBar->addWidget(findEdit_, 1);
    findBar->addWidget(previous);
    findBar->addWidget(next);
    findBar->addWidget(status_, 1);
    layout->addLayout(findBar);
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
    treeLayout->addWidget(treeFilter_);
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
    opProxy_ = new QSortFilterProxyModel(this);
    opProxy_->setSourceModel(opModel_);
    opProxy_->setSortRole(kSortRole);
    opTable_ = new QTableView;
    opTable_->setModel(opProxy_);
    opTable_->setSortingEnabled(true);
    opTable_->setSelectionBehavior(QAbstractItemView::SelectRows);
    opTable_->setSelectionMode(QAbstractItemView::SingleSelection);
    opTable_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    opTable_->verticalHeader()->hide();
    connect(opTable_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                if (current.isValid())
                    selectOp(opProxy_->index(current.row(), 0).data(kSortRole).toString());
            });
    details_ = new QTextBrowser;
    overview_ = new QTextBrowser;
    tabs_->addTab(overview_, tr("Overview"));
    tabs_->addTab(opTable_, tr("Ops"));
    tabs_->addTab(details_, tr("Details"));
    vertical->addWidget(horizontal);
    vertical->addWidget(tabs_);
    vertical->setStretchFactor(0, 3);
    vertical->setStretchFactor(1, 1);
    layout->addWidget(vertical, 1);

    connect(timeline_, &TimelineView::selectionChanged, this, &TraceView::showSelectionDetails);
}

TraceView::~TraceView() = default;

void TraceView::open(const std::string& workspacePath, int64_t profileId) {
    status_->setText(tr("Opening…"));
    auto* watcher = new QFutureWatcher<Opened>(this);
    connect(watcher, &QFutureWatcher<Opened>::finished, this, [this, watcher] {
        watcher->deleteLater();
        Opened opened = watcher->result();
        if (!opened.source) {
            status_->setText(opened.error);
            return;
        }
        status_->clear();
        setSource(std::move(opened.source), std::move(opened.ops));
    });
    // Opening reads the track list and string table and the op statistics: not on the GUI thread.
    watcher->setFuture(QtConcurrent::run([workspacePath, profileId] {
        Opened out;
        try {
            auto source = std::make_shared<TraceSource>(workspacePath, profileId);
            out.ops = source->query([](const trace::TraceStore& s) { return s.opStats(); });
            out.source = std::move(source);
        } catch (const std::exception& e) {
            out.error = QString::fromUtf8(e.what());
        }
        return out;
    }));
}

void TraceView::setSource(TraceSourcePtr source, std::vector<trace::OpStat> ops) {
    source_ = std::move(source);
    ops_ = std::move(ops);
    binding_ = std::make_unique<TraceTimelineBinding>(*timeline_, source_, highlight_);
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
    const trace::TraceStore& store = source_->store();
    std::function<void(int64_t, QTreeWidgetItem*)> add = [&](int64_t parent,
                                                             QTreeWidgetItem* into) {
        for (const trace::TrackRow* row : store.children(parent)) {
            auto* item = into ? new QTreeWidgetItem(into) : new QTreeWidgetItem(tree_);
            const QString name = QString::fromStdString(row->name.empty() ? row->tid : row->name);
            item->setText(0, name);
            item->setText(1, QString::number(row->slices + row->instants + row->samples));
            item->setData(0, kTrackIdRole, qint64(row->id));
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
    std::vector<int64_t> shown;
    // A track shows when it and all its ancestors are checked, visible (filter) and expanded.
    std::function<void(QTreeWidgetItem*, bool)> walk = [&](QTreeWidgetItem* item, bool parentOpen) {
        const bool visible = parentOpen && !item->isHidden() && item->checkState(0) == Qt::Checked;
        if (visible) shown.push_back(item->data(0, kTrackIdRole).toLongLong());
        for (int i = 0; i < item->childCount(); ++i)
            walk(item->child(i), visible && (item->isExpanded() || item->childCount() == 0));
    };
    for (int i = 0; i < tree_->topLevelItemCount(); ++i) walk(tree_->topLevelItem(i), true);
    std::erase_if(shown, [&](int64_t id) {
        const trace::TrackRow* row = source_->store().track(id);
        return !row || row->slices + row->instants + row->samples == 0;
    });
    binding_->show(shown);
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
    for (const trace::OpStat& op : ops) {
        auto* name = new QStandardItem(QString::fromStdString(op.name));
        name->setData(QString::fromStdString(op.name), kSortRole);
        name->setEditable(false);
        name->setForeground(traceNameColor(op.name).darker(170));
        opModel_->appendRow({name, numberItem(double(op.count), QString::number(op.count)),
                             numberItem(double(op.total), formatNanoseconds(double(op.total))),
                             numberItem(double(op.self), formatNanoseconds(double(op.self))),
                             numberItem(op.mean(), formatNanoseconds(op.mean())),
                             numberItem(double(op.p50), formatNanoseconds(double(op.p50))),
                             numberItem(double(op.p95), formatNanoseconds(double(op.p95)))});
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
    auto* watcher = new QFutureWatcher<std::optional<trace::FoundSlice>>(this);
    connect(watcher, &QFutureWatcher<std::optional<trace::FoundSlice>>::finished, this,
            [this, watcher, origin] {
                watcher->deleteLater();
                const auto found = watcher->result();
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
                                 formatNanoseconds(item.start));
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
    TraceSourcePtr source = source_;
    const std::string text = needle.toStdString();
    watcher->setFuture(QtConcurrent::run([source, text, afterNs, forward] {
        return source->query(
            [&](const trace::TraceStore& store) { return store.find(text, afterNs, forward); });
    }));
}

void TraceView::showSelectionDetails() {
    const auto& selection = timeline_->selection();
    ++detailsGeneration_;
    if (!selection || !selection->track) {
        details_->clear();
        return;
    }
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
    auto* watcher = new QFutureWatcher<std::string>(this);
    const quint64 generation = detailsGeneration_;
    connect(watcher, &QFutureWatcher<std::string>::finished, this,
            [this, watcher, html, generation] {
                watcher->deleteLater();
                if (generation != detailsGeneration_) return;
                const QByteArray json = QByteArray::fromStdString(watcher->result());
                const QJsonDocument doc = QJsonDocument::fromJson(json);
                const QString text = doc.isNull()
                                         ? QString::fromUtf8(json)
                                         : QString::fromUtf8(doc.toJson(QJsonDocument::Indented));
                details_->setHtml(html + "<h4>Arguments</h4><pre>" + htmlEscape(text) + "</pre>");
            });
    TraceSourcePtr source = source_;
    watcher->setFuture(QtConcurrent::run([source, argsId] {
        return source->query([&](const trace::TraceStore& s) { return s.args(argsId); });
    }));
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
                       .arg(formatNanoseconds(double(store.end() - store.start())))
                       .arg(store.start())
                       .arg(store.end());
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
                    .arg(formatNanoseconds(double(ops_[i].total)));
    html +=
        "</table><h3>Busiest tracks</h3><table><tr><th align=left>Track</th><th>Slices</th></tr>";
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

QImage renderTraceTimelineImage(const TraceSourcePtr& source, const RenderOptions& options) {
    TimelineView view;
    view.setAsynchronous(false);
    TraceTimelineBinding binding(view, source);
    binding.show(traceTracksInOrder(source->store()));
    if (options.from && options.to)
        view.setWindow({*options.from, *options.to});
    else
        view.fitAll();
    return view.renderImage(options.sizeGiven ? options.size : view.fittedSize(options.size));
}

QImage renderTraceTimeline(const Workspace& workspace, const ProfileInfo& profile,
                           const RenderOptions& options) {
    return renderTraceTimelineImage(std::make_shared<TraceSource>(workspace.path(), profile.id),
                                    options);
}

}  // namespace stallscope
