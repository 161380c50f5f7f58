// The channel list's cells: type label (and whether the channel holds many keys), status (with a
// multi-key channel's live keys), response time and balance.
import { Chip, Tooltip, Typography } from '@mui/material';
import { useState } from 'react';
import { useDataProvider, useRecordContext, useTranslate, type RaRecord, type TranslateFunction } from 'react-admin';
import { findChannelType } from '../../../common/channelTypes';
import { ChannelStatus } from '../../../common/roles';
import type { SwitchboardDataProvider } from '../../dataProvider';
import { useNotice } from '../../layout/notice';
import { errorMessage } from '../../dataProvider/errorMessage';
import { badgeSx } from '../shared/palette';
import { formatTimestamp } from '../shared/TimestampField';
import { textOf } from '../shared/textOf';
import { usePatchRecord } from '../shared/usePatchRecord';
import { formatBalance, responseTimeColor } from './channelDisplay';

interface CellProps {
  label?: string;
  sortBy?: string;
}

/** The type's badge; a multi-key channel says so beside it (its keys are under its edit form). */
export function ChannelTypeField(_: CellProps) {
  const record = useRecordContext();
  const translate = useTranslate();
  const type = findChannelType(Number(record?.type));
  const badge = <Chip size="small" label={type?.label ?? `#${record?.type}`} sx={badgeSx(type?.color ?? 'grey')} />;
  if (record?.multi_key !== true) return badge;
  return (
    <>
      {badge} <Chip size="small" variant="outlined" label={translate('app.channel.multi_key_badge')} />
    </>
  );
}

/** The tooltip of a multi-key channel's keys: its worst key's last error, else how many keys are off, else all live. */
function keysLiveTitle(live: number, total: number, error: string, translate: TranslateFunction): string {
  if (error) return translate('app.channel.keys_live_error', { error });
  if (live < total) return translate('app.channel.keys_live_off', { smart_count: total - live });
  return translate('app.channel.keys_live_all');
}

/** A multi-key channel's live keys out of all ("2/3 keys live"), its worst key's last error on hover; none for a single-key channel. */
export function KeysLiveChip() {
  const record = useRecordContext();
  const translate = useTranslate();
  if (record?.multi_key !== true || typeof record.key_count !== 'number') return null;
  const total = Number(record.key_count);
  const live = Number(record.live_key_count ?? 0);
  const error = textOf(record.key_error);
  let color: 'success' | 'warning' | 'error' = 'success';
  if (live === 0) color = 'error';
  else if (live < total) color = 'warning';
  const label = translate('app.channel.keys_live', { live, total });
  return (
    <Tooltip describeChild title={keysLiveTitle(live, total, error, translate)}>
      <Chip size="small" variant="outlined" color={color} label={label} data-testid="keys-live" sx={{ ml: 0.5 }} />
    </Tooltip>
  );
}

/** The channel's status; a multi-key channel's live keys beside it, so one with a key off never looks fully healthy. */
export function ChannelStatusField(_: CellProps) {
  return (
    <>
      <ChannelStatusChip />
      <KeysLiveChip />
    </>
  );
}

function ChannelStatusChip() {
  const record = useRecordContext();
  const translate = useTranslate();
  if (!record) return null;
  if (record.status === ChannelStatus.enabled) return <Chip size="small" color="success" label={translate('status.channel.enabled')} />;
  if (record.status === ChannelStatus.disabled && record.auto_disabled) {
    return (
      <Tooltip describeChild title={translate('app.channel.auto_disabled_help')}>
        <Chip size="small" color="warning" label={translate('status.channel.auto_disabled')} />
      </Tooltip>
    );
  }
  if (record.status === ChannelStatus.disabled) return <Chip size="small" color="error" label={translate('status.channel.disabled')} />;
  return <Chip size="small" variant="outlined" label={translate('status.channel.unknown')} />;
}

export function ResponseTimeField(_: CellProps) {
  const record = useRecordContext();
  const translate = useTranslate();
  const milliseconds = Number(record?.response_time ?? 0);
  const testTime = Number(record?.test_time ?? 0);
  const testError = String(record?.test_error ?? '');
  if (testError) {
    // the last test failed: say so, and why, rather than a time that measured a refusal
    const said = translate('app.lists.last_error', { message: testError });
    return (
      <Tooltip
        describeChild
        title={testTime ? `${said} · ${translate('app.channel.tested_at', { time: formatTimestamp(testTime) })}` : said}
      >
        <Chip
          size="small"
          color="error"
          variant="outlined"
          label={translate('app.lists.test_failed')}
          // the name starts with the words shown (WCAG 2.5.3), then says why
          aria-label={`${translate('app.lists.test_failed')}: ${testError}`}
          data-testid="response-time"
          data-error={testError}
          sx={{ maxWidth: 160 }}
        />
      </Tooltip>
    );
  }
  const label = milliseconds
    ? translate('app.channel.seconds', { seconds: (milliseconds / 1000).toFixed(2) })
    : translate('app.channel.untested');
  return (
    <Tooltip
      describeChild
      title={testTime ? translate('app.channel.tested_at', { time: formatTimestamp(testTime) }) : translate('app.channel.never_tested')}
    >
      <Chip size="small" label={label} sx={badgeSx(responseTimeColor(milliseconds))} data-testid="response-time" />
    </Tooltip>
  );
}

/** Asks the upstream for the record's balance again and shows it; `updating` while it asks. */
export function useBalanceUpdate(record: RaRecord | undefined) {
  const notice = useNotice();
  const dataProvider = useDataProvider<SwitchboardDataProvider>();
  const patchRecord = usePatchRecord('channel');
  const [updating, setUpdating] = useState(false);
  const update = async () => {
    if (!record) return;
    setUpdating(true);
    try {
      const balance = await dataProvider.updateChannelBalance(record.id);
      patchRecord(record.id, { balance, balance_updated_time: Math.floor(Date.now() / 1000) });
      notice('app.channel.balance_updated', 'success', { name: record.name });
    } catch (error) {
      notice(errorMessage(error), 'error');
    } finally {
      setUpdating(false);
    }
  };
  return { updating, update };
}

/** Clicking the balance asks the upstream again (types without a balance query say so instead; one never asked says so, not 0). */
export function BalanceField(_: CellProps) {
  const record = useRecordContext();
  const translate = useTranslate();
  const { updating, update } = useBalanceUpdate(record);
  if (!record) return null;
  const text = formatBalance(Number(record.type), Number(record.balance ?? 0));
  if (text === null) {
    return (
      <Typography variant="body2" component="span" color="text.secondary">
        {translate('app.channel.balance_unsupported')}
      </Typography>
    );
  }
  const updatedAt = Number(record.balance_updated_time ?? 0);
  // the stored 0 of a balance never read is no amount: showing "$0.00" would say the key is empty
  const shown = updatedAt ? text : translate('app.channel.balance_not_checked');
  return (
    <Tooltip
      describeChild
      title={`${updatedAt ? translate('app.channel.balance_updated_at', { time: formatTimestamp(updatedAt) }) : translate('app.channel.balance_never')} · ${translate('app.channel.balance_click')}`}
    >
      <Chip
        size="small"
        variant="outlined"
        clickable
        onClick={(event) => {
          // the row's own click opens the channel
          event.stopPropagation();
          if (!updating) void update();
        }}
        label={updating ? '…' : shown}
      />
    </Tooltip>
  );
}
