import { describe, expect, it } from 'vitest';
import { visibleMenuItems } from '../../src/menu';

// The menu is generated from the resource registry; one-api's order and roles stay.
describe('top menu', () => {
  const paths = (role: number | undefined, chat: boolean) => visibleMenuItems(role, chat).map((item) => item.to);

  it('shows an admin every entry in order, top-up between redemption codes and users', () => {
    expect(paths(10, true)).toEqual([
      '/',
      '/channel',
      '/token',
      '/redemption',
      '/topup',
      '/user',
      '/log',
      '/task',
      '/audit',
      '/webhook',
      '/pricing',
      '/playground',
      '/organization',
      '/setting',
      '/about',
      '/chat',
    ]);
  });

  it('hides admin entries from users and visitors, and Chat without a chat link', () => {
    expect(paths(1, false)).toEqual([
      '/',
      '/token',
      '/topup',
      '/log',
      '/task',
      '/pricing',
      '/playground',
      '/organization',
      '/setting',
      '/about',
    ]);
    expect(paths(undefined, false)).toEqual(['/', '/token', '/topup', '/log', '/setting', '/about']);
  });

  it('shows Models and prices to every signed-in user, and to visitors only while the operator publishes prices', () => {
    expect(visibleMenuItems(1, false, false).some((item) => item.to === '/pricing')).toBe(true);
    expect(visibleMenuItems(undefined, false, true).map((item) => item.to)).toEqual([
      '/',
      '/token',
      '/topup',
      '/log',
      '/pricing',
      '/setting',
      '/about',
    ]);
    // publishing prices opens no other signed-in entry to visitors
    expect(visibleMenuItems(undefined, false, true).some((item) => item.to === '/playground')).toBe(false);
  });

  it('keeps the label keys', () => {
    expect(visibleMenuItems(100, true).map((item) => item.label)).toEqual([
      'app.menu.home',
      'app.menu.channel',
      'app.menu.token',
      'app.menu.redemption',
      'app.menu.topup',
      'app.menu.user',
      'app.menu.log',
      'task.menu',
      'audit.menu',
      'webhooks.menu',
      'pricing.title',
      'playground.title',
      'organizations.menu',
      'app.menu.setting',
      'app.menu.about',
      'app.menu.chat',
    ]);
  });
});
