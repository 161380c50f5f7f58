// The console API's calls on one task (routes/api/taskActions.ts): a cancel,
// and the addresses the browser reads itself (a <video>'s source, a download
// link), which are URLs rather than calls, each sent with the session cookie.
// The owner or an admin only; each method's URL is in the map atop index.ts.
import type { HttpClient } from './httpClient';

const taskPath = (id: string | number) => `/api/task/${encodeURIComponent(String(id))}`;

/** Where a finished video plays from (with the browser's Range) and downloads from; where a batch's files download from. */
export const taskUrls = {
  content: (id: string | number) => `${taskPath(id)}/content`,
  download: (id: string | number) => `${taskPath(id)}/content?download=1`,
  file: (id: string | number, which: 'output' | 'error') => `${taskPath(id)}/files/${which}`,
};

export function taskCalls(httpClient: HttpClient) {
  return {
    /** Cancels a batch (validating, in progress) or a video (queued, in progress); resolves to the task as it is now. */
    cancelTask: async (id: string | number) =>
      (await httpClient<Record<string, unknown>>(`${taskPath(id)}/cancel`, { method: 'POST' })).data as Record<string, unknown>,
  };
}
