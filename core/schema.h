#pragma once

// The workspace schema: every table of every kind, created and upgraded one version at a time.
// Migrations live here rather than in workspace.cpp so that opening a workspace depends on no
// kind: what a step needs beyond SQL comes from kind-neutral headers (kernel_metric_sets.h).

#include <sqlite3.h>

namespace stallscope::schema {

constexpr int kVersion = 6;

// Brings the schema from `version` to version + 1. Runs inside the migration's transaction.
void migrateFrom(sqlite3* db, int version);

}  // namespace stallscope::schema
