#pragma once

// What the GUI and `render` do with each kind of profile, in one table beside core/kinds.h: the
// view a profile opens in, the side-by-side view of two, the suggestions a view derives for the
// dock, and the headless renderers. The main window and render.cpp ask here instead of switching
// on the kind string.

#include <QList>
#include <QString>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/workspace.h"
#include "views/common/render.h"
#include "views/common/suggestion_item.h"

class QObject;
class QWidget;

namespace stallscope {

struct ViewKind {
    using ViewFactory =
        std::function<QWidget*(const ProfileInfo& profile, const QString& workspacePath)>;
    using ComparisonFactory = std::function<QWidget*(const ProfileInfo& a, const ProfileInfo& b,
                                                     const QString& workspacePath)>;
    using SuggestionsHandler = std::function<void(const QList<SuggestionItem>&)>;
    // Connects `view` (made by createView) so that `handler` receives, in `context`, the
    // suggestions the view derives once its data is loaded.
    using SuggestionsWatch =
        std::function<void(QWidget* view, QObject* context, SuggestionsHandler handler)>;

    std::string_view name;  // as in core/kinds.h
    ViewFactory createView;
    ComparisonFactory createComparison;  // empty: no side-by-side view
    SuggestionsWatch watchSuggestions;   // empty: the view derives none
    // Shows suggestion `index` (as the view announced it) in `view`; empty: nothing to show.
    std::function<void(QWidget* view, int index)> showSuggestion;
    // `render VIEW` names this kind draws, e.g. "timeline", "dcache".
    std::vector<std::pair<std::string, Renderer>> renderers;
    // Re-simulates suggestion `index` in `view` (apply: and saves the result as a derived
    // profile); empty: the kind's suggestions cannot be applied (replay tabs have their own).
    std::function<void(QWidget* view, int index, bool apply)> previewSuggestion;
};

// Every kind with views, in core/kinds.h's order.
const std::vector<ViewKind>& viewKinds();
// nullptr for a kind without views (its profiles open as a summary page).
const ViewKind* findViewKind(std::string_view name);

// Every view `render` knows, from the table.
const std::vector<RendererEntry>& renderers();
// Renders `view` of `profile`. Throws InputError when the view does not exist or does not apply
// to the profile's kind.
QImage renderView(const std::string& view, const Workspace& workspace, const ProfileInfo& profile,
                  const RenderOptions& options);

}  // namespace stallscope
