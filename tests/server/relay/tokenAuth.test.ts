import { describe, expect, it } from 'vitest';
import { ipAllowed } from '../../../server/relay/tokenAuth';

describe('token IP allowlists', () => {
  it('allows everything when the list is empty', () => {
    expect(ipAllowed('203.0.113.9', null)).toBe(true);
    expect(ipAllowed('203.0.113.9', '')).toBe(true);
  });

  it('matches single addresses and CIDR ranges, IPv4 and IPv6', () => {
    const list = '10.0.0.0/8,192.168.1.7,2001:db8::/32,::1';
    expect(ipAllowed('10.200.3.4', list)).toBe(true);
    expect(ipAllowed('11.0.0.1', list)).toBe(false);
    expect(ipAllowed('192.168.1.7', list)).toBe(true);
    expect(ipAllowed('192.168.1.8', list)).toBe(false);
    expect(ipAllowed('2001:db8:1::5', list)).toBe(true);
    expect(ipAllowed('2001:db9::5', list)).toBe(false);
    expect(ipAllowed('::1', list)).toBe(true);
    expect(ipAllowed('::ffff:10.1.2.3', list)).toBe(true);
    expect(ipAllowed('not-an-ip', list)).toBe(false);
  });
});
