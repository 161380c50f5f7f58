// A page whose content an admin writes: Markdown rendered safely, or a URL
// shown in a full-page frame, or a friendly default when nothing is set.
import { Box, Card, CardContent, Typography } from '@mui/material';
import { useEffect, useState, type ReactNode } from 'react';
import { isContentUrl, SafeMarkdown } from '../layout/LazySafeContent';
import { LoadingPage } from '../layout/LoadingPage';

export function ContentPage({
  load,
  title,
  fallback,
  pageName,
}: {
  load: () => Promise<string>;
  title?: string;
  fallback: ReactNode;
  pageName: string;
}) {
  const [content, setContent] = useState<string | null>(null);
  useEffect(() => {
    let active = true;
    load()
      .then((text) => active && setContent(text))
      .catch(() => active && setContent(''));
    return () => {
      active = false;
    };
  }, [load]);

  if (content === null) return <LoadingPage page={pageName} />;
  if (content.trim() === '') return <>{fallback}</>;
  if (isContentUrl(content)) {
    return (
      <Box
        component="iframe"
        src={content.trim()}
        title={title ?? pageName}
        sx={{ border: 0, width: '100%', height: 'calc(100vh - 180px)', borderRadius: 2 }}
      />
    );
  }
  return (
    <Card variant="outlined" sx={{ borderRadius: 3 }}>
      <CardContent sx={{ p: { xs: 2, sm: 4 } }}>
        {title && (
          <Typography variant="h5" component="h1" sx={{ fontWeight: 700, mb: 2 }}>
            {title}
          </Typography>
        )}
        <SafeMarkdown markdown={content} />
      </CardContent>
    </Card>
  );
}
