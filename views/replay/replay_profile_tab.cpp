#include "views/replay/replay_profile_tab.h"
#include "views/common/async_job.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileInfo>
#include <QHeaderView>
#include <QLineEdit>
#include <QPainter>
#include <QScrollBar>
#include <QSettings>
#include <QSplitter>
#include <QStyle>
#include <QTabWidget>
#include <QTextStream>
#include <QToolButton>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <limits>

#include "core/replay/dependencies.h"
#include "views/common/export.h"
#include "views/common/format.h"
#include "views/common/timeline_view.h"
#include "views/replay/replay_dcache_view.h"
#include "views/replay/replay_overview.h"
#include "views/replay/suggestion_previewer.h"
#include "views/shell/elided_label.h"

namespace stallscope {
namespace {

// Indices of the timeline splitter's widgets.
constexpr int kTimelineIndex = 0;
constexpr int kPreviewIndex = 1;
constexpr int kStripIndex = 2;
// The strip is a summary under the timeline; the Data cache page shows it at full size.
constexpr int kStripMinimumHeight = 140;

}  // namespace

ReplayProfileTab::ReplayProfileTab(const ProfileInfo& profile, const QString& workspacePath,
                                   QWidget* parent)
    : QWidget(parent),
      workspacePath_(workspacePath),
      loadJob_(this,
               [this](const QString& error) {
                   status_->setText(tr("Could not load this profile: %1").arg(error));
                   emit loadFailed(status_->text());
               }),
      dependencyJob_(this) {
    build();
    // The cache hands one load to every user of the document (the suggestions dock too).
    loadJob_.follow(ReplayDocumentCache::instance().load(workspacePath, profile),
                    [this](ReplayDocumentPtr document) { setDocument(std::move(document)); });
    status_->setText(tr("Loading and analysing %1…").arg(QString::fromStdString(profile.name)));
}

ReplayProfileTab::ReplayProfileTab(ReplayDocumentPtr document, QWidget* parent)
    : QWidget(parent), loadJob_(this), dependencyJob_(this) {
    build();
    setDocument(std::move(document));
}

ReplayProfileTab::~ReplayProfileTab() = default;

void ReplayProfileTab::build() {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(buildToolBar());

    pages_ = new QTabWidget(this);
    pages_->setDocumentMode(true);
    pages_->setTabPosition(QTabWidget::South);
    overview_ = new ReplayOverview(pages_);
    pages_->addTab(overview_, tr("Overview"));
    pages_->addTab(buildTimelinePage(), tr("Timeline"));
    updateDetails();  // the hint until something is selected
    dcache_ = new DcacheView(pages_);
    pages_->addTab(dcache_, tr("Data cache"));
    layout->addWidget(pages_, 1);

    connect(wastedPages_, &QCheckBox::toggled, dcache_, &DcacheView::setWastedOverlay);
    connect(wastedPages_, &QCheckBox::toggled, dcacheStrip_, &DcacheView::setWastedOverlay);
    // One time axis for the timeline, the preview (while shown) and both data-cache views.
    navigation_->link(timeline_);
    navigation_->link(preview_, 0, [this] { return previewBox_->isVisible(); });
    navigation_->link(dcache_);
    navigation_->link(dcacheStrip_);
    connect(timeline_, &TimelineView::selectionChanged, this, [this] {
        updateDetails();
        requestDependencies();
    });
    connect(timeline_, &TimelineView::measurementChanged, this, [this] {
        if (auto m = timeline_->measurement(); m && m->length() > 0) {
            status_->setText(timeline_->measurementText(*m));
            dcache_->setSelection(*m);
            dcacheStrip_->setSelection(*m);
        }
    });
    connect(overview_, &ReplayOverview::dmaActivated, this, &ReplayProfileTab::showDma);
    connect(overview_, &ReplayOverview::suggestionActivated, this,
            &ReplayProfileTab::showSuggestion);

    suggestions_ = new SuggestionPreviewer(this);
    connect(suggestions_, &SuggestionPreviewer::shown, this, &ReplayProfileTab::onSuggestionShown);
    connect(suggestions_, &SuggestionPreviewer::ghostsReady, this,
            &ReplayProfileTab::onGhostsReady);
    connect(suggestions_, &SuggestionPreviewer::previewStarted, this,
            &ReplayProfileTab::onPreviewStarted);
    connect(suggestions_, &SuggestionPreviewer::previewReady, this,
            &ReplayProfileTab::onPreviewReady);
    connect(suggestions_, &SuggestionPreviewer::failed, this,
            [this](const QString& message, bool forPreview) {
                (forPreview ? previewLabel_ : status_)
                    ->setText(tr("Could not re-simulate: %1").arg(message));
            });
}

QWidget* ReplayProfileTab::buildToolBar() {
    auto* bar = new QWidget(this);
    auto* barLayout = new QHBoxLayout(bar);
    barLayout->setContentsMargins(6, 4, 6, 4);
    findEdit_ = new QLineEdit(bar);
    findEdit_->setPlaceholderText(tr("Find DMA id or op name"));
    findEdit_->setClearButtonEnabled(true);
    findEdit_->setMaximumWidth(240);
    connect(findEdit_, &QLineEdit::returnPressed, this, [this] {
        if (!find(findEdit_->text()))
            status_->setText(tr("Nothing matches “%1”").arg(findEdit_->text()));
    });
    dependencyMode_ = new QComboBox(bar);
    dependencyMode_->addItems(
        {tr("No dependency arrows"), tr("Conservative dependencies"), tr("Relaxed dependencies")});
    dependencyMode_->setCurrentIndex(2);
    dependencyMode_->setToolTip(
        tr("Arrows into the selected DMA's ISSUE: conservative (direct "
           "producers) or relaxed (lightweight chain and backtail "
           "constraints)"));
    connect(dependencyMode_, &QComboBox::currentIndexChanged, this,
            [this](int index) { setDependencyMode(static_cast<DependencyOverlay::Mode>(index)); });
    wastedPages_ = new QCheckBox(tr("Wasted pages"), bar);
    wastedPages_->setChecked(true);
    wastedPages_->setToolTip(tr("Overlay data-cache pages written and never read"));
    using exporting::ExportTarget;
    using exporting::Format;
    const auto image = [this](const QString& path, QString* error) {
        if (exportImage(path)) return true;
        if (error) *error = status_->text();
        return false;
    };
    const auto text = [](std::function<QString()> content) {
        return [content](const QString& path, QString* error) {
            return exporting::writeTextFile(path, content(), error);
        };
    };
    QToolButton* exportButton = exporting::exportButton(
        bar,
        {ExportTarget{tr("Current view as PNG…"), Format::Png, "replay-view.png", image},
         ExportTarget{tr("Current view as SVG…"), Format::Svg, "replay-view.svg", image},
         ExportTarget{tr("DMA table as CSV…"), Format::Csv, "dmas.csv",
                      text([this] { return dmaCsv(); })},
         ExportTarget{tr("Data-cache heatmap as CSV…"), Format::Csv, "dcache-heatmap.csv",
                      text([this] { return dcache_->heatmapCsv(); })}},
        [this](const QString& message, bool) { status_->setText(message); });
    // Suggestion texts run to hundreds of characters: this line elides, never widens the bar.
    status_ = new ElidedLabel(bar);
    barLayout->addWidget(findEdit_);
    barLayout->addWidget(dependencyMode_);
    barLayout->addWidget(wastedPages_);
    barLayout->addWidget(exportButton);
    barLayout->addWidget(status_, 1);
    return bar;
}

QWidget* ReplayProfileTab::buildTimelinePage() {
    auto* split = new QSplitter(Qt::Horizontal, pages_);
    stack_ = new QSplitter(Qt::Vertical, split);
    timeline_ = new TimelineView(stack_);
    previewBox_ = new QWidget(stack_);
    auto* previewLayout = new QVBoxLayout(previewBox_);
    previewLayout->setContentsMargins(0, 0, 0, 0);
    previewLayout->setSpacing(0);
    auto* caption = new QWidget(previewBox_);
    caption->setStyleSheet(QStringLiteral("background:#fff4d6"));
    auto* captionLayout = new QHBoxLayout(caption);
    captionLayout->setContentsMargins(0, 0, 4, 0);
    previewLabel_ = new ElidedLabel(caption);
    previewLabel_->setMargin(4);
    closePreview_ = new QToolButton(caption);
    closePreview_->setText(tr("Close Preview"));
    closePreview_->setAutoRaise(true);
    closePreview_->setToolTip(tr("Remove the re-simulated timeline; the data-cache strip returns"));
    connect(closePreview_, &QToolButton::clicked, this, &ReplayProfileTab::closePreview);
    captionLayout->addWidget(previewLabel_, 1);
    captionLayout->addWidget(closePreview_);
    preview_ = new TimelineView(previewBox_);
    previewLayout->addWidget(caption);
    previewLayout->addWidget(preview_, 1);
    previewBox_->hide();
    // The data cache under the timeline on one time axis, so a stall can be read against the
    // fragmentation at that moment; the Data cache tab shows the same at full size.
    dcacheStrip_ = new DcacheView(stack_);
    dcacheStrip_->setMinimumHeight(kStripMinimumHeight);
    // Plots under the timeline's data area: its gutter on the left, its margin (and scroll bar
    // when shown) on the right.
    const auto alignStrip = [this] {
        // From the range, not isVisible(): Qt shows or hides the bar later (a queued call), and
        // a bar on a page not on screen is never visible.
        const QScrollBar* bar = timeline_->verticalScrollBar();
        const bool barShown = timeline_->verticalScrollBarPolicy() == Qt::ScrollBarAlwaysOn ||
                              (timeline_->verticalScrollBarPolicy() == Qt::ScrollBarAsNeeded &&
                               bar->maximum() > bar->minimum());
        const int barWidth = timeline_->style()->pixelMetric(QStyle::PM_ScrollBarExtent);
        const int frame = timeline_->frameWidth();
        dcacheStrip_->setCompact(TimelineView::kGutterWidth + frame,
                                 8 + (barShown ? barWidth : 0) + frame);
    };
    alignStrip();
    connect(timeline_->verticalScrollBar(), &QScrollBar::rangeChanged, this, alignStrip);
    stack_->setStretchFactor(kTimelineIndex, 3);
    stack_->setStretchFactor(kPreviewIndex, 3);
    stack_->setStretchFactor(kStripIndex, 2);
    // Only the strip folds away; the timelines keep at least their minimum.
    stack_->setCollapsible(kTimelineIndex, false);
    stack_->setCollapsible(kPreviewIndex, false);
    connect(stack_, &QSplitter::splitterMoved, this, [this] {
        if (previewBox_->isVisibleTo(this)) rememberPreviewSizes();
    });
    details_ = new QTreeWidget(split);
    details_->setColumnCount(2);
    details_->setHeaderLabels({tr("Field"), tr("Value")});
    details_->setRootIsDecorated(false);
    details_->setAlternatingRowColors(true);
    details_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    split->setStretchFactor(0, 4);
    split->setStretchFactor(1, 1);
    return split;
}

void ReplayProfileTab::setDocument(ReplayDocumentPtr document) {
    // The suggestions dock hands over the document the tab's own load brings a moment later.
    if (document && document == doc_) return;
    doc_ = std::move(document);
    if (!doc_) return;
    timeline_->clearTracks();
    tracks_ = installReplayTracks(*timeline_, doc_);
    tracks_.dependencies->setMode(
        static_cast<DependencyOverlay::Mode>(dependencyMode_->currentIndex()));
    overview_->setDocument(doc_);
    dcache_->setDocument(doc_);
    dcacheStrip_->setDocument(doc_);
    const auto& sim = doc_->analysis.sim;
    status_->setText(tr("%1 instructions, %2 DMAs, %3 cycles, %4 stalled")
                         .arg(doc_->trace.instrs.size())
                         .arg(doc_->trace.dmas.size())
                         .arg(format::cycles(doc_->totalCycles()),
                              format::percentOf(double(sim.stallCycles), doc_->totalCycles())));
    emit documentReady();
    // Requests that waited for the document run now.
    suggestions_->setDocument(doc_);
}

void ReplayProfileTab::updateDetails() {
    details_->clear();
    const auto& selection = timeline_->selection();
    if (!selection) {
        auto* hint = new QTreeWidgetItem(details_, {tr("Click a DMA, an op or a unit track")});
        hint->setForeground(0, palette().brush(QPalette::PlaceholderText));
        hint->setFirstColumnSpanned(true);
        return;
    }
    for (const auto& [field, value] : selection->track->details(selection->item))
        new QTreeWidgetItem(details_, {field, value});
}

void ReplayProfileTab::requestDependencies() {
    dependencyJob_.supersede();
    if (!tracks_.dependencies) return;
    tracks_.dependencies->clear();
    timeline_->viewport()->update();
    const auto& selection = timeline_->selection();
    if (!selection || selection->item.id < 0 || !doc_) return;
    const bool isDma =
        std::any_of(tracks_.lanes.begin(), tracks_.lanes.end(),
                    [&](const auto& lane) { return lane.get() == selection->track; });
    if (!isDma) return;
    const size_t dma = static_cast<size_t>(selection->item.id);
    // The dependency sweep walks the trace up to the ISSUE: a worker does it.
    const ReplayDocumentPtr doc = doc_;
    dependencyJob_.start(
        [doc, dma] { return replay::dmaDependencyEdges(doc->trace, doc->analysis.sim, dma); },
        [this, dma](std::vector<replay::DependencyEdge> edges) {
            tracks_.dependencies->setEdges(dma, std::move(edges));
            timeline_->viewport()->update();
            emit dependenciesReady();
        });
}

void ReplayProfileTab::setDependencyMode(DependencyOverlay::Mode mode) {
    if (dependencyMode_->currentIndex() != static_cast<int>(mode))
        dependencyMode_->setCurrentIndex(static_cast<int>(mode));
    if (tracks_.dependencies) tracks_.dependencies->setMode(mode);
    timeline_->viewport()->update();
}

void ReplayProfileTab::showDma(size_t dma) {
    if (!doc_ || dma >= doc_->trace.dmas.size()) return;
    pages_->setCurrentIndex(1);
    DmaLaneTrack* lane = tracks_.laneOf(dma);
    if (!lane) return;
    const TimelineItem item = lane->itemFor(dma);
    const auto& dep = doc_->analysis.deps.dmas;
    const double backtail = dma < dep.size() ? double(dep[dma].backtailCycle) : item.start;
    timeline_->fitRange({std::min(backtail, item.start), item.end}, 0.15);
    timeline_->ensureTrackVisible(lane,
                                  DmaLaneTrack::kTopPad + item.row * DmaLaneTrack::kRowHeight);
    timeline_->select(lane, item);
}

std::optional<int> ReplayProfileTab::shownSuggestion() const {
    return suggestions_->shownSuggestion();
}

const std::optional<SuggestionPreview>& ReplayProfileTab::lastPreview() const {
    return suggestions_->lastPreview();
}

void ReplayProfileTab::showSuggestion(int index) {
    suggestions_->show(index);
    emit suggestionShown(index);
}

void ReplayProfileTab::previewSuggestion(int index) {
    suggestions_->preview(index);
}

void ReplayProfileTab::onSuggestionShown(int index) {
    const auto& s = doc_->analysis.suggestions[size_t(index)];
    for (const auto& lane : tracks_.lanes) {
        lane->setHighlighted({s.dmaIndices.begin(), s.dmaIndices.end()});
        lane->setGhosts({});
    }
    status_->setText(tr("Suggestion %1: %2").arg(index + 1).arg(QString::fromStdString(s.text)));
    if (s.dmaIndices.empty()) return;
    pages_->setCurrentIndex(1);
    timeline_->fitRange(suggestionRange(index), 0.15);
    const size_t first = s.dmaIndices.front();
    DmaLaneTrack* lane = tracks_.laneOf(first);
    timeline_->ensureTrackVisible(
        lane, DmaLaneTrack::kTopPad + lane->shownRow(first) * DmaLaneTrack::kRowHeight);
    timeline_->select(lane, lane->itemFor(first));
}

// Everything a suggestion touches: its DMAs with their backtails and the point they move to.
TimeRange ReplayProfileTab::suggestionRange(int index) const {
    const auto& s = doc_->analysis.suggestions[size_t(index)];
    TimeRange range{std::numeric_limits<double>::max(), 0};
    for (size_t d : s.dmaIndices) {
        const auto& t = doc_->analysis.sim.dmas[d];
        const auto item = tracks_.laneOf(d)->itemFor(d);
        range.start =
            std::min({range.start, item.start, double(doc_->analysis.deps.dmas[d].backtailCycle)});
        range.end = std::max(range.end, std::max(item.end, double(t.completeCycle)));
    }
    if (s.toInstr != replay::kNone && s.toInstr < doc_->analysis.sim.cycle.size())
        range.start = std::min(range.start, double(doc_->analysis.sim.cycle[s.toInstr]));
    return range;
}

void ReplayProfileTab::onGhostsReady(int index, const SuggestionPreview& preview) {
    for (const auto& lane : tracks_.lanes) lane->setGhosts(preview.ghosts);
    if (!doc_->analysis.suggestions[size_t(index)].dmaIndices.empty()) {
        // The ghosts may land left of what the suggestion showed: widen the window to them.
        TimeRange all = suggestionRange(index);
        for (const auto& g : preview.ghosts) {
            all.start = std::min(all.start, g.issueCycle);
            all.end = std::max(all.end, g.completeCycle);
        }
        const TimeRange w = timeline_->window();
        if (all.start < w.start || all.end > w.end) timeline_->fitRange(all, 0.15);
    }
    timeline_->viewport()->update();
    emit ghostsReady();
}

void ReplayProfileTab::onPreviewStarted(int index) {
    previewLabel_->setText(tr("Re-simulating suggestion %1…").arg(index + 1));
    if (previewBox_->isVisibleTo(this)) return;
    // The two timelines take the page: the strip steps aside until the preview closes (the Data
    // cache page has it meanwhile), so the page's minimum height stays what it was.
    sizesWithoutPreview_ = stack_->sizes();
    dcacheStrip_->hide();
    previewBox_->show();
    QList<int> sizes;
    for (const QVariant& size : QSettings().value(kPreviewSizesKey).toList()) sizes << size.toInt();
    if (sizes.size() != stack_->count()) {
        const int half = std::max(1, (sizesWithoutPreview_.value(kTimelineIndex) +
                                      sizesWithoutPreview_.value(kStripIndex)) /
                                         2);
        sizes = {half, half, 0};
    }
    stack_->setSizes(sizes);
}

void ReplayProfileTab::onPreviewReady(int index, const SuggestionPreview& preview) {
    previewDoc_ = preview.edited;
    preview_->clearTracks();
    previewTracks_ = installReplayTracks(*preview_, previewDoc_);
    // Same axis as the original so the saving shows as the shorter run.
    preview_->setExtent(timeline_->extent());
    preview_->setWindow(timeline_->window());
    const double before = doc_->totalCycles();
    previewLabel_->setText(
        tr("Below: re-simulated with suggestion %1 — %2 → %3 cycles, saves %4 cycles (%5)")
            .arg(index + 1)
            .arg(format::cycles(before), format::cycles(previewDoc_->totalCycles()),
                 format::cycles(preview.savingCycles),
                 format::percentOf(preview.savingCycles, before)));
    emit previewReady();
}

void ReplayProfileTab::closePreview() {
    suggestions_->closePreview();
    if (!previewBox_->isVisibleTo(this)) return;
    previewBox_->hide();
    dcacheStrip_->show();
    preview_->clearTracks();
    previewDoc_.reset();
    if (!sizesWithoutPreview_.isEmpty()) stack_->setSizes(sizesWithoutPreview_);
}

void ReplayProfileTab::rememberPreviewSizes() {
    QVariantList sizes;
    for (int size : stack_->sizes()) sizes << size;
    QSettings().setValue(kPreviewSizesKey, sizes);
}

bool ReplayProfileTab::find(const QString& text) {
    if (!doc_ || text.trimmed().isEmpty()) return false;
    bool numeric = false;
    const qint64 id = text.trimmed().toLongLong(&numeric);
    if (numeric) {
        const size_t dma = doc_->trace.dmaIndexById(id);
        if (dma == replay::kNone) return false;
        showDma(dma);
        status_->setText(tr("DMA %1").arg(id));
        return true;
    }
    const auto& runs = doc_->opRuns;
    const size_t n = runs.hlo.size();
    for (size_t k = 0; k < n; ++k) {
        const size_t run = (findCursor_ + k) % n;
        const QString name = QString::fromStdString(doc_->trace.hlos[runs.hlo[run]].name);
        if (!name.contains(text.trimmed(), Qt::CaseInsensitive)) continue;
        findCursor_ = run + 1;  // the next search continues after this one
        pages_->setCurrentIndex(1);
        timeline_->fitRange({runs.starts[run], runs.ends[run]}, 0.2);
        if (tracks_.hlo) {
            timeline_->ensureTrackVisible(tracks_.hlo.get());
            timeline_->select(tracks_.hlo.get(),
                              TimelineItem{int64_t(run), runs.starts[run], runs.ends[run], 1, 0});
        }
        status_->setText(tr("%1 at cycle %2").arg(name, format::cycles(runs.starts[run])));
        return true;
    }
    return false;
}

bool ReplayProfileTab::exportImage(const QString& path) {
    QWidget* page = pages_->currentWidget();
    QSize size;
    std::function<void(QPainter&)> paint;
    if (page == overview_) {
        size = overview_->size();
        paint = [this, size](QPainter& p) { overview_->paintContent(p, size); };
    } else if (page == dcache_) {
        size = dcache_->size();
        paint = [this, size](QPainter& p) { dcache_->paintContent(p, size); };
    } else {
        size = timeline_->viewport()->size();
        paint = [this, size](QPainter& p) { timeline_->paintContent(p, size); };
    }
    QString error;
    bool ok = false;
    if (path.endsWith(QLatin1String(".svg"), Qt::CaseInsensitive)) {
        ok = exporting::writeSvgFile(
            path, size, [&paint](QPainter& p, const QRectF&) { paint(p); },
            QStringLiteral("Stallscope"), &error);
    } else {
        QImage image(size, QImage::Format_ARGB32_Premultiplied);
        image.fill(Qt::white);
        {
            QPainter painter(&image);
            paint(painter);
        }
        ok = exporting::writeImageFile(path, image, &error);
    }
    status_->setText(ok ? tr("Wrote %1").arg(QFileInfo(path).fileName()) : error);
    return ok;
}

QString ReplayProfileTab::dmaCsv() const {
    QString out;
    QTextStream s(&out);
    s << "id,link,bytes,issue_instr,wait_instr,issue_cycle,ready_cycle,start_cycle,complete_cycle,"
         "wait_cycle,base_stall,transfer_stall,slack,backtail_instr,backtail_cycle\n";
    if (!doc_) return out;
    const auto& trace = doc_->trace;
    for (size_t d = 0; d < trace.dmas.size(); ++d) {
        const auto& dma = trace.dmas[d];
        const auto& t = doc_->analysis.sim.dmas[d];
        const auto& dep = doc_->analysis.deps.dmas[d];
        s << dma.id << ',' << QString::fromStdString(trace.machine.linkName(dma.link)) << ','
          << dma.bytes() << ',' << dma.issueInstr << ','
          << (dma.waitInstr == replay::kNone ? QString() : QString::number(dma.waitInstr)) << ','
          << t.issueCycle << ',' << t.readyCycle << ',' << t.startCycle << ',' << t.completeCycle
          << ',' << (t.waitCycle == replay::kNoCycle ? QString() : QString::number(t.waitCycle))
          << ',' << t.baseStall << ',' << t.transferStall << ',' << t.slack << ','
          << dep.backtailInstr << ',' << dep.backtailCycle << '\n';
    }
    return out;
}

}  // namespace stallscope
