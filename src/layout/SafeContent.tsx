// Admin-written content (footer HTML, notice, about and home page Markdown)
// rendered without letting it run script in other users' browsers.
import { Box, type SxProps } from '@mui/material';
import DOMPurify from 'dompurify';
import { marked } from 'marked';

export function sanitizeHtml(html: string): string {
  return DOMPurify.sanitize(html, { USE_PROFILES: { html: true }, FORBID_TAGS: ['style', 'form'], FORBID_ATTR: ['style'] });
}

export function markdownToSafeHtml(markdown: string): string {
  return sanitizeHtml(marked.parse(markdown, { async: false }));
}

export function SafeHtml({ html, sx }: { html: string; sx?: SxProps }) {
  return <Box sx={sx} dangerouslySetInnerHTML={{ __html: sanitizeHtml(html) }} />;
}

export function SafeMarkdown({ markdown, sx }: { markdown: string; sx?: SxProps }) {
  return (
    <Box
      className="markdown"
      sx={{ '& img': { maxWidth: '100%' }, '& a': { color: 'primary.main' }, lineHeight: 1.7, ...sx }}
      dangerouslySetInnerHTML={{ __html: markdownToSafeHtml(markdown) }}
    />
  );
}
