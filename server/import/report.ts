// The import's report as the operator reads it in a terminal. It names rows
// by id and name only: no key of any kind is ever part of it.
import type { ImportReport, QuotaTotals } from './importer';

const figure = (value: number) => value.toLocaleString('en-US');
const totalsLine = (label: string, totals: QuotaTotals) =>
  `  ${label.padEnd(22)} user quota ${figure(totals.userQuota).padStart(16)}   used ${figure(totals.userUsedQuota).padStart(16)}   token balances ${figure(totals.tokenRemainQuota).padStart(16)}`;

export function formatReport(report: ImportReport): string {
  const lines: string[] = [];
  const mode = report.applied ? 'IMPORT' : 'DRY RUN (nothing written; add --apply to import)';
  lines.push(`Switchboard import: ${mode}`);
  lines.push(`  source: ${report.source}`);
  lines.push(`  looks like: ${report.detected.version}`);
  if (report.merge) lines.push("  --merge: ids offset after the target's, clashes renamed or left out");
  if (report.refused) lines.push(`  REFUSED: ${report.refused}`);
  if (report.replacedRoot) lines.push(`  note: ${report.replacedRoot}`);
  if (report.resumed)
    lines.push(
      '  resumed: the users, tokens, channels, codes and options of this source were imported before; only the logs not yet copied are copied',
    );
  lines.push('');
  lines.push('  table          source   carried   left out');
  for (const table of report.tables) {
    const leftOut = table.leftOut.reduce((sum, entry) => sum + entry.count, 0);
    lines.push(
      `  ${table.table.padEnd(12)} ${String(table.source).padStart(8)} ${String(table.carried).padStart(9)} ${String(leftOut).padStart(10)}`,
    );
  }
  if (!report.withLogs) lines.push('  logs: not moved (add --with-logs)');
  lines.push('  abilities: rebuilt from the carried channels');
  const leftOut = report.tables.flatMap((table) =>
    table.leftOut.map(
      (entry) =>
        `  ${table.table}: ${entry.count} ${entry.reason} (${entry.examples.join(', ')}${entry.count > entry.examples.length ? ', ...' : ''})`,
    ),
  );
  if (leftOut.length) lines.push('', 'Left out, and why:', ...leftOut);
  if (report.unknownOptions.length) lines.push('', `Options with no meaning here (left out): ${report.unknownOptions.join(', ')}`);
  if (report.notCarried.length)
    lines.push('', 'Source settings with no place here (not carried):', ...report.notCarried.map((entry) => `  ${entry}`));
  if (report.renumbered.length) lines.push('', 'Channel types renumbered:', ...report.renumbered.map((entry) => `  ${entry}`));
  if (report.clashes.length) lines.push('', 'Clashes with the target:', ...report.clashes.map((entry) => `  ${entry}`));
  lines.push('', 'Quota totals:');
  lines.push(totalsLine('source (live rows)', report.totals.source));
  lines.push(totalsLine('carried', report.totals.carried));
  lines.push(totalsLine('target before', report.totals.targetBefore));
  lines.push(totalsLine(report.applied ? 'target after' : 'target after (would be)', report.totals.targetAfter));
  lines.push('', `Took ${(report.elapsedMs / 1000).toFixed(1)} s.`);
  return lines.join('\n');
}
