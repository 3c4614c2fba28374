#pragma once

// Before/after of two noise-injection profiles (issue 8 "other kinds"): the summary line,
// absorption curves of A and B overlaid, the delta table with CSV export, and the headless render.

#include <QImage>
#include <QWidget>
#include <map>
#include <string>
#include <vector>

#include "core/compare/kind_compare.h"
#include "core/noise/absorption.h"
#include "core/workspace.h"
#include "views/common/async_job.h"
#include "views/common/line_chart.h"
#include "views/common/render.h"

class QComboBox;
class QLabel;
class QTableWidget;

namespace stallscope {

struct NoiseCompareGroup {
    std::string machine, region;
    std::map<std::string, std::string> params;
    QString label() const;
};
std::vector<NoiseCompareGroup> noiseCompareGroups(const NoiseComparison& c);
// Both profiles' median runtime vs k per mode, normalized to A's plateau t0 (so B's shift in
// runtime shows): A solid with points, B dashed, same colour per mode; k1 marked (A dashed, B
// dotted).
charts::ChartSpec noiseOverlayChart(const NoiseComparison& c, const NoiseCompareGroup& group,
                                    double yClip = 3.0);
QString noiseComparisonCsv(const NoiseComparison& c);

class NoiseCompareView : public QWidget {
    Q_OBJECT
  public:
    NoiseCompareView(const ProfileInfo& a, const ProfileInfo& b, const QString& workspacePath,
                     QWidget* parent = nullptr);
    explicit NoiseCompareView(NoiseComparison comparison, QWidget* parent = nullptr);

    bool isLoaded() const { return loaded_; }
    const NoiseComparison& comparison() const { return c_; }
    QString summary() const;
    QComboBox* groupBox() const { return group_; }
    QTableWidget* table() const { return table_; }
    QString csv() const { return noiseComparisonCsv(c_); }
    bool exportCsv(const QString& path, QString* error = nullptr) const;

  signals:
    void loaded();

  private:
    void showLoadError(const QString& error);
    async::JobSlot loadJob_{this, [this](const QString& error) { showLoadError(error); }};
    void build();
    void showData(NoiseComparison comparison);
    void showGroup(int index);

    NoiseComparison c_;
    std::vector<NoiseCompareGroup> groups_;
    bool loaded_ = false;
    QLabel* summary_ = nullptr;
    QComboBox* group_ = nullptr;
    QWidget* chartHolder_ = nullptr;
    QTableWidget* table_ = nullptr;
};

QImage renderNoiseCompare(const Workspace& workspace, const ProfileInfo& profile,
                          const RenderOptions& options);
QImage renderNoiseComparison(const NoiseComparison& c, QSize size);

}  // namespace stallscope
