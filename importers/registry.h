#pragma once

#include "import_service.h"

namespace stallscope {

// One accessor per format; registry.cpp lists them in detection order.
const Importer& replayJsonlImporter();
const Importer& replayBinaryImporter();

}  // namespace stallscope
