// axe (WCAG 2.0 and 2.1, A and AA) on the page as it is, one line per failing node. "Label in name"
// (label-content-name-mismatch, WCAG 2.5.3) is one of axe's experimental rules, off unless named: it is on here,
// so a control whose accessible name does not start with the words it shows fails the tour.
import AxeBuilder from '@axe-core/playwright';
import type { Page } from 'playwright-core';

export async function axeViolations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page })
    .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'])
    .options({ rules: { 'label-content-name-mismatch': { enabled: true } } })
    .analyze();
  return results.violations.flatMap((violation) =>
    violation.nodes.map((node) => `${violation.id}: ${node.target.join(' ')} — ${node.failureSummary?.replace(/\s+/g, ' ')}`),
  );
}
