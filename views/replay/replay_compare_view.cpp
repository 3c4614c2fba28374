#include "views/replay/replay_compare_view.h"
#include "views/common/format.h"
#include "views/common/time_navigation.h"

#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QScopedValueRollback>
#include <QScrollBar>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QTextStream>
#include <QVBoxLayout>
#include <QtConcurrent>
#include <cmath>
#include <map>

#include "core/compare/percent.h"
#include "core/errors.h"
#include "core/replay/codec.h"
#include "views/common/export.h"
#include "views/common/table_kit.h"
#include "views/common/timeline_view.h"

namespace stallscope {

namespace {

using namespace tablekit;
constexpr int kDeltaRole = kRowRole;

// One row of the shared track set: the same title and height in both timelines, drawing the
// side's own track at the top (or a note where the side has none), so rows line up.
class AlignedTrack final : public TimelineTrack {
  public:
    AlignedTrack(std::shared_ptr<TimelineTrack> inner, QString title, int height, QString absent)
        : inner_(std::move(inner)),
          title_(std::move(title)),
          height_(height),
          absent_(std::move(absent)) {}
    const TimelineTrack* inner() const { return inner_.get(); }
    QString title() const override { return title_; }
    int height() const override { return height_; }
    std::shared_ptr<const TrackFrame> prepare(TimeRange window, double upp) const override {
        if (inner_) return inner_->prepare(window, upp);
        auto frame = std::make_shared<TrackFrame>();
        frame->window = window;
        frame->unitsPerPixel = upp;
        return frame;
    }
    void paint(QPainter& painter, const QRect& rect, const TimeMapping& mapping,
               const TrackFrame* frame,
               const std::optional<TimelineItem>& selected) const override {
        if (!inner_) {
            painter.save();
            painter.fillRect(rect, QColor(246, 246, 246));
            painter.setPen(QColor(130, 130, 130));
            painter.drawText(rect.adjusted(8, 0, -8, 0), Qt::AlignLeft | Qt::AlignVCenter, absent_);
            painter.restore();
            return;
        }
        inner_->paint(painter, innerRect(rect), mapping, frame, selected);
    }
    std::optional<TimelineItem> hitTest(const QPoint& pos, const QRect& rect,
                                        const TimeMapping& mapping,
                                        const TrackFrame* frame) const override {
        if (!inner_ || !innerRect(rect).contains(pos)) return std::nullopt;
        return inner_->hitTest(pos, innerRect(rect), mapping, frame);
    }
    QString toolTip(const TimelineItem& item) const override {
        return inner_ ? inner_->toolTip(item) : QString();
    }
    DetailFields details(const TimelineItem& item) const override {
        return inner_ ? inner_->details(item) : DetailFields{};
    }
    QList<LegendEntry> legend() const override {
        return inner_ ? inner_->legend() : QList<LegendEntry>{};
    }
    TimeRange extent() const override { return inner_ ? inner_->extent() : TimeRange{0, 1}; }

  private:
    QRect innerRect(const QRect& r) const {
        return QRect(r.left(), r.top(), r.width(), std::min(r.height(), inner_->height()));
    }
    std::shared_ptr<TimelineTrack> inner_;
    QString title_;
    int height_;
    QString absent_;
};

QString laneName(const ReplayDocument& doc, size_t lane) {
    QString name = doc.lanes[lane].name;
    return name.replace(QLatin1String("->"), QStringLiteral("→"));
}

QString sideText(const char* which, const ReplayDocument& doc, const replay::ReplaySide& s) {
    const QString name = doc.profile ? QString::fromStdString(doc.profile->name) : QString();
    return QStringLiteral("%1%2 · %3 cycles, %4 stall")
        .arg(QString::fromUtf8(which), name.isEmpty() ? QString() : QStringLiteral(": ") + name,
             format::count(double(s.totalCycles)), format::count(double(s.stallCycles)));
}

// Rows of the totals table: label, A, B.
struct TotalRow {
    QString label, csv;
    double a, b;
    bool percent = false;  // a share in percent: Δ in points, no Δ%
};
std::vector<TotalRow> totalRows(const replay::ReplayComparison& c) {
    return {
        {QObject::tr("cycles"), "total_cycles", double(c.a.totalCycles), double(c.b.totalCycles)},
        {QObject::tr("stall cycles"), "stall_cycles", double(c.a.stallCycles),
         double(c.b.stallCycles)},
        {QObject::tr("  base-latency stall"), "base_stall_cycles", double(c.a.baseStallCycles),
         double(c.b.baseStallCycles)},
        {QObject::tr("  transfer stall"), "transfer_stall_cycles", double(c.a.transferStallCycles),
         double(c.b.transferStallCycles)},
        {QObject::tr("slack"), "slack_cycles", double(c.a.slackCycles), double(c.b.slackCycles)},
        {QObject::tr("instructions"), "instructions", double(c.a.instructions),
         double(c.b.instructions)},
        {QObject::tr("DMAs"), "dmas", double(c.a.dmas), double(c.b.dmas)},
        {QObject::tr("data-cache median unused %"), "median_unused_pct", c.a.medianUnusedPct,
         c.b.medianUnusedPct, true},
        {QObject::tr("data-cache median largest free %"), "median_largest_free_pct",
         c.a.medianLargestFreePct, c.b.medianLargestFreePct, true},
    };
}

}  // namespace

ReplayComparisonPtr compareReplayDocuments(ReplayDocumentPtr a, ReplayDocumentPtr b) {
    auto data = std::make_shared<ReplayComparisonData>();
    data->a = std::move(a);
    data->b = std::move(b);
    data->comparison = replay::compareReplays(data->a->trace, data->a->analysis, data->b->trace,
                                              data->b->analysis);
    return data;
}

ReplayComparisonPtr loadReplayComparison(const QString& workspacePath, const ProfileInfo& a,
                                         const ProfileInfo& b) {
    auto workspace = Workspace::open(workspacePath.toStdString(), Workspace::Mode::ReadOnly);
    auto docA = buildReplayDocument(replay::loadInstructionStream(*workspace, a.id), a, false);
    auto docB = buildReplayDocument(replay::loadInstructionStream(*workspace, b.id), b, false);
    return compareReplayDocuments(std::move(docA), std::move(docB));
}

ReplayCompareView::ReplayCompareView(const ProfileInfo& a, const ProfileInfo& b,
                                     const QString& workspacePath, QWidget* parent)
    : QWidget(parent) {
    build();
    summary_->setText(tr("Comparing %1 (A) with %2 (B)…")
                          .arg(QString::fromStdString(a.name), QString::fromStdString(b.name)));
    loadJob_.start([workspacePath, a, b] { return loadReplayComparison(workspacePath, a, b); },
                   [this](ReplayComparisonPtr data) { showData(std::move(data)); });
}

ReplayCompareView::ReplayCompareView(ReplayComparisonPtr data, QWidget* parent) : QWidget(parent) {
    build();
    before_->setAsynchronous(false);
    after_->setAsynchronous(false);
    showData(std::move(data));
}

void ReplayCompareView::build() {
    auto* layout = new QVBoxLayout(this);
    summary_ = new QLabel(this);
    QFont bold = summary_->font();
    bold.setBold(true);
    bold.setPointSizeF(bold.pointSizeF() * 1.15);
    summary_->setFont(bold);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* top = new QHBoxLayout;
    top->addWidget(summary_, 1);
    top->addWidget(new QLabel(tr("Align:"), this));
    align_ = new QComboBox(this);
    align_->addItem(tr("at the start"), QString());
    align_->setToolTip(tr("Shift B so that the chosen HLO op starts at the same time in both"));
    top->addWidget(align_);
    auto* exportButton = new QPushButton(tr("Export CSV…"), this);
    exportButton->setToolTip(tr("Writes the table of the current tab as CSV"));
    top->addWidget(exportButton);
    layout->addLayout(top);

    auto* split = new QSplitter(Qt::Vertical, this);
    auto side = [split](QLabel*& label, TimelineView*& view) {
        auto* box = new QWidget(split);
        auto* v = new QVBoxLayout(box);
        v->setContentsMargins(0, 0, 0, 0);
        v->setSpacing(1);
        label = new QLabel(box);
        label->setStyleSheet(QStringLiteral("QLabel { font-weight: bold; padding-left: 4px; }"));
        v->addWidget(label);
        view = new TimelineView(box);
        v->addWidget(view, 1);
    };
    side(labelA_, before_);
    side(labelB_, after_);
    tables_ = new QTabWidget(split);
    totals_ = new QTableWidget(0, 5, tables_);
    totals_->setHorizontalHeaderLabels({tr("total"), tr("A"), tr("B"), tr("Δ"), tr("Δ %")});
    ops_ = new QTableWidget(0, 5, tables_);
    ops_->setHorizontalHeaderLabels(
        {tr("op"), tr("A cycles"), tr("B cycles"), tr("Δ cycles"), tr("Δ %")});
    dmas_ = new QTableWidget(0, 13, tables_);
    dmas_->setHorizontalHeaderLabels({tr("DMA A"), tr("DMA B"), tr("matched by"), tr("stall A"),
                                      tr("stall B"), tr("Δ stall"), tr("slack A"), tr("slack B"),
                                      tr("Δ slack"), tr("issue instr A"), tr("issue instr B"),
                                      tr("issue moved"), tr("changed")});
    for (QTableWidget* t : {totals_, ops_, dmas_}) setUpTable(t);
    totals_->horizontalHeader()->setSortIndicatorShown(false);
    tables_->addTab(totals_, tr("Totals"));
    tables_->addTab(ops_, tr("Per HLO op"));
    tables_->addTab(dmas_, tr("Per DMA"));
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 3);
    split->setStretchFactor(2, 2);
    layout->addWidget(split, 1);

    connect(exportButton, &QPushButton::clicked, this, [this] {
        const Table table = static_cast<Table>(tables_->currentIndex());
        const char* names[] = {"totals.csv", "op-deltas.csv", "dma-deltas.csv"};
        exporting::runExport(this, {tr("Deltas as CSV…"), exporting::Format::Csv,
                                    QString::fromUtf8(names[int(table)]),
                                    [this, table](const QString& path, QString* error) {
                                        return exportCsv(table, path, error);
                                    }});
    });
    connect(align_, &QComboBox::activated, this, [this](int index) {
        try {
            setAlignment(align_->itemData(index).toString().toStdString());
        } catch (const std::exception& e) {
            summary_->setToolTip(QString::fromUtf8(e.what()));
        }
    });

    // One cycle axis: a window change in either timeline moves the other, shifted by the
    // alignment offset; the cursor follows the same way; rows scroll together.
    navigation_->link(before_);
    navigation_->link(after_);
    connect(before_->verticalScrollBar(), &QScrollBar::valueChanged, after_->verticalScrollBar(),
            &QScrollBar::setValue);
    connect(after_->verticalScrollBar(), &QScrollBar::valueChanged, before_->verticalScrollBar(),
            &QScrollBar::setValue);
    connect(before_, &TimelineView::selectionChanged, this,
            [this] { syncSelection(before_, after_); });
    connect(after_, &TimelineView::selectionChanged, this,
            [this] { syncSelection(after_, before_); });
    connect(dmas_, &QTableWidget::currentCellChanged, this, [this](int row) {
        if (navigation_->isUpdating() || row < 0) return;
        const int index = dmaDeltaOfRow(row);
        if (index >= 0) showDmaDelta(size_t(index));
    });
    // The cursor leaves both when the mouse leaves either.
    for (TimelineView* v : {before_, after_}) {
        v->installEventFilter(this);
        v->viewport()->installEventFilter(this);
    }
}

bool ReplayCompareView::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() == QEvent::Leave) {
        for (TimelineView* v : {before_, after_})
            if (watched == v || watched == v->viewport()) {
                before_->setCursorTime(std::nullopt);
                after_->setCursorTime(std::nullopt);
            }
    }
    return QWidget::eventFilter(watched, event);
}

void ReplayCompareView::installTracks() {
    // installReplayTracks sets the time format, minimap and overlay; its tracks are then
    // replaced by one shared row set so A's and B's rows line up.
    before_->clearTracks();
    after_->clearTracks();
    tracksA_ = installReplayTracks(*before_, data_->a);
    tracksB_ = installReplayTracks(*after_, data_->b);
    before_->clearTracks();
    after_->clearTracks();
    const ReplayDocument& a = *data_->a;
    const ReplayDocument& b = *data_->b;
    struct Row {
        std::shared_ptr<TimelineTrack> a, b;
        QString title;
    };
    std::vector<Row> rows;
    if (tracksA_.hlo || tracksB_.hlo) rows.push_back({tracksA_.hlo, tracksB_.hlo, tr("HLO ops")});
    // DMA lanes by link name, A's order first.
    std::map<std::string, size_t> laneB;
    for (size_t l = 0; l < tracksB_.lanes.size(); ++l)
        laneB[b.trace.machine.linkName(b.lanes[l].link)] = l;
    std::vector<bool> laneBUsed(tracksB_.lanes.size(), false);
    std::vector<std::pair<int, int>> laneRows;  // (lane in A or -1, lane in B or -1) per row
    for (size_t l = 0; l < tracksA_.lanes.size(); ++l) {
        auto it = laneB.find(a.trace.machine.linkName(a.lanes[l].link));
        const int lb = it == laneB.end() ? -1 : int(it->second);
        if (lb >= 0) laneBUsed[size_t(lb)] = true;
        laneRows.emplace_back(int(l), lb);
    }
    for (size_t l = 0; l < tracksB_.lanes.size(); ++l)
        if (!laneBUsed[l]) laneRows.emplace_back(-1, int(l));
    const size_t firstLaneRow = rows.size();
    for (const auto& [la, lb] : laneRows)
        rows.push_back(
            {la >= 0 ? tracksA_.lanes[size_t(la)] : nullptr,
             lb >= 0 ? tracksB_.lanes[size_t(lb)] : nullptr,
             tr("DMA %1").arg(la >= 0 ? laneName(a, size_t(la)) : laneName(b, size_t(lb)))});
    // Units by name.
    std::map<QString, size_t> unitB;
    for (size_t u = 0; u < tracksB_.units.size(); ++u) unitB[b.units[u].name] = u;
    std::vector<bool> unitBUsed(tracksB_.units.size(), false);
    for (size_t u = 0; u < tracksA_.units.size(); ++u) {
        auto it = unitB.find(a.units[u].name);
        std::shared_ptr<TimelineTrack> other;
        if (it != unitB.end()) {
            other = tracksB_.units[it->second];
            unitBUsed[it->second] = true;
        }
        rows.push_back({tracksA_.units[u], other, a.units[u].name});
    }
    for (size_t u = 0; u < tracksB_.units.size(); ++u)
        if (!unitBUsed[u]) rows.push_back({nullptr, tracksB_.units[u], b.units[u].name});

    laneRowsA_.assign(tracksA_.lanes.size(), nullptr);
    laneRowsB_.assign(tracksB_.lanes.size(), nullptr);
    for (size_t r = 0; r < rows.size(); ++r) {
        const Row& row = rows[r];
        const int height = std::max({24, row.a ? row.a->height() : 0, row.b ? row.b->height() : 0});
        auto trackA = std::make_shared<AlignedTrack>(row.a, row.a ? row.a->title() : row.title,
                                                     height, tr("not in A"));
        auto trackB = std::make_shared<AlignedTrack>(row.b, row.b ? row.b->title() : row.title,
                                                     height, tr("not in B"));
        if (r >= firstLaneRow && r < firstLaneRow + laneRows.size()) {
            const auto [la, lb] = laneRows[r - firstLaneRow];
            if (la >= 0) laneRowsA_[size_t(la)] = trackA.get();
            if (lb >= 0) laneRowsB_[size_t(lb)] = trackB.get();
        }
        before_->addTrack(trackA);
        after_->addTrack(trackB);
    }
}

void ReplayCompareView::showData(ReplayComparisonPtr data) {
    data_ = std::move(data);
    const auto& c = data_->comparison;
    summary_->setText(QString::fromStdString(c.summary));
    summary_->setToolTip(tr("data-cache median unused %1% → %2%, largest free %3% → %4%")
                             .arg(c.a.medianUnusedPct, 0, 'f', 1)
                             .arg(c.b.medianUnusedPct, 0, 'f', 1)
                             .arg(c.a.medianLargestFreePct, 0, 'f', 1)
                             .arg(c.b.medianLargestFreePct, 0, 'f', 1));
    installTracks();
    deltaOfA_.assign(data_->a->trace.dmas.size(), replay::kNone);
    deltaOfB_.assign(data_->b->trace.dmas.size(), replay::kNone);
    for (size_t i = 0; i < c.dmas.size(); ++i) {
        if (c.dmas[i].a != replay::kNone) deltaOfA_[c.dmas[i].a] = i;
        if (c.dmas[i].b != replay::kNone) deltaOfB_[c.dmas[i].b] = i;
    }
    align_->clear();
    align_->addItem(tr("at the start"), QString());
    for (const std::string& op : replay::commonHloOps(data_->a->trace, data_->b->trace))
        align_->addItem(tr("at %1").arg(QString::fromStdString(op)), QString::fromStdString(op));
    alignment_ = {};
    applyAlignment();

    std::vector<std::vector<QTableWidgetItem*>> rows;
    for (const TotalRow& t : totalRows(c)) {
        const int decimals = t.percent ? 1 : 0;
        auto value = [&](double v) {
            return numberCell(v, t.percent ? QString::number(v, 'f', 1) : format::count(v));
        };
        const double delta = t.b - t.a;
        rows.push_back({textCell(t.label, t.csv), value(t.a), value(t.b),
                        numberCell(delta, format::signedCount(delta, decimals) +
                                              (t.percent ? tr(" pt") : QString())),
                        t.percent ? missingCell() : pctCell(percentChange(t.a, t.b))});
    }
    fillTable(totals_, rows, false);

    rows.clear();
    for (const replay::OpDelta& op : c.ops)
        rows.push_back({textCell(QString::fromStdString(op.name)), numberCell(double(op.a)),
                        numberCell(double(op.b)), deltaCell(double(op.b) - double(op.a)),
                        pctCell(op.deltaPct())});
    fillTable(ops_, rows);

    // DMAs: largest |Δ stall| first, then changed ones, then issue order (the comparison's).
    std::vector<size_t> order(c.dmas.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
        const auto dx = std::llabs(c.dmas[x].stallB - c.dmas[x].stallA);
        const auto dy = std::llabs(c.dmas[y].stallB - c.dmas[y].stallA);
        if (dx != dy) return dx > dy;
        return c.dmas[x].changed() > c.dmas[y].changed();
    });
    const auto& ta = data_->a->trace;
    const auto& tb = data_->b->trace;
    rows.clear();
    for (size_t i : order) {
        const replay::DmaDelta& d = c.dmas[i];
        const bool inA = d.a != replay::kNone, inB = d.b != replay::kNone;
        std::vector<QTableWidgetItem*> row{
            inA ? numberCell(double(ta.dmas[d.a].id), QString::number(ta.dmas[d.a].id))
                : missingCell(),
            inB ? numberCell(double(tb.dmas[d.b].id), QString::number(tb.dmas[d.b].id))
                : missingCell(),
            textCell(replay::dmaMatchName(d.match)),
            inA ? numberCell(double(d.stallA)) : missingCell(),
            inB ? numberCell(double(d.stallB)) : missingCell(),
            deltaCell(double(d.stallB - d.stallA)),
            inA ? numberCell(double(d.slackA)) : missingCell(),
            inB ? numberCell(double(d.slackB)) : missingCell(),
            deltaCell(double(d.slackB - d.slackA)),
            inA ? numberCell(double(d.issueInstrA), QString::number(d.issueInstrA)) : missingCell(),
            inB ? numberCell(double(d.issueInstrB), QString::number(d.issueInstrB)) : missingCell(),
            d.issueMoved ? numberCell(double(d.issueShift),
                                      format::signedCount(double(d.issueShift)) + tr(" instr"))
                         : numberCell(0, tr("no")),
            textCell(d.changed() ? tr("yes") : tr("no"), d.changed() ? "1" : "0")};
        row[0]->setData(kDeltaRole, qulonglong(i));
        rows.push_back(std::move(row));
    }
    fillTable(dmas_, rows);
    emit loaded();
}

void ReplayCompareView::setAlignment(const std::string& op) {
    if (!data_) return;
    alignment_ = op.empty() ? replay::Alignment{}
                            : replay::alignAtOp(data_->a->trace, data_->a->analysis.sim,
                                                data_->b->trace, data_->b->analysis.sim, op);
    const int index = align_->findData(QString::fromStdString(op));
    if (index >= 0 && align_->currentIndex() != index) align_->setCurrentIndex(index);
    applyAlignment();
}

void ReplayCompareView::applyAlignment() {
    const auto& c = data_->comparison;
    const double off = double(alignment_.offset());
    navigation_->setOffset(after_, off);
    const TimeRange extentA{
        std::min(0.0, -off),
        std::max(double(std::max<uint64_t>(c.a.totalCycles, 1)), double(c.b.totalCycles) - off)};
    {
        const auto guard = navigation_->hold();
        before_->setExtent(extentA);
        after_->setExtent(TimeRange{extentA.start + off, extentA.end + off});
        before_->fitAll();
        const TimeRange w = before_->window();
        after_->setWindow({w.start + off, w.end + off});
    }
    labelA_->setText(sideText("A (before)", *data_->a, c.a));
    QString b = sideText("B (after)", *data_->b, c.b);
    if (!alignment_.op.empty())
        b += tr("   ·   axis shifted %1 cycles: %2 starts at %3 in A, %4 in B")
                 .arg(format::signedCount(off), QString::fromStdString(alignment_.op),
                      format::count(double(alignment_.a)), format::count(double(alignment_.b)));
    labelB_->setText(b);
}

std::optional<size_t> ReplayCompareView::dmaOf(const TimelineView* view) const {
    const auto& sel = view->selection();
    if (!sel || sel->item.id < 0 || sel->item.count != 1) return std::nullopt;
    const auto& lanes = view == before_ ? laneRowsA_ : laneRowsB_;
    if (std::find(lanes.begin(), lanes.end(), sel->track) == lanes.end()) return std::nullopt;
    return size_t(sel->item.id);
}

void ReplayCompareView::selectDma(TimelineView* view, bool sideA, size_t dma) {
    const ReplayDocument& doc = sideA ? *data_->a : *data_->b;
    const ReplayTracks& tracks = sideA ? tracksA_ : tracksB_;
    const auto& rows = sideA ? laneRowsA_ : laneRowsB_;
    const size_t lane = doc.dmaLane[dma];
    view->select(rows[lane], tracks.lanes[lane]->itemFor(dma));
}

void ReplayCompareView::syncSelection(TimelineView* from, TimelineView* to) {
    if (navigation_->isUpdating() || !data_) return;
    const auto guard = navigation_->hold();
    const bool fromA = from == before_;
    const auto dma = dmaOf(from);
    if (!dma) {
        // Cleared, or something other than one DMA: nothing to match on the other side.
        to->clearSelection();
        dmas_->clearSelection();
        return;
    }
    const size_t index = (fromA ? deltaOfA_ : deltaOfB_)[*dma];
    if (index == replay::kNone) return;
    const replay::DmaDelta& d = data_->comparison.dmas[index];
    const size_t other = fromA ? d.b : d.a;
    if (other != replay::kNone)
        selectDma(to, !fromA, other);
    else
        to->clearSelection();
    for (int r = 0; r < dmas_->rowCount(); ++r)
        if (dmaDeltaOfRow(r) == int(index)) {
            dmas_->setCurrentCell(r, 0);
            dmas_->scrollToItem(dmas_->item(r, 0));
        }
}

int ReplayCompareView::dmaDeltaOfRow(int row) const {
    const QTableWidgetItem* item = dmas_->item(row, 0);
    return item ? int(item->data(kDeltaRole).toULongLong()) : -1;
}

void ReplayCompareView::showDmaDelta(size_t index) {
    if (!data_ || index >= data_->comparison.dmas.size()) return;
    const replay::DmaDelta& d = data_->comparison.dmas[index];
    const double off = double(alignment_.offset());
    std::optional<TimeRange> range;  // in A's time
    auto cover = [&](double start, double end) {
        range = range ? TimeRange{std::min(range->start, start), std::max(range->end, end)}
                      : TimeRange{start, end};
    };
    {
        const auto guard = navigation_->hold();
        if (d.a != replay::kNone) {
            selectDma(before_, true, d.a);
            const TimelineItem item = tracksA_.lanes[data_->a->dmaLane[d.a]]->itemFor(d.a);
            cover(item.start, item.end);
        } else {
            before_->clearSelection();
        }
        if (d.b != replay::kNone) {
            selectDma(after_, false, d.b);
            const TimelineItem item = tracksB_.lanes[data_->b->dmaLane[d.b]]->itemFor(d.b);
            cover(item.start - off, item.end - off);
        } else {
            after_->clearSelection();
        }
        for (int r = 0; r < dmas_->rowCount(); ++r)
            if (dmaDeltaOfRow(r) == int(index)) dmas_->setCurrentCell(r, 0);
    }
    if (range) before_->fitRange(*range, 0.25);  // B follows through the window link
    const TimelineTrack* row = d.a != replay::kNone ? laneRowsA_[data_->a->dmaLane[d.a]] : nullptr;
    if (row)
        before_->ensureTrackVisible(row);
    else if (d.b != replay::kNone)
        after_->ensureTrackVisible(laneRowsB_[data_->b->dmaLane[d.b]]);
}

QString ReplayCompareView::summary() const {
    return summary_->text();
}

QString ReplayCompareView::totalsCsv() const {
    return tableCsv(totals_, QStringLiteral("metric,a,b,delta,delta_pct"));
}

QString ReplayCompareView::opCsv() const {
    return tableCsv(ops_, QStringLiteral("op,a_cycles,b_cycles,delta_cycles,delta_pct"));
}

QString ReplayCompareView::dmaCsv() const {
    return tableCsv(dmas_, QStringLiteral("id_a,id_b,match,stall_a,stall_b,delta_stall,slack_a,"
                                          "slack_b,delta_slack,issue_instr_a,issue_instr_b,"
                                          "issue_shift,changed"));
}

bool ReplayCompareView::exportCsv(Table table, const QString& path, QString* error) const {
    const QString text = table == Table::Totals ? totalsCsv()
                         : table == Table::Ops  ? opCsv()
                                                : dmaCsv();
    return exporting::writeTextFile(path, text, error);
}

QImage ReplayCompareView::renderImage(QSize size, bool fit) {
    // Summary and totals on top; then per side a label strip and its timeline, both timelines
    // on the shared (aligned) axis with the same rows.
    const int header = 50, strip = 20;
    int half = (size.height() - header) / 2 - strip;
    if (fit) {
        half = std::max(before_->fittedSize(QSize(size.width(), 1 << 20)).height(),
                        after_->fittedSize(QSize(size.width(), 1 << 20)).height());
        size.setHeight(header + 2 * (strip + half));
    }
    half = std::max(half, 60);
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::white);
    QPainter painter(&image);
    QFont font = summary_->font();
    painter.setFont(font);
    painter.setPen(Qt::black);
    painter.drawText(QRect(10, 2, size.width() - 20, 26), Qt::AlignVCenter | Qt::AlignLeft,
                     summary_->text());
    QFont small = font;
    small.setBold(false);
    small.setPointSizeF(font.pointSizeF() * 0.78);
    painter.setFont(small);
    if (data_) {
        QStringList parts;
        for (const TotalRow& t : totalRows(data_->comparison)) {
            if (t.percent || t.csv == "instructions" || t.csv == "dmas") continue;
            parts << QStringLiteral("%1 %2 → %3 (%4)")
                         .arg(t.label.trimmed(), format::count(t.a), format::count(t.b),
                              format::signedPercent(percentChange(t.a, t.b)));
        }
        painter.setPen(QColor(50, 50, 50));
        painter.drawText(QRect(10, 28, size.width() - 20, 20), Qt::AlignVCenter | Qt::AlignLeft,
                         parts.join(QStringLiteral("   ·   ")));
    }
    const QLabel* labels[] = {labelA_, labelB_};
    TimelineView* views[] = {before_, after_};
    for (int i = 0; i < 2; ++i) {
        const int top = header + i * (strip + half);
        painter.fillRect(QRect(0, top, size.width(), strip), QColor(236, 238, 242));
        painter.setPen(QColor(120, 120, 120));
        painter.drawLine(0, top, size.width(), top);
        painter.setPen(Qt::black);
        QFont bold = small;
        bold.setBold(true);
        painter.setFont(bold);
        painter.drawText(QRect(8, top, size.width() - 16, strip), Qt::AlignVCenter | Qt::AlignLeft,
                         labels[i]->text());
        views[i]->prepareNow(QSize(size.width(), half));
        painter.drawImage(0, top + strip, views[i]->renderImage(QSize(size.width(), half)));
    }
    return image;
}

QImage renderReplayCompare(const Workspace& workspace, const ProfileInfo& profile,
                           const RenderOptions& options) {
    if (!options.against)
        throw InputError("render compare: name the second profile with --against B");
    if (options.against->kind != "replay")
        throw InputError("render compare: '" + options.against->name + "' is not a replay profile");
    if (!options.op.empty())
        throw InputError("render compare: --op applies to trace profiles; use --align-op");
    auto docA =
        buildReplayDocument(replay::loadInstructionStream(workspace, profile.id), profile, false);
    auto docB = buildReplayDocument(replay::loadInstructionStream(workspace, options.against->id),
                                    *options.against, false);
    ReplayCompareView view(compareReplayDocuments(std::move(docA), std::move(docB)));
    if (!options.alignOp.empty()) view.setAlignment(options.alignOp);
    if (options.from && options.to) view.before()->setWindow({*options.from, *options.to});
    return view.renderImage(options.size, !options.sizeGiven);
}

void ReplayCompareView::showLoadError(const QString& error) {
    summary_->setText(tr("Could not compare: %1").arg(error));
}

}  // namespace stallscope
