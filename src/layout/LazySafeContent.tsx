// The Markdown renderer and the HTML sanitiser (marked and DOMPurify, about a
// tenth of the first download) are fetched only when there is admin content
// to show: a footer, a notice. Nothing is shown until they arrive, as before
// the content itself was there.
import type { SxProps } from '@mui/material';
import { lazy, Suspense } from 'react';

/** A URL to show in a frame instead of rendering text. */
export function isContentUrl(content: string): boolean {
  return /^https?:\/\/\S+$/.test(content.trim());
}

const SafeHtmlLoaded = lazy(() => import('./SafeContent').then((module) => ({ default: module.SafeHtml })));
const SafeMarkdownLoaded = lazy(() => import('./SafeContent').then((module) => ({ default: module.SafeMarkdown })));

export function SafeHtml(props: { html: string; sx?: SxProps }) {
  return (
    <Suspense fallback={null}>
      <SafeHtmlLoaded {...props} />
    </Suspense>
  );
}

export function SafeMarkdown(props: { markdown: string; sx?: SxProps }) {
  return (
    <Suspense fallback={null}>
      <SafeMarkdownLoaded {...props} />
    </Suspense>
  );
}
