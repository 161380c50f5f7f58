// axe (WCAG 2.0 and 2.1, A and AA) on the page as it is, one line per failing node. "Label in name"
// (label-content-name-mismatch, WCAG 2.5.3) is one of axe's experimental rules, off unless named: it is on here,
// so a control whose accessible name does not start with the words it shows fails the tour.
import AxeBuilder from '@axe-core/playwright';
import type { RunOptions } from 'axe-core';
import type { Page } from 'playwright-core';

/** Only violations are read: the passing nodes' details (most of a result's size, sent back over the wire) are not kept. */
const SCAN_OPTIONS: RunOptions = { resultTypes: ['violations'] };

/**
 * An axe scan of the page, run with axe.run in the page itself. The builder's default (axe.runPartial in each frame,
 * then axe.finishRun in a blank page it opens for the purpose) took 2.2-3.0 s a scan here against 0.6-0.9 s, most of
 * the e2e project's CPU; the console has no frames of another origin, so both find the same violations.
 */
export const axeScan = (page: Page): AxeBuilder => new AxeBuilder({ page }).setLegacyMode(true).options(SCAN_OPTIONS);

export async function axeViolations(page: Page): Promise<string[]> {
  const results = await axeScan(page)
    .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'])
    .options({ ...SCAN_OPTIONS, rules: { 'label-content-name-mismatch': { enabled: true } } })
    .analyze();
  return results.violations.flatMap((violation) =>
    violation.nodes.map((node) => `${violation.id}: ${node.target.join(' ')} — ${node.failureSummary?.replace(/\s+/g, ' ')}`),
  );
}
