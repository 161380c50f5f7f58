// Content an admin writes (home, about, notice, footer, chat link) is shown
// without running script in other users' browsers; the notice appears once per
// change; a URL is framed instead of rendered.
import { render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { AdminContext } from 'react-admin';
import { MemoryRouter } from 'react-router-dom';
import { describe, expect, it } from 'vitest';
import { i18nProvider } from '../../src/i18n';
import { NoticeDialog } from '../../src/layout/notice';
import { markdownToSafeHtml, sanitizeHtml } from '../../src/layout/SafeContent';
import { ContentPage } from '../../src/pages/ContentPage';
import ChatPage from '../../src/pages/ChatPage';

const XSS_IMAGE = '<img src=x onerror="window.__pwned = true">';
const XSS_LINK = '[click me](javascript:window.__pwned=true)';

function inAdmin(children: React.ReactNode) {
  return render(
    <MemoryRouter>
      <AdminContext i18nProvider={i18nProvider}>{children}</AdminContext>
    </MemoryRouter>,
  );
}

describe('sanitised content', () => {
  it('drops event handlers and javascript: links', () => {
    expect(sanitizeHtml(XSS_IMAGE)).toBe('<img src="x">');
    expect(sanitizeHtml('<a href="javascript:alert(1)">x</a><a href="JaVaScRiPt:alert(1)">y</a>')).toBe('<a>x</a><a>y</a>');
    expect(sanitizeHtml('<script>alert(1)</script><svg onload="alert(1)"></svg><iframe src="javascript:alert(1)"></iframe>')).not.toMatch(
      /script|onload|iframe/,
    );
    expect(markdownToSafeHtml(XSS_LINK)).not.toContain('javascript');
    expect(markdownToSafeHtml(`# Hello\n\n${XSS_IMAGE}`)).toContain('<h1>Hello</h1>');
  });

  it('renders Markdown content without running its script', async () => {
    inAdmin(<ContentPage load={async () => `# Welcome\n\n${XSS_IMAGE}\n\n${XSS_LINK}`} pageName="Home" fallback={<p>fallback</p>} />);
    expect(await screen.findByRole('heading', { name: 'Welcome' })).toBeInTheDocument();
    expect(document.body.innerHTML).not.toMatch(/onerror|javascript:/);
    expect(screen.getByText('click me').getAttribute('href')).toBeNull();
    expect((window as any).__pwned).toBeUndefined();
  });

  it('frames a URL full-page, and shows the fallback when empty', async () => {
    const { unmount } = inAdmin(
      <ContentPage load={async () => 'https://docs.example.com/about'} pageName="About" fallback={<p>fallback</p>} />,
    );
    await waitFor(() => expect(document.querySelector('iframe')?.getAttribute('src')).toBe('https://docs.example.com/about'));
    unmount();
    inAdmin(<ContentPage load={async () => '  '} pageName="About" fallback={<p>fallback</p>} />);
    expect(await screen.findByText('fallback')).toBeInTheDocument();
  });

  it('does not frame a javascript: chat link', async () => {
    localStorage.setItem('chat_link', 'javascript:window.__pwned=true');
    inAdmin(<ChatPage />);
    expect(await screen.findByText(/not an http\(s\) address/)).toBeInTheDocument();
    expect(document.querySelector('iframe')).toBeNull();
  });

  it('frames an https chat link', async () => {
    localStorage.setItem('chat_link', 'https://chat.example.com/');
    inAdmin(<ChatPage />);
    await waitFor(() => expect(document.querySelector('iframe')?.getAttribute('src')).toBe('https://chat.example.com/'));
  });
});

describe('notice dialog', () => {
  it('shows the notice once per change', async () => {
    const user = userEvent.setup();
    let notice = `**Maintenance** tonight ${XSS_IMAGE}`;
    const load = async () => notice;
    const first = inAdmin(<NoticeDialog load={load} />);
    const dialog = await screen.findByRole('dialog', { name: 'Notice' });
    expect(dialog.querySelector('strong')?.textContent).toBe('Maintenance');
    expect(dialog.innerHTML).not.toContain('onerror');
    await user.click(screen.getByRole('button', { name: 'Close' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    first.unmount();

    // the same notice again: not shown
    const second = inAdmin(<NoticeDialog load={load} />);
    await new Promise((wait) => setTimeout(wait, 50));
    expect(screen.queryByRole('dialog')).toBeNull();
    second.unmount();

    // a changed notice: shown again
    notice = 'New prices from Monday';
    inAdmin(<NoticeDialog load={load} />);
    expect(await screen.findByText('New prices from Monday')).toBeInTheDocument();
  });

  it('shows nothing for an empty notice', async () => {
    inAdmin(<NoticeDialog load={async () => ''} />);
    await new Promise((wait) => setTimeout(wait, 50));
    expect(screen.queryByRole('dialog')).toBeNull();
  });
});
