#pragma once

// What-if on the step graph of the open trace, in the Critical path tab: pick an edit (from a
// recommendation, from a kernel on the path, or by hand), Preview re-simulates it (measured,
// simulated and predicted median step), Apply saves the predicted trace as a profile derived
// from this one (the window imports it), and Compare opens the two side by side. A Preview's
// re-simulated lanes are kept for the timeline (under the tracks they re-simulate). Work runs on
// workers over their own connections (core/graph/whatif.h).

#include <QGroupBox>
#include <memory>
#include <optional>

#include "core/graph/edits.h"
#include "core/graph/whatif.h"
#include "views/common/async_job.h"

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QTemporaryDir;

namespace stallscope {

class WhatifBox : public QGroupBox {
    Q_OBJECT
  public:
    enum class EditKind {
        KernelSpeedup,
        CommSpeedup,
        NoInputWait,
        LaunchOverhead,
        RemoveSyncs,
        OverlapCopies,
        RankLikeMedian
    };
    explicit WhatifBox(QWidget* parent = nullptr);

    void setProfile(const std::string& workspacePath, int64_t profileId);
    // Fills the controls with an edit: a kernel made `factor` times faster, or the edit that
    // stands for a step recommendation (graph/step_savings.h).
    void proposeKernel(const QString& name, double factor = 2);
    void proposeRecommendation(const QString& kind);
    graph::Edits edits() const;  // as the controls say (throws InputError when invalid)

    void preview();
    // Re-simulates and writes the predicted trace, then asks for it to be saved
    // (saveRequested); the window answers with setSaved or saveFailed.
    void apply();
    void setSaved(qint64 id, const QString& name);
    void saveFailed(const QString& message);
    QLabel* result() const { return result_; }
    // The last Preview's lanes re-simulated (null before one, or once another profile opened),
    // and its edit as words.
    const std::shared_ptr<const std::vector<graph::PredictedLane>>& previewLanes() const {
        return previewLanes_;
    }
    const QString& previewEdit() const { return previewEdit_; }
    void clearPreview();
    QPushButton* compareButton() const { return compare_; }
    std::optional<qint64> derived() const { return derived_; }

  signals:
    void previewed();
    // The predicted trace was saved as profile `id`; Compare asks for the pair.
    void saveRequested(const QString& predictedTrace, const QString& name, qint64 parentId);
    void saved(qint64 id, const QString& name);
    void compareRequested(qint64 derivedId);

  private:
    void syncControls();
    void fail(const QString& message);

    std::string workspacePath_;
    int64_t profileId_ = -1;
    QComboBox* kind_ = nullptr;
    QLineEdit* pattern_ = nullptr;
    QDoubleSpinBox* value_ = nullptr;
    QLabel* valueLabel_ = nullptr;
    QPushButton* preview_ = nullptr;
    QPushButton* apply_ = nullptr;
    QPushButton* compare_ = nullptr;
    QLabel* result_ = nullptr;
    std::optional<qint64> derived_;
    QString previewText_;
    std::shared_ptr<const std::vector<graph::PredictedLane>> previewLanes_;
    QString previewEdit_;
    std::shared_ptr<QTemporaryDir> files_;
    async::JobSlot previewJob_, applyJob_;
};

}  // namespace stallscope
