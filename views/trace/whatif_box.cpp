#include "views/trace/whatif_box.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTemporaryDir>
#include <fstream>

#include "core/errors.h"
#include "core/graph/step_savings.h"
#include "core/graph/whatif.h"
#include "core/trace/trace_store.h"
#include "core/workspace.h"
#include "views/common/format.h"

namespace stallscope {

namespace {

QString resultText(const graph::WhatifResult& r) {
    if (!r.why.empty()) return QObject::tr("No step graph: %1").arg(QString::fromStdString(r.why));
    const double saving = double(r.measuredMedian - r.predictedMedian);
    return QObject::tr(
               "Median step: measured %1, re-simulated %2 (model error %3 %), "
               "<b>predicted %4</b> (%5, %6 over %7 steps)")
        .arg(format::nanoseconds(double(r.measuredMedian)),
             format::nanoseconds(double(r.simulatedMedian)))
        .arg(r.modelErrorPct, 0, 'f', 2)
        .arg(format::nanoseconds(double(r.predictedMedian)),
             saving >= 0 ? QObject::tr("saves %1").arg(format::nanoseconds(saving))
                         : QObject::tr("costs %1").arg(format::nanoseconds(-saving)),
             format::percentOf(saving, double(std::max<int64_t>(r.measuredMedian, 1))))
        .arg(r.steps.size());
}

}  // namespace

WhatifBox::WhatifBox(QWidget* parent)
    : QGroupBox(tr("What if"), parent),
      previewJob_(this, [this](const QString& e) { fail(e); }),
      applyJob_(this, [this](const QString& e) { fail(e); }) {
    kind_ = new QComboBox;
    kind_->addItem(tr("Kernels matching … faster"), int(EditKind::KernelSpeedup));
    kind_->addItem(tr("Collectives faster"), int(EditKind::CommSpeedup));
    kind_->addItem(tr("No input wait (DataLoader)"), int(EditKind::NoInputWait));
    kind_->addItem(tr("CUDA graphs: launch overhead"), int(EditKind::LaunchOverhead));
    kind_->addItem(tr("Remove syncs matching …"), int(EditKind::RemoveSyncs));
    kind_->addItem(tr("Overlap copies matching …"), int(EditKind::OverlapCopies));
    kind_->addItem(tr("Slow ranks like the median rank"), int(EditKind::RankLikeMedian));
    pattern_ = new QLineEdit(QStringLiteral("*gemm*"));
    pattern_->setToolTip(tr("A name pattern: * any run of characters, ? one"));
    value_ = new QDoubleSpinBox;
    value_->setDecimals(2);
    value_->setRange(0.01, 1e9);
    value_->setValue(2);
    valueLabel_ = new QLabel;
    preview_ = new QPushButton(tr("Preview"));
    preview_->setToolTip(tr("Re-simulate the step graph with this edit"));
    apply_ = new QPushButton(tr("Apply as profile"));
    apply_->setToolTip(tr("Save the predicted trace as a profile derived from this one"));
    compare_ = new QPushButton(tr("Compare"));
    compare_->setToolTip(tr("Open this profile and the predicted one side by side"));
    compare_->setEnabled(false);
    result_ =
        new QLabel(tr("Pick an edit (or click a kernel on the path, or a recommendation) "
                      "and Preview it."));
    result_->setWordWrap(true);
    result_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* grid = new QGridLayout(this);
    // The edit (what, which, how much), then what to do with it, then the figures: narrow
    // enough to sit beside the path at 1280x800.
    grid->addWidget(kind_, 0, 0);
    grid->addWidget(pattern_, 0, 1);
    grid->addWidget(valueLabel_, 1, 0, Qt::AlignRight);
    grid->addWidget(value_, 1, 1);
    auto* actions = new QHBoxLayout;
    for (QPushButton* b : {preview_, apply_, compare_}) actions->addWidget(b);
    actions->addStretch(1);
    grid->addLayout(actions, 2, 0, 1, 2);
    grid->addWidget(result_, 3, 0, 1, 2);
    grid->setColumnStretch(1, 1);
    pattern_->setMinimumWidth(120);
    connect(kind_, &QComboBox::currentIndexChanged, this, &WhatifBox::syncControls);
    connect(preview_, &QPushButton::clicked, this, &WhatifBox::preview);
    connect(apply_, &QPushButton::clicked, this, &WhatifBox::apply);
    connect(compare_, &QPushButton::clicked, this, [this] {
        if (derived_) emit compareRequested(*derived_);
    });
    syncControls();
}

void WhatifBox::setProfile(const std::string& workspacePath, int64_t profileId) {
    workspacePath_ = workspacePath;
    profileId_ = profileId;
    derived_.reset();
    compare_->setEnabled(false);
    previewLanes_.reset();
    previewEdit_.clear();
}

void WhatifBox::clearPreview() {
    previewLanes_.reset();
    previewEdit_.clear();
    emit previewed();
}

void WhatifBox::syncControls() {
    const auto kind = EditKind(kind_->currentData().toInt());
    const bool pattern = kind == EditKind::KernelSpeedup || kind == EditKind::RemoveSyncs ||
                         kind == EditKind::OverlapCopies;
    const bool factor = kind == EditKind::KernelSpeedup || kind == EditKind::CommSpeedup;
    pattern_->setEnabled(pattern);
    value_->setEnabled(factor || kind == EditKind::LaunchOverhead);
    valueLabel_->setText(kind == EditKind::LaunchOverhead ? tr("ns per launch")
                                                          : tr("times faster"));
    if (kind == EditKind::RemoveSyncs && pattern_->text().contains("gemm")) pattern_->setText("*");
    if (kind == EditKind::OverlapCopies && pattern_->text().contains("gemm"))
        pattern_->setText("Memcpy*");
    if (kind == EditKind::LaunchOverhead && value_->value() < 10) value_->setValue(1000);
    if (factor && value_->value() > 1000) value_->setValue(2);
}

void WhatifBox::proposeKernel(const QString& name, double factor) {
    kind_->setCurrentIndex(kind_->findData(int(EditKind::KernelSpeedup)));
    pattern_->setText(name);
    value_->setValue(factor);
}

void WhatifBox::proposeRecommendation(const QString& kind) {
    graph::Edits e;
    if (!graph::editForRecommendation(kind.toStdString(), e)) return;
    if (e.noInputWait) kind_->setCurrentIndex(kind_->findData(int(EditKind::NoInputWait)));
    if (!e.removeSyncs.empty()) {
        kind_->setCurrentIndex(kind_->findData(int(EditKind::RemoveSyncs)));
        pattern_->setText(QString::fromStdString(e.removeSyncs.front()));
    }
    if (e.launchOverheadNs) {
        kind_->setCurrentIndex(kind_->findData(int(EditKind::LaunchOverhead)));
        value_->setValue(double(*e.launchOverheadNs));
    }
    if (e.commSpeedup != 1) {
        kind_->setCurrentIndex(kind_->findData(int(EditKind::CommSpeedup)));
        value_->setValue(e.commSpeedup);
    }
}

graph::Edits WhatifBox::edits() const {
    graph::Edits e;
    const std::string pattern = pattern_->text().trimmed().toStdString();
    switch (EditKind(kind_->currentData().toInt())) {
        case EditKind::KernelSpeedup:
            if (pattern.empty()) throw InputError("give a kernel name pattern");
            e.kernelSpeedups.emplace_back(pattern, value_->value());
            break;
        case EditKind::CommSpeedup:
            e.commSpeedup = value_->value();
            break;
        case EditKind::NoInputWait:
            e.noInputWait = true;
            break;
        case EditKind::LaunchOverhead:
            e.launchOverheadNs = int64_t(value_->value());
            break;
        case EditKind::RemoveSyncs:
            e.removeSyncs.push_back(pattern.empty() ? "*" : pattern);
            break;
        case EditKind::OverlapCopies:
            e.overlapCopies.push_back(pattern.empty() ? "*" : pattern);
            break;
        case EditKind::RankLikeMedian:
            e.rankLikeMedian = true;
            break;
    }
    return e;
}

void WhatifBox::fail(const QString& message) {
    preview_->setEnabled(true);
    apply_->setEnabled(true);
    result_->setText(tr("<span style='color:#b02a20'>%1</span>").arg(message.toHtmlEscaped()));
}

void WhatifBox::preview() {
    if (profileId_ < 0) return;
    graph::Edits e;
    try {
        e = edits();
    } catch (const std::exception& error) {
        return fail(QString::fromUtf8(error.what()));
    }
    const std::vector<std::string> described = e.describe();
    const QString edit =
        described.empty() ? tr("unchanged") : QString::fromStdString(described.front());
    result_->setText(tr("Re-simulating…"));
    using Lanes = std::shared_ptr<const std::vector<graph::PredictedLane>>;
    previewJob_.start(
        [path = workspacePath_, id = profileId_, e] {
            const auto ws = Workspace::open(path, Workspace::Mode::ReadOnly);
            graph::Graph g;
            std::vector<graph::Timed> predicted;
            graph::WhatifResult r = graph::whatif(trace::TraceStore(*ws, id), e, &g, &predicted);
            Lanes lanes;
            if (r.why.empty())
                lanes = std::make_shared<const std::vector<graph::PredictedLane>>(
                    graph::predictedLanes(g, predicted));
            return std::pair{std::move(r), std::move(lanes)};
        },
        [this, edit](const std::pair<graph::WhatifResult, Lanes>& done) {
            previewLanes_ = done.second;
            previewEdit_ = edit;
            QString text = resultText(done.first);
            if (previewLanes_)
                text += tr("<br>On the timeline: each re-simulated lane under its track.");
            result_->setText(text);
            emit previewed();
        });
}

void WhatifBox::apply() {
    if (profileId_ < 0) return;
    graph::Edits e;
    try {
        e = edits();
    } catch (const std::exception& error) {
        return fail(QString::fromUtf8(error.what()));
    }
    const std::vector<std::string> described = e.describe();
    const QString edit =
        described.empty() ? tr("unchanged") : QString::fromStdString(described.front());
    apply_->setEnabled(false);
    result_->setText(tr("Re-simulating with %1…").arg(edit));
    // The predicted trace as Chrome JSON, in a folder that lives until the next apply: the
    // window imports it (one transaction, like any file) as a profile derived from this one.
    files_ = std::make_shared<QTemporaryDir>();
    if (!files_->isValid()) return fail(tr("No temporary folder for the predicted trace"));
    const std::string file = files_->filePath("predicted.json").toStdString();
    applyJob_.start(
        [path = workspacePath_, id = profileId_, e, file, keep = files_] {
            const auto ws = Workspace::open(path, Workspace::Mode::ReadOnly);
            const trace::TraceStore store(*ws, id);
            std::ofstream out(file);
            graph::WhatifResult result = graph::whatifWithTrace(store, e, out);
            if (!result.why.empty()) throw InputError(result.why);
            if (!out.flush()) throw Failure(file + ": cannot write the predicted trace");
            const std::optional<ProfileInfo> profile = ws->profile(id);
            return std::pair{result, profile ? QString::fromStdString(profile->name)
                                             : QStringLiteral("profile %1").arg(id)};
        },
        [this, edit, file](const std::pair<graph::WhatifResult, QString>& done) {
            const QString name = tr("%1 · what if %2").arg(done.second, edit);
            previewText_ = resultText(done.first);
            result_->setText(previewText_ + tr("<br>Saving “%1”…").arg(name.toHtmlEscaped()));
            emit saveRequested(QString::fromStdString(file), name, profileId_);
        });
}

void WhatifBox::setSaved(qint64 id, const QString& name) {
    apply_->setEnabled(true);
    derived_ = id;
    compare_->setEnabled(true);
    result_->setText(previewText_ +
                     tr("<br>Saved as “%1”: Compare opens both.").arg(name.toHtmlEscaped()));
    emit saved(id, name);
}

void WhatifBox::saveFailed(const QString& message) {
    fail(message);
}

}  // namespace stallscope
