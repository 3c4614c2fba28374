#pragma once

// JSON fixtures of the trace importer tests, kept out of the moc-scanned test source (moc
// misreads raw string literals holding quotes and backslashes).
namespace fixtures {
extern const char* const kEventTypesJson;
extern const char* const kEdgeCasesJson;
extern const char* const kBlobArgsJson;
extern const char* const kBrokenJson;
extern const char* const kCutJson;
}  // namespace fixtures
