import '@testing-library/jest-dom/vitest';
import { cleanup, configure } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll } from 'vitest';

// findBy and waitFor wait up to 15 s for a screen (their default, 1 s, and the 5 s some tests gave failed under load;
// a screen that comes sooner is found sooner)
configure({ asyncUtilTimeout: 15_000 });

/**
 * One msw server for every console test; each test adds its handlers. The one default: the organisations the
 * signed-in user belongs to (none), which the token form asks for its "Spends" choice.
 */
export const server = setupServer(http.get('*/api/organization/self', () => HttpResponse.json({ success: true, message: '', data: [] })));

beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  server.resetHandlers();
  cleanup();
  localStorage.clear();
});
afterAll(() => server.close());
