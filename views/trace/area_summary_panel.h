#pragma once

// The Area tab of a trace: the slices of an area selection (Shift/right-drag across tracks)
// or of a whole process (its summary: a CUDA API summary over the runtime thread, the kernels
// of a GPU and how busy it was), aggregated by name on a worker.

#include <QWidget>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/trace/area_summary.h"
#include "views/common/async_job.h"
#include "views/trace/trace_tracks.h"

class QLabel;
class QTableWidget;

namespace stallscope {

class AreaSummaryPanel : public QWidget {
    Q_OBJECT
  public:
    explicit AreaSummaryPanel(QWidget* parent = nullptr);

    // Aggregates `tracks` over [from, to] (ns relative to the source's origin). `what` names the
    // area in the heading ("Area", a process's name).
    void summarize(TraceSourcePtr source, std::vector<int64_t> tracks, double from, double to,
                   const QString& what);
    QTableWidget* table() const { return table_; }
    QString headingText() const;
    // The table as CSV (name,count,self_ns,in_range_ns,total_ns,mean_ns).
    QString csv() const;

  signals:
    void ready();
    // A row was activated: the op's name, to find and highlight on the timeline.
    void opActivated(const QString& name);

  private:
    void show(const trace::AreaSummary& summary, double span, size_t trackCount,
              const QString& what);
    QLabel* heading_ = nullptr;
    QTableWidget* table_ = nullptr;
    async::JobSlot job_{this};
    std::shared_ptr<std::atomic<bool>> cancel_;  // the running summary's
};

}  // namespace stallscope
