import { formatJson } from '../policy/format/json.js';
import { formatSarif } from '../policy/format/sarif.js';
import { formatText } from '../policy/format/text.js';
import type { FindingWindow } from '../policy/engine.js';
import type { Finding } from '../policy/types.js';
import { packageVersion } from '../version.js';
import { DEFAULT_MAX_FINDINGS, type Format } from './report.js';

export function renderReport(
  format: Format,
  findings: readonly Finding[] | FindingWindow,
  counts: { documents: number; files: number },
  limit = DEFAULT_MAX_FINDINGS,
): string {
  const stats = { documents: counts.documents, files: counts.files };
  switch (format) {
    case 'json':
      return formatJson(findings, stats, limit);
    case 'sarif':
      return formatSarif(findings, packageVersion(), limit);
    default:
      return formatText(findings, stats, limit);
  }
}
