#pragma once

#include "importers/import_service.h"

namespace stallscope {

// One accessor per format; registry.cpp lists them in detection order.
const Importer& replayJsonlImporter();
const Importer& replayBinaryImporter();
const Importer& noiseCsvImporter();
const Importer& cpiCsvImporter();
const Importer& ncuCsvImporter();
const Importer& gpgpusimLogImporter();
const Importer& sniperStatsImporter();
const Importer& estimatesCsvImporter();
const Importer& chromeJsonImporter();
const Importer& xspaceImporter();
const Importer& chakraImporter();

}  // namespace stallscope
