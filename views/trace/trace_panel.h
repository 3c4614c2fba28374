#pragma once

// A panel of the trace view: what the view shows of one registered analysis (core/analysis):
// steps, transfers, the hosts of a run, and this wave's critical path and queries. The trace view
// knows panels only through this interface: it obtains each panel's analysis on a worker, hands
// over the result, and asks each panel what it adds to the tabs, the find bar, the timeline, the
// overview and the suggestions dock. Panels are listed in trace_panel.cpp; a new panel is a
// class here and one line there.

#include <QList>
#include <QObject>
#include <QString>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "core/analysis/analysis.h"
#include "views/common/suggestion_item.h"
#include "views/trace/trace_tracks.h"

class QWidget;

namespace stallscope {

class TimelineTrack;
class TimelineView;

// What a panel may ask of the view it sits in.
class TracePanelHost {
  public:
    virtual ~TracePanelHost() = default;
    virtual TimelineView* timeline() const = 0;
    // Where a panel's keys live: the whole view, so that they work wherever its focus is (a
    // text field still takes its own typing).
    virtual QWidget* keyScope() const = 0;
    virtual const TraceSourcePtr& source() const = 0;
    virtual TraceTimelineBinding* binding() const = 0;
    // Zooms the timeline to [start, end] (store ns) with a margin.
    virtual void showRange(int64_t start, int64_t end) = 0;
    virtual void setStatus(const QString& text) = 0;
    // Brings the panel's tab forward.
    virtual void raisePanel(const QWidget* widget) = 0;
    // The panel's timeline tracks, overview section or suggestions changed.
    virtual void panelChanged() = 0;
    // Store track ids shown on the timeline, in order.
    virtual std::vector<int64_t> shownTrackIds() const = 0;
};

class TracePanel : public QObject {
    Q_OBJECT
  public:
    explicit TracePanel(TracePanelHost& host) : host_(host) {}

    // The registered analysis it shows (core/analysis/registry.h).
    virtual std::string_view analysis() const = 0;
    // Whether it shows anything for this profile (the hosts of a run: run profiles only); null
    // before a profile is open.
    virtual bool appliesTo(const TraceSource*) const { return true; }

    // Its tab (empty title: none) and widgets for the find bar (a step picker).
    virtual QString title() const { return {}; }
    virtual QWidget* widget() { return nullptr; }
    virtual QList<QWidget*> findBarWidgets() { return {}; }
    // Above the overview text (headline cards), and its section of the overview; sections go
    // in overviewOrder() order.
    virtual QWidget* overviewHeader() { return nullptr; }
    virtual QString overviewHtml() const { return {}; }
    virtual int overviewOrder() const { return 0; }

    virtual void setResult(const analysis::Result& result) = 0;
    // Another panel's result arrived (the steps take their recommendations' re-simulated
    // savings from the critical path).
    virtual void otherResult(std::string_view, const analysis::Result&) {}
    // Loading, or why there is no result.
    virtual void showMessage(const QString& text) { host_.setStatus(text); }
    // Another profile was opened: forget the result.
    virtual void clear() = 0;

    // Tracks above the trace's own on the timeline.
    virtual std::vector<std::shared_ptr<TimelineTrack>> leadingTracks() const { return {}; }
    // Tracks right under a trace track (by store id): a what-if's predicted lanes.
    virtual std::vector<std::pair<int64_t, std::shared_ptr<TimelineTrack>>> companionTracks()
        const {
        return {};
    }
    // Its entries of the suggestions dock; panels with lower suggestionOrder() list first.
    virtual QList<SuggestionItem> suggestions() const { return {}; }
    virtual int suggestionOrder() const { return 0; }
    // Shows its suggestion `index` (as suggestions() lists them).
    virtual void showSuggestion(int) {}

  protected:
    TracePanelHost& host_;
};

// Every trace panel, in tab order (trace_panel.cpp).
using TracePanelFactory = std::unique_ptr<TracePanel> (*)(TracePanelHost& host);
const std::vector<TracePanelFactory>& tracePanelFactories();

// A suggestion's evidence as "key=value" pairs: numbers to 6 digits, lists (a run's hosts) by
// their first items and how many more.
QString evidenceText(const QJsonObject& evidence);
QString evidenceNumber(double value);
// "up to 34 % of step time", or for a recommendation that claims no share of its own (its gain
// is counted under another) says so instead of "up to 0.0 %".
QString stepShareText(double sharePct);

}  // namespace stallscope
