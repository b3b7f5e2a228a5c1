import { windowOf, type FindingWindow } from '../engine.js';
import { RULES } from '../rules/index.js';
import type { Finding, Severity } from '../types.js';

const LEVEL: Record<Severity, 'error' | 'warning' | 'note'> = { error: 'error', warning: 'warning', info: 'note' };

function uri(file: string): string {
  // SARIF wants URI references; code scanning resolves relative ones against the repository root.
  return file.split('\\').join('/').split('/').map(encodeURIComponent).join('/').replace(/^\.\//, '');
}

/** SARIF 2.1.0 log for code-scanning uploads (`--format sarif`); at most `limit` results, the rest counted in a notification. */
export function formatSarif(all: readonly Finding[] | FindingWindow, toolVersion: string, limit = Infinity): string {
  const { shown: findings, omitted: rest } = windowOf(all, limit);
  const omitted = rest.errors + rest.warnings + rest.infos;
  const ruleIndex = new Map(RULES.map((r, i) => [r.id, i]));
  const log = {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'cdk8s-kruise',
            version: toolVersion,
            semanticVersion: toolVersion,
            rules: RULES.map((r) => ({
              id: r.id,
              name: r.title.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : '')),
              shortDescription: { text: r.title },
              fullDescription: { text: r.doc },
              help: { text: `${r.doc}\n\nRun \`cdk8s-kruise explain ${r.id}\` for details.` },
              defaultConfiguration: { level: LEVEL[r.severity] },
            })),
          },
        },
        ...(omitted > 0
          ? {
              invocations: [
                {
                  executionSuccessful: true,
                  toolExecutionNotifications: [
                    { level: 'warning', message: { text: `${omitted} more result(s) not listed; raise the limit with --max-findings` } },
                  ],
                },
              ],
            }
          : {}),
        results: findings.map((f) => {
          const logical = [
            ...(f.resource.kind
              ? [
                  {
                    fullyQualifiedName: `${f.resource.kind}/${f.resource.namespace ? `${f.resource.namespace}/` : ''}${f.resource.name}${f.jsonPointer}`,
                    kind: 'resource',
                  },
                ]
              : []),
            // Where the resource is declared in the cdk8s app: the construct path (a declaration in the user's code).
            ...(f.constructPath
              ? [{ name: f.constructPath.split('/').pop(), fullyQualifiedName: f.constructPath, kind: 'declaration' }]
              : []),
          ];
          const physical =
            f.file && f.file !== '<stdin>'
              ? {
                  physicalLocation: {
                    artifactLocation: { uri: uri(f.file) },
                    ...(f.line ? { region: { startLine: f.line, ...(f.column ? { startColumn: f.column } : {}) } } : {}),
                  },
                }
              : {};
          return {
            ruleId: f.ruleId,
            ...(ruleIndex.has(f.ruleId) ? { ruleIndex: ruleIndex.get(f.ruleId) } : {}),
            level: LEVEL[f.severity],
            message: { text: `${f.message}. Fix: ${f.hint}` },
            locations: [{ ...physical, ...(logical.length ? { logicalLocations: logical } : {}) }],
            properties: {
              jsonPointer: f.jsonPointer,
              resource: f.resource,
              ...(f.constructPath ? { constructPath: f.constructPath } : {}),
            },
          };
        }),
      },
    ],
  };
  return JSON.stringify(log, null, 2) + '\n';
}
