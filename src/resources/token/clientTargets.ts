// Where a token can be used with one click: deep links and web apps that take
// the server address and the key. Add a target here and it shows in both the
// copy and the chat menus.
export interface ClientTarget {
  id: string;
  label: string;
  /** Opens in a chat app (chat menu) or is only copied (copy menu). */
  chat: boolean;
  build: (context: { key: string; server: string; chatLink: string }) => string;
}

export const CLIENT_TARGETS: ClientTarget[] = [
  { id: 'key', label: 'API key (sk-...)', chat: false, build: ({ key }) => `sk-${key}` },
  {
    id: 'next-web',
    label: 'ChatGPT Next Web',
    chat: true,
    build: ({ key, server, chatLink }) =>
      chatLink
        ? `${chatLink}/#/?settings=${encodeURIComponent(JSON.stringify({ key: `sk-${key}` }))}`
        : `https://chat.oneapi.pro/#/?settings=${encodeURIComponent(JSON.stringify({ key: `sk-${key}`, url: server }))}`,
  },
  {
    id: 'ama',
    label: 'AMA',
    chat: true,
    build: ({ key, server }) => `ama://set-api-key?server=${encodeURIComponent(server)}&key=sk-${key}`,
  },
  {
    id: 'opencat',
    label: 'OpenCat',
    chat: true,
    build: ({ key, server }) => `opencat://team/join?domain=${encodeURIComponent(server)}&token=sk-${key}`,
  },
];
