#include "views/trace/critical_path_trace_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QShortcut>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include "views/common/format.h"
#include "views/common/table_kit.h"
#include "views/common/timeline_view.h"
#include "views/trace/critical_path_tracks.h"
#include "views/trace/predicted_track.h"
#include "views/trace/whatif_box.h"

namespace stallscope {

namespace {

constexpr int kMaxRows = 20000;  // a step's path in the table; the strip shows all of it
constexpr int kSegmentRole = Qt::UserRole + 8;  // a row's segment in its step (rows sort)

std::array<int64_t, graph::kPathKinds.size()> byKindOf(const graph::StepPath& step) {
    std::array<int64_t, graph::kPathKinds.size()> out{};
    for (const graph::PathSegment& s : step.segments)
        for (size_t k = 0; k < graph::kPathKinds.size(); ++k)
            if (s.kind == graph::kPathKinds[k]) out[k] += s.dur;
    return out;
}

// "kernel 62 %, launch 20 %, host 9 %": the largest kinds of a total.
QString largestKinds(const std::array<int64_t, graph::kPathKinds.size()>& byKind, int count) {
    std::vector<size_t> order(byKind.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return byKind[a] > byKind[b]; });
    int64_t total = 0;
    for (const int64_t v : byKind) total += v;
    QStringList parts;
    for (size_t k : order) {
        // Kinds under 0.05 % would read "0.0 %": not worth naming.
        if (int(parts.size()) == count || byKind[k] * 2000 < total) break;
        parts << QStringLiteral("%1 %2").arg(pathview::kindLabel(graph::kPathKinds[k]).toLower(),
                                             format::percentOf(double(byKind[k]), double(total)));
    }
    return parts.join(QStringLiteral(", "));
}

}  // namespace

PathKindBar::PathKindBar(QWidget* parent) : QWidget(parent) {
    setMinimumHeight(44);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

void PathKindBar::setShares(const std::array<int64_t, graph::kPathKinds.size()>& byKind) {
    byKind_ = byKind;
    QStringList tip;
    for (size_t k = 0; k < byKind_.size(); ++k)
        if (byKind_[k] > 0)
            tip << QStringLiteral("%1: %2").arg(pathview::kindLabel(graph::kPathKinds[k]),
                                                format::nanoseconds(double(byKind_[k])));
    setToolTip(tip.join('\n'));
    update();
}

void PathKindBar::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing, false);
    int64_t total = 0;
    for (const int64_t v : byKind_) total += v;
    const QRectF bar(4, 4, width() - 8, 16);
    painter.fillRect(bar, QColor(240, 240, 240));
    if (total <= 0) return;
    double x = bar.left();
    const QFontMetrics metrics(font());
    double legendX = bar.left();
    for (size_t k = 0; k < byKind_.size(); ++k) {
        if (byKind_[k] <= 0) continue;
        const double w = bar.width() * double(byKind_[k]) / double(total);
        const QColor color = pathview::kindColor(graph::kPathKinds[k]);
        painter.fillRect(QRectF(x, bar.top(), w, bar.height()), color);
        x += w;
        // Legend under the bar: a swatch, the kind and its share.
        const QString label =
            QStringLiteral("%1 %2").arg(pathview::kindLabel(graph::kPathKinds[k]),
                                        format::percentOf(double(byKind_[k]), double(total)));
        painter.fillRect(QRectF(legendX, bar.bottom() + 8, 10, 10), color);
        painter.setPen(palette().color(QPalette::WindowText));
        painter.drawText(QPointF(legendX + 14, bar.bottom() + 17), label);
        legendX += 14 + metrics.horizontalAdvance(label) + 14;
    }
}

CriticalPathTracePanel::CriticalPathTracePanel(TracePanelHost& host) : TracePanel(host) {
    page_ = new QWidget;
    summary_ = new QLabel;
    summary_->setWordWrap(true);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    picker_ = new QComboBox;
    picker_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    picker_->setToolTip(tr("The step whose path the bar and the table show"));
    onTimeline_ = new QCheckBox(tr("On the timeline (C)"));
    onTimeline_->setChecked(true);
    onTimeline_->setToolTip(
        tr("The path as a strip above the tracks, outlined on the tracks it "
           "ran on"));
    bar_ = new PathKindBar;
    whatif_ = new WhatifBox;
    segments_ = new QTableWidget(0, 5);
    segments_->setHorizontalHeaderLabels(
        {tr("Kind"), tr("What"), tr("At"), tr("Duration"), tr("Of step")});
    segments_->horizontalHeaderItem(2)->setToolTip(tr("From the step's start"));
    savings_ = new QTableWidget(0, 5);
    savings_->setHorizontalHeaderLabels({tr("Recommendation"), tr("Re-simulated as"),
                                         tr("Step measured"), tr("Step predicted"), tr("Saving")});
    for (QTableWidget* t : {segments_, savings_}) tablekit::setUpTable(t);
    segments_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
    savings_->setToolTip(
        tr("Each step recommendation as an edit of the step graph, "
           "re-simulated (median step; stallscope whatif gives the same)"));

    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Step:")));
    top->addWidget(picker_);
    top->addWidget(onTimeline_);
    top->addStretch(1);
    // Left: the step's path (the table takes the height); right: what to change, re-simulated.
    // Side by side, so that the tables keep rows at 1280x800.
    auto* pathSide = new QWidget;
    auto* pathLayout = new QVBoxLayout(pathSide);
    pathLayout->setContentsMargins(0, 0, 0, 0);
    pathLayout->addLayout(top);
    pathLayout->addWidget(bar_);
    pathLayout->addWidget(segments_, 1);
    auto* changeSide = new QWidget;
    auto* changeLayout = new QVBoxLayout(changeSide);
    changeLayout->setContentsMargins(0, 0, 0, 0);
    changeLayout->addWidget(whatif_);
    changeLayout->addWidget(savings_, 1);
    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(pathSide);
    split->addWidget(changeSide);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    split->setSizes({520, 480});  // halves, the path a little wider, until the user moves it
    auto* layout = new QVBoxLayout(page_);
    layout->addWidget(summary_);
    layout->addWidget(split, 1);

    connect(picker_, &QComboBox::activated, this, [this](int index) { showStep(index); });
    connect(segments_, &QTableWidget::cellClicked, this, [this](int row, int) {
        const int segment = segments_->item(row, 0)->data(kSegmentRole).toInt();
        showSegment(segment);
        // A kernel on the path: what if it ran twice as fast?
        const graph::PathSegment& s = path_->steps[size_t(step_)].segments[size_t(segment)];
        if (s.kind == "kernel") whatif_->proposeKernel(QString::fromStdString(s.name));
    });
    connect(savings_, &QTableWidget::cellClicked, this, [this](int row, int) {
        whatif_->proposeRecommendation(savings_->item(row, 0)->text());
    });
    connect(onTimeline_, &QCheckBox::toggled, this, &CriticalPathTracePanel::setShownOnTimeline);
    connect(whatif_, &WhatifBox::previewed, this, [this] { host_.panelChanged(); });
    auto* toggle = new QShortcut(QKeySequence(Qt::Key_C), host_.keyScope());
    toggle->setContext(Qt::WidgetWithChildrenShortcut);
    connect(toggle, &QShortcut::activated, this, [this] { setShownOnTimeline(!shown_); });
}

CriticalPathTracePanel::~CriticalPathTracePanel() {
    if (page_ && !page_->parent()) delete page_;
}

void CriticalPathTracePanel::setResult(const analysis::Result& result) {
    setPath(std::static_pointer_cast<const graph::CriticalPath>(result));
}

void CriticalPathTracePanel::showMessage(const QString& text) {
    summary_->setText(text);
}

void CriticalPathTracePanel::clear() {
    if (overlay_) host_.timeline()->removeOverlay(overlay_.get());
    overlay_.reset();
    path_.reset();
    step_ = -1;
}

void CriticalPathTracePanel::setPath(std::shared_ptr<const graph::CriticalPath> path) {
    clear();
    path_ = std::move(path);
    picker_->clear();
    segments_->setRowCount(0);
    savings_->setRowCount(0);
    if (!path_ || !host_.source()) return;
    if (!path_->why.empty()) {
        summary_->setText(tr("No step graph: %1").arg(QString::fromStdString(path_->why)));
        bar_->setShares({});
        host_.panelChanged();
        return;
    }
    QString text = tr("The chain of work that ends each step: %1 over %2 steps.")
                       .arg(largestKinds(path_->byKind, 4))
                       .arg(path_->steps.size());
    // A long note (a trace walked by windows says how and why) keeps its first clause here and
    // the whole in the tooltip: four wrapped lines left the what-if box no height at 1280x800.
    const QString note = QString::fromStdString(path_->note);
    constexpr qsizetype kNoteShown = 160;
    qsizetype cut = note.size();
    if (cut > kNoteShown) {
        cut = note.indexOf(QLatin1String("; "));
        if (cut < 0 || cut > kNoteShown) cut = kNoteShown;
    }
    if (!note.isEmpty())
        text += ' ' + tr("Not in the graph: %1").arg(note.left(cut)) +
                (cut < note.size() ? tr("; … (the rest in this text's tooltip)") : QString());
    summary_->setText(text);
    summary_->setToolTip(note);
    for (const graph::StepPath& s : path_->steps)
        picker_->addItem(QStringLiteral("%1 · %2").arg(QString::fromStdString(s.name),
                                                       format::nanoseconds(double(s.duration))));
    fillSavings();
    whatif_->setProfile(host_.source()->workspacePath(), host_.source()->store().profileId());
    overlay_ = std::make_shared<CriticalPathOverlay>(path_, host_.source()->origin(),
                                                     [this] { return host_.binding(); });
    if (shown_) host_.timeline()->addOverlay(overlay_);
    showStep(0);
    host_.panelChanged();
}

void CriticalPathTracePanel::fillSavings() {
    std::vector<std::vector<QTableWidgetItem*>> rows;
    for (const graph::StepSaving& s : path_->savings) {
        auto* saving = tablekit::numberCell(
            double(s.saving()), QStringLiteral("%1 (%2)").arg(
                                    format::nanoseconds(double(s.saving())),
                                    format::percentOf(double(s.saving()), double(s.measured))));
        rows.push_back(
            {tablekit::textCell(QString::fromStdString(s.kind)),
             tablekit::textCell(QString::fromStdString(s.edit)),
             tablekit::numberCell(double(s.measured), format::nanoseconds(double(s.measured))),
             tablekit::numberCell(double(s.predicted), format::nanoseconds(double(s.predicted))),
             saving});
    }
    std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
        return a[4]->data(tablekit::kSortRole).toDouble() >
               b[4]->data(tablekit::kSortRole).toDouble();
    });
    tablekit::fillTable(savings_, rows);
}

void CriticalPathTracePanel::showStep(int index) {
    if (!path_ || index < 0 || size_t(index) >= path_->steps.size()) return;
    step_ = index;
    picker_->setCurrentIndex(index);
    const graph::StepPath& step = path_->steps[size_t(index)];
    bar_->setShares(byKindOf(step));
    const int64_t start = step.segments.empty() ? 0 : step.segments.front().start;
    std::vector<std::vector<QTableWidgetItem*>> rows;
    const size_t shown = std::min(step.segments.size(), size_t(kMaxRows));
    for (size_t i = 0; i < shown; ++i) {
        const graph::PathSegment& s = step.segments[i];
        auto* kind = tablekit::textCell(pathview::kindLabel(s.kind));
        kind->setData(kSegmentRole, int(i));
        kind->setForeground(pathview::kindColor(s.kind).darker(140));
        rows.push_back(
            {kind, tablekit::textCell(QString::fromStdString(s.name)),
             tablekit::numberCell(double(s.start - start),
                                  format::nanoseconds(double(s.start - start))),
             tablekit::numberCell(double(s.dur), format::nanoseconds(double(s.dur))),
             tablekit::numberCell(double(s.dur) / double(std::max<int64_t>(step.duration, 1)),
                                  format::percentOf(double(s.dur), double(step.duration)))});
    }
    tablekit::fillTable(segments_, rows);
    if (shown < step.segments.size())
        host_.setStatus(tr("The table lists the first %1 of %2 segments of %3")
                            .arg(shown)
                            .arg(step.segments.size())
                            .arg(QString::fromStdString(step.name)));
}

void CriticalPathTracePanel::showSegment(int row) {
    if (!path_ || step_ < 0) return;
    const graph::StepPath& step = path_->steps[size_t(step_)];
    if (row < 0 || size_t(row) >= step.segments.size()) return;
    const graph::PathSegment& s = step.segments[size_t(row)];
    // A 2 µs kernel alone on the screen says little: keep a fiftieth of the step around it.
    const int64_t context = std::max<int64_t>(s.dur, step.duration / 50);
    host_.showRange(s.start - context, s.start + s.dur + context);
    host_.setStatus(QStringLiteral("%1: %2, %3")
                        .arg(pathview::kindLabel(s.kind), QString::fromStdString(s.name),
                             format::nanoseconds(double(s.dur))));
}

void CriticalPathTracePanel::setShownOnTimeline(bool shown) {
    if (shown == shown_) return;
    shown_ = shown;
    onTimeline_->setChecked(shown);
    if (overlay_) {
        if (shown)
            host_.timeline()->addOverlay(overlay_);
        else
            host_.timeline()->removeOverlay(overlay_.get());
    }
    host_.setStatus(shown ? tr("Critical path shown on the timeline (C hides it)")
                          : tr("Critical path hidden (C shows it)"));
    host_.panelChanged();
}

std::vector<std::shared_ptr<TimelineTrack>> CriticalPathTracePanel::leadingTracks() const {
    if (!path_ || !shown_ || !path_->why.empty() || path_->steps.empty() || !host_.source())
        return {};
    return {std::make_shared<CriticalPathStripTrack>(path_, host_.source()->origin())};
}

std::vector<std::pair<int64_t, std::shared_ptr<TimelineTrack>>>
CriticalPathTracePanel::companionTracks() const {
    std::vector<std::pair<int64_t, std::shared_ptr<TimelineTrack>>> out;
    const auto& lanes = whatif_->previewLanes();
    if (!lanes || !host_.source()) return out;
    for (size_t l = 0; l < lanes->size(); ++l)
        if ((*lanes)[l].track >= 0 && !(*lanes)[l].items.empty())
            out.emplace_back((*lanes)[l].track,
                             std::make_shared<PredictedLaneTrack>(host_.source(), lanes, l,
                                                                  whatif_->previewEdit()));
    return out;
}

QString CriticalPathTracePanel::overviewHtml() const {
    if (!path_) return {};
    if (!path_->why.empty())
        return tr("<h3>Critical path</h3><p>No step graph: %1</p>")
            .arg(QString::fromStdString(path_->why).toHtmlEscaped());
    QString html = tr("<h3>Critical path</h3><p>What ends each step: %1.</p>")
                       .arg(largestKinds(path_->byKind, 4).toHtmlEscaped());
    if (!path_->savings.empty()) {
        html += tr("<p>Recommendations re-simulated on the step graph:</p><ul>");
        std::vector<graph::StepSaving> bySaving = path_->savings;
        std::stable_sort(bySaving.begin(), bySaving.end(),
                         [](const auto& a, const auto& b) { return a.saving() > b.saving(); });
        for (const graph::StepSaving& s : bySaving)
            html += tr("<li><b>%1</b> as %2: %3 a step (%4)</li>")
                        .arg(QString::fromStdString(s.kind).toHtmlEscaped(),
                             QString::fromStdString(s.edit).toHtmlEscaped(),
                             format::nanoseconds(double(s.saving())),
                             format::percentOf(double(s.saving()), double(s.measured)));
        html += "</ul>";
    }
    return html;
}

}  // namespace stallscope
