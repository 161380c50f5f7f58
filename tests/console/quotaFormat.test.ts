// Quota shown as money: two decimals, as the spec says, except that an amount
// which is not nothing never reads as $0.00 (a cheap call, a budget's first
// spend): it keeps two significant digits.
import { describe, expect, it } from 'vitest';
import { formatQuota } from '../../src/quota';

const dollars = { display_in_currency: true, quota_per_unit: 500_000 };
const counts = { display_in_currency: false, quota_per_unit: 500_000 };

describe('formatQuota', () => {
  it('shows dollars with two decimals', () => {
    expect(formatQuota(500_000, dollars)).toBe('$1.00');
    expect(formatQuota(1_234_567, dollars)).toBe('$2.47');
    expect(formatQuota(0, dollars)).toBe('$0.00');
    expect(formatQuota(2_500, dollars)).toBe('$0.01');
  });

  it('keeps two significant digits of an amount too small for two decimals', () => {
    expect(formatQuota(600, dollars)).toBe('$0.0012');
    expect(formatQuota(2_499, dollars)).toBe('$0.0050');
    expect(formatQuota(1, dollars)).toBe('$0.0000020');
    expect(formatQuota(-600, dollars)).toBe('$-0.0012');
  });

  it('honours wider digits, and counts when money is off', () => {
    expect(formatQuota(600, dollars, 6)).toBe('$0.001200');
    expect(formatQuota(600, counts)).toBe('600');
    expect(formatQuota(2_500_000, counts)).toBe('2.5M');
  });
});
