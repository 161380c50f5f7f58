import { Chip, Stack } from '@mui/material';
import { useRecordContext } from 'react-admin';

type GroupColor = 'warning' | 'error' | 'default';

/** vip and pro yellow; svip and premium red; any other group plain. */
function colorOfGroup(name: string): GroupColor {
  if (name === 'vip' || name === 'pro') return 'warning';
  if (name === 'svip' || name === 'premium') return 'error';
  return 'default';
}

/** Group chips: empty is 'default'; vip and pro yellow; svip and premium red; sorted. */
export function groupBadges(group: string): Array<{ name: string; color: GroupColor }> {
  const names = group
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  return (names.length ? names : ['default']).sort().map((name) => ({ name, color: colorOfGroup(name) }));
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
