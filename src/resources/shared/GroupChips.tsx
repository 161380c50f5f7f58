import { Chip, Stack } from '@mui/material';
import { useRecordContext } from 'react-admin';

/** Group chips: empty is 'default'; vip and pro yellow; svip and premium red; sorted. */
export function groupBadges(group: string): Array<{ name: string; color: 'warning' | 'error' | 'default' }> {
  const names = group
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  return (names.length ? names : ['default']).sort().map((name) => ({
    name,
    color: name === 'vip' || name === 'pro' ? 'warning' : name === 'svip' || name === 'premium' ? 'error' : 'default',
  }));
}

/** The record's comma-separated `group` as badges (users and channels). */
export function GroupChips(_: { label?: string; sortBy?: string }) {
  const record = useRecordContext();
  return (
    <Stack direction="row" spacing={0.5} sx={{ flexWrap: 'wrap', rowGap: 0.5 }}>
      {groupBadges(String(record?.group ?? '')).map((badge) => (
        <Chip
          key={badge.name}
          size="small"
          label={badge.name}
          color={badge.color}
          variant={badge.color === 'default' ? 'outlined' : 'filled'}
        />
      ))}
    </Stack>
  );
}
