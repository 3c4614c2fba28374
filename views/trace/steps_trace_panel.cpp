#include "views/trace/steps_trace_panel.h"

#include <QComboBox>
#include <QShortcut>
#include <algorithm>

#include "core/analysis/analysis.h"
#include "core/graph/critical_path.h"
#include "views/common/format.h"
#include "views/common/timeline_view.h"
#include "views/trace/step_tracks.h"
#include "views/trace/steps_panel.h"
#include "views/trace/utilisation_track.h"

namespace stallscope {

namespace {

QString htmlEscape(const QString& s) {
    return s.toHtmlEscaped();
}

// "; re-simulated: 60.3 ms a step (34 %) with no input wait", beside the bound.
QString resimulatedText(const graph::StepSaving* s) {
    if (!s) return {};
    return QObject::tr("; re-simulated: %1 a step (%2) with %3")
        .arg(format::nanoseconds(double(s->saving())),
             format::percentOf(double(s->saving()), double(std::max<int64_t>(s->measured, 1))),
             QString::fromStdString(s->edit));
}

}  // namespace

StepsTracePanel::StepsTracePanel(TracePanelHost& host) : TracePanel(host) {
    panel_ = new StepsPanel;
    picker_ = new QComboBox;
    picker_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    picker_->setToolTip(tr("Zoom to a step ([ and ] go to the previous and next step)"));
    picker_->setEnabled(false);
    picker_->addItem(tr("Steps…"));
    connect(picker_, &QComboBox::activated, this, [this](int index) {
        if (index > 0) showStep(index - 1);
    });
    for (const auto& [key, delta] :
         {std::pair{Qt::Key_BracketLeft, -1}, std::pair{Qt::Key_BracketRight, 1}}) {
        auto* shortcut = new QShortcut(QKeySequence(key), host_.keyScope());
        shortcut->setContext(Qt::WidgetWithChildrenShortcut);
        connect(shortcut, &QShortcut::activated, this, [this, delta = delta] {
            if (!steps_ || steps_->steps.empty()) return;
            const int current = picker_->currentIndex() - 1;
            const int next =
                std::clamp(current < 0 ? 0 : current + delta, 0, int(steps_->steps.size()) - 1);
            showStep(next);
        });
    }
    connect(panel_, &StepsPanel::stepActivated, this, &StepsTracePanel::showStep);
    connect(panel_, &StepsPanel::rangeActivated, this,
            [this](int64_t start, int64_t end, int64_t) { host_.showRange(start, end); });
    connect(panel_, &StepsPanel::recommendationActivated, this,
            &StepsTracePanel::showRecommendation);
    connect(panel_, &StepsPanel::deviceChanged, this, &StepsTracePanel::setDevice);
    // Whatever moved the timeline (a recommendation, [ ], the steps table, a zoom), the picker
    // names the step shown.
    connect(host_.timeline(), &TimelineView::windowChanged, this,
            [this](TimeRange window) { followWindow(window); });
}

void StepsTracePanel::followWindow(TimeRange window) {
    if (!steps_ || !host_.source()) return;
    const double origin = double(host_.source()->origin());
    const double middle = (window.start + window.end) / 2 + origin;
    int shown = 0;  // "Steps…": the window is not one step
    for (const trace::Step& s : steps_->steps)
        if (double(s.start) <= middle && middle < double(s.end) &&
            window.length() <= 1.5 * double(s.duration())) {
            shown = s.index + 1;
            break;
        }
    picker_->setCurrentIndex(shown);
}

StepsTracePanel::~StepsTracePanel() {
    // Widgets the view never took in are the panel's own.
    for (QWidget* w : std::initializer_list<QWidget*>{panel_, picker_})
        if (w && !w->parent()) delete w;
}

QWidget* StepsTracePanel::widget() {
    return panel_;
}

QList<QWidget*> StepsTracePanel::findBarWidgets() {
    return {picker_};
}

void StepsTracePanel::setResult(const analysis::Result& result) {
    setAnalysis(std::static_pointer_cast<const trace::StepAnalysis>(result));
}

void StepsTracePanel::showMessage(const QString& text) {
    panel_->showMessage(text);
}

void StepsTracePanel::otherResult(std::string_view name, const analysis::Result& result) {
    if (name != "critical_path") return;
    const auto path = std::static_pointer_cast<const graph::CriticalPath>(result);
    savings_ = path ? path->savings : std::vector<graph::StepSaving>{};
    if (steps_) host_.panelChanged();
}

const graph::StepSaving* StepsTracePanel::savingOf(const trace::StepRecommendation& r) const {
    for (const graph::StepSaving& s : savings_)
        if (s.kind == r.kind) return &s;
    return nullptr;
}

std::vector<int> StepsTracePanel::byResimulatedSaving() const {
    std::vector<int> order;
    if (!steps_) return order;
    for (size_t i = 0; i < steps_->recommendations.size(); ++i) order.push_back(int(i));
    const auto key = [this](int i) {
        const graph::StepSaving* s = savingOf(steps_->recommendations[size_t(i)]);
        return s ? s->saving() : INT64_MIN;
    };
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return key(a) > key(b); });
    return order;
}

std::optional<QString> StepsTracePanel::editKindOf(int index) const {
    const std::vector<int> order = byResimulatedSaving();
    if (index < 0 || size_t(index) >= order.size()) return std::nullopt;
    const trace::StepRecommendation& r = steps_->recommendations[size_t(order[size_t(index)])];
    if (!savingOf(r)) return std::nullopt;
    return QString::fromStdString(r.kind);
}

void StepsTracePanel::showSuggestion(int index) {
    const std::vector<int> order = byResimulatedSaving();
    if (index >= 0 && size_t(index) < order.size()) showRecommendation(order[size_t(index)]);
}

void StepsTracePanel::clear() {
    savings_.clear();
    if (boundaries_) host_.timeline()->removeOverlay(boundaries_.get());
    boundaries_.reset();
    steps_.reset();
    utilisation_.clear();
}

void StepsTracePanel::setAnalysis(std::shared_ptr<const trace::StepAnalysis> analysis) {
    steps_ = std::move(analysis);
    utilisation_.clear();
    if (boundaries_) host_.timeline()->removeOverlay(boundaries_.get());
    boundaries_.reset();
    picker_->clear();
    picker_->addItem(tr("Steps…"));
    picker_->setEnabled(steps_ && !steps_->steps.empty());
    const TraceSourcePtr& source = host_.source();
    if (!steps_ || !source) return;
    for (const trace::Step& s : steps_->steps)
        picker_->addItem(tr("%1 · %2").arg(steps::stepName(s),
                                           format::nanoseconds(double(steps_->stepTime(s.index)))));
    panel_->setAnalysis(steps_);
    if (steps_->source != trace::StepSource::WholeTrace) {
        boundaries_ = std::make_shared<StepBoundaryOverlay>(steps_, source->origin());
        host_.timeline()->addOverlay(boundaries_);
    }
    device_ = panel_->device();
    host_.panelChanged();
    emit stepsReady();
}

void StepsTracePanel::setDevice(int device) {
    device_ = device;
    host_.panelChanged();
}

std::vector<std::shared_ptr<TimelineTrack>> StepsTracePanel::leadingTracks() const {
    if (!steps_ || steps_->devices.empty() || !host_.source()) return {};
    const int device = std::clamp(device_, 0, int(steps_->devices.size()) - 1);
    std::shared_ptr<TimelineTrack>& utilisation = utilisation_[device];
    if (!utilisation) {
        auto track = std::make_shared<DeviceUtilisationTrack>(host_.source(),
                                                              steps_->devices[size_t(device)]);
        // The window's first frame does not wait for every device activity (10^8 slices).
        track->setReadsInBackground(true);
        utilisation = std::move(track);
    }
    return {std::make_shared<StepStripTrack>(steps_, host_.source()->origin(), device),
            utilisation};
}

void StepsTracePanel::showStep(int index) {
    if (!steps_ || index < 0 || size_t(index) >= steps_->steps.size()) return;
    const trace::Step& s = steps_->steps[size_t(index)];
    picker_->setCurrentIndex(index + 1);
    host_.showRange(s.start, s.end);
}

void StepsTracePanel::showRecommendation(int index) {
    if (!steps_ || index < 0 || size_t(index) >= steps_->recommendations.size()) return;
    const trace::StepRecommendation& r = steps_->recommendations[size_t(index)];
    if (r.end > r.start) host_.showRange(r.start, r.end);
    host_.setStatus(QString::fromStdString(r.text));
}

// Steps first: where the time goes and what to change is what people open a trace for.
QString StepsTracePanel::overviewHtml() const {
    if (!steps_) return {};
    QString html = "<h3>Steps</h3><p>" + htmlEscape(stepOverviewText(*steps_)) + "</p>";
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
        for (const int i : byResimulatedSaving()) {
            const trace::StepRecommendation& r = steps_->recommendations[size_t(i)];
            html +=
                QStringLiteral("<li><b>%1</b> (%2%3): %4</li>")
                    .arg(htmlEscape(QString::fromStdString(r.kind)), stepShareText(r.sharePct),
                         resimulatedText(savingOf(r)), htmlEscape(QString::fromStdString(r.text)));
        }
        html += "</ol>";
    }
    return html;
}

QList<SuggestionItem> StepsTracePanel::suggestions() const {
    QList<SuggestionItem> items;
    if (!steps_) return items;
    for (const int i : byResimulatedSaving()) {
        const trace::StepRecommendation& r = steps_->recommendations[size_t(i)];
        SuggestionItem item;
        item.kind = QString::fromStdString(r.kind);
        item.text = tr("%1 (%2%3)")
                        .arg(QString::fromStdString(r.text), stepShareText(r.sharePct),
                             resimulatedText(savingOf(r)));
        item.evidence = evidenceText(r.evidence);
        // An edit expresses it: Preview and Apply re-simulate it in the what-if.
        item.canApply = savingOf(r) != nullptr;
        if (!item.canApply)
            item.whyNotApplicable =
                tr("No edit re-simulates this recommendation: its share is an upper bound");
        items.append(item);
    }
    return items;
}

}  // namespace stallscope
