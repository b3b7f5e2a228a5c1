import { formatJson } from '../policy/format/json.js';
import { formatSarif } from '../policy/format/sarif.js';
import { formatText } from '../policy/format/text.js';
import type { Finding } from '../policy/types.js';
import { packageVersion } from '../version.js';
import type { Format } from './report.js';

export function renderReport(format: Format, findings: readonly Finding[], counts: { documents: number; files: number }): string {
  const stats = { documents: counts.documents, files: counts.files };
  switch (format) {
    case 'json':
      return formatJson(findings, stats);
    case 'sarif':
      return formatSarif(findings, packageVersion());
    default:
      return formatText(findings, stats);
  }
}
