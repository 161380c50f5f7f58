// Which stream URLs an upstream's answer may send the relay to: the vendor's
// own hosts over https, or the channel's own origin; nothing else.
import { describe, expect, it } from 'vitest';
import { followableUrl } from '../../../server/relay/followedStream';
import type { ChannelConfig } from '../../../server/protocols/types';

const HOSTS = ['replicate.com'];
const channel = (baseUrl: string): ChannelConfig => ({ type: 46, key: 'r8_x', baseUrl, other: '' });
const followable = (url: string, baseUrl = '') => followableUrl(url, channel(baseUrl), HOSTS)?.href;

describe('followableUrl', () => {
  it('follows the vendor’s hosts and their subdomains over https on the default port', () => {
    expect(followable('https://stream.replicate.com/v1/files/bcwr-abc')).toBe('https://stream.replicate.com/v1/files/bcwr-abc');
    expect(followable('https://streaming.api.replicate.com/v1/predictions/p1')).toBe(
      'https://streaming.api.replicate.com/v1/predictions/p1',
    );
    expect(followable('https://api.replicate.com:443/v1/predictions/p1')).toBe('https://api.replicate.com/v1/predictions/p1');
    expect(followable('https://REPLICATE.com/x')).toBe('https://replicate.com/x');
  });

  it('refuses plain http, another port, look-alike hosts, credentials in the URL and what is not a URL', () => {
    expect(followable('http://stream.replicate.com/v1/files/x')).toBeUndefined();
    expect(followable('https://stream.replicate.com:8443/x')).toBeUndefined();
    expect(followable('https://evilreplicate.com/x')).toBeUndefined();
    expect(followable('https://replicate.com.evil.example/x')).toBeUndefined();
    expect(followable('https://user:pass@stream.replicate.com/x')).toBeUndefined();
    expect(followable('https://169.254.169.254/latest/meta-data/')).toBeUndefined();
    expect(followable('/v1/files/x')).toBeUndefined();
    expect(followable('file:///etc/passwd')).toBeUndefined();
  });

  it('follows the channel’s own base URL origin (a proxy, a loopback emulator), and no other port or host of it', () => {
    expect(followable('http://127.0.0.1:4010/v1/streams/p1', 'http://127.0.0.1:4010')).toBe('http://127.0.0.1:4010/v1/streams/p1');
    expect(followable('http://127.0.0.1:4011/v1/streams/p1', 'http://127.0.0.1:4010')).toBeUndefined();
    expect(followable('http://localhost:4010/v1/streams/p1', 'http://127.0.0.1:4010')).toBeUndefined();
    expect(followable('https://10.0.0.5/x', 'not a url')).toBeUndefined();
  });
});
