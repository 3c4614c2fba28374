#include "importers/registry.h"

namespace stallscope {

const std::vector<const Importer*>& importers() {
    static const std::vector<const Importer*> all{
        &replayBinaryImporter(), &replayJsonlImporter(),  &noiseCsvImporter(),
        &cpiCsvImporter(),       &ncuCsvImporter(),       &gpgpusimLogImporter(),
        &sniperStatsImporter(),  &estimatesCsvImporter(), &chromeJsonImporter(),
        &xspaceImporter(),       &chakraImporter()};
    return all;
}

}  // namespace stallscope
