// The response cache's line under the range's totals: its hits over the range,
// what they saved and what they were charged (docs/cache.md). Shown while the
// cache is on, or when the range had hits from a time it was.
import { Typography } from '@mui/material';
import type { Dashboard } from '../../common/dashboard';
import { useDashboardFormat } from './format';
import { useDashboardTranslate } from './useDashboardTranslate';

export function ResponseCacheLine({ data }: { data: Dashboard }) {
  const translate = useDashboardTranslate();
  const format = useDashboardFormat();
  const cache = data.response_cache;
  if (!cache || (!cache.enabled && cache.hits === 0)) return null;
  return (
    <Typography variant="body2" color="text.secondary" data-testid="response-cache">
      {translate('dashboard.response_cache', {
        hits: format.count(cache.hits),
        saved: format.money(cache.saved),
        charged: format.money(cache.quota),
      })}
      {!cache.enabled && translate('dashboard.response_cache_off')}
    </Typography>
  );
}
