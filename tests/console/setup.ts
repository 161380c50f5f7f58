import '@testing-library/jest-dom/vitest';
import { cleanup, configure } from '@testing-library/react';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll } from 'vitest';

// findBy and waitFor wait up to 15 s for a screen (their default, 1 s, and the 5 s some tests gave failed under load;
// a screen that comes sooner is found sooner)
configure({ asyncUtilTimeout: 15_000 });

/** One msw server for every console test; each test adds its handlers. */
export const server = setupServer();

beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  server.resetHandlers();
  cleanup();
  localStorage.clear();
});
afterAll(() => server.close());
