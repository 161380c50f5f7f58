// One audit row in full, in a drawer over the list: who called (user, role,
// address, user agent), what (action, route, target, request id), how it
// ended, the change as a table of fields with their values before and after
// (secrets arrive masked), and the row's place in the hash chain.
import { Box, Table, TableBody, TableCell, TableContainer, TableHead, TableRow, Typography } from '@mui/material';
import type { ReactNode } from 'react';
import { useTranslate, type RaRecord } from 'react-admin';
import type { AuditChanges } from '../../../common/audit';
import { DetailDrawer, DrawerSection } from '../shared/DetailDrawer';
import { formatTimestamp } from '../shared/TimestampField';
import { textOf } from '../shared/textOf';

const ROLE_LABELS: Record<number, string> = { 1: 'status.role.user', 10: 'status.role.admin', 100: 'status.role.root' };

/** A value of the change as one line of text: strings as they are, anything else as JSON. */
export function valueText(value: unknown): string {
  if (value === undefined) return '—';
  if (typeof value === 'string') return value === '' ? '""' : value;
  return JSON.stringify(value);
}

function Facts({ facts }: { facts: Array<[string, ReactNode]> }) {
  const translate = useTranslate();
  return (
    <Box component="dl" sx={{ m: 0, display: 'grid', gridTemplateColumns: 'minmax(96px, max-content) 1fr', columnGap: 2, rowGap: 0.5 }}>
      {facts.map(([label, value]) => (
        <Box key={label} sx={{ display: 'contents' }}>
          <Typography component="dt" variant="body2" color="text.secondary">
            {translate(label)}
          </Typography>
          <Typography component="dd" variant="body2" sx={{ m: 0, overflowWrap: 'anywhere' }}>
            {value}
          </Typography>
        </Box>
      ))}
    </Box>
  );
}

/** The changed fields, one row each: the field, its value before and after. */
export function ChangeTable({ changes }: { changes: AuditChanges | null | undefined }) {
  const translate = useTranslate();
  const before = changes?.before ?? {};
  const after = changes?.after ?? {};
  const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])];
  if (fields.length === 0) {
    return (
      <Typography variant="body2" color="text.secondary">
        {translate('audit.drawer.no_change')}
      </Typography>
    );
  }
  const cell = { overflowWrap: 'anywhere', verticalAlign: 'top', fontFamily: 'monospace', fontSize: '0.8125rem' } as const;
  return (
    <TableContainer>
      <Table size="small" aria-label={translate('audit.drawer.change')} data-testid="audit-change">
        <TableHead>
          <TableRow>
            <TableCell component="th">{translate('audit.drawer.field')}</TableCell>
            <TableCell component="th">{translate('audit.drawer.before')}</TableCell>
            <TableCell component="th">{translate('audit.drawer.after')}</TableCell>
          </TableRow>
        </TableHead>
        <TableBody>
          {fields.map((field) => (
            <TableRow key={field}>
              <TableCell component="th" scope="row" sx={{ verticalAlign: 'top', fontWeight: 600 }}>
                {field}
              </TableCell>
              <TableCell sx={cell}>{changes?.before ? valueText(before[field]) : '—'}</TableCell>
              <TableCell sx={cell}>{changes?.after ? valueText(after[field]) : '—'}</TableCell>
            </TableRow>
          ))}
        </TableBody>
      </Table>
    </TableContainer>
  );
}

function AuditBody({ record }: { record: RaRecord }) {
  const translate = useTranslate();
  const role = ROLE_LABELS[Number(record.role)];
  const who: Array<[string, ReactNode]> = [
    [
      'audit.fields.username',
      record.user_id
        ? `${textOf(record.username)} (#${textOf(record.user_id)})`
        : textOf(record.username) || translate('audit.drawer.nobody'),
    ],
    ...(role ? [['audit.fields.role', translate(role)] as [string, ReactNode]] : []),
    ['audit.fields.ip', textOf(record.ip) || '—'],
    ['audit.fields.user_agent', textOf(record.user_agent) || '—'],
  ];
  const target = [textOf(record.target_type), textOf(record.target_id)].filter(Boolean).join(' #');
  const what: Array<[string, ReactNode]> = [
    ['audit.fields.created_at', formatTimestamp(Number(record.created_at))],
    ['audit.fields.action', textOf(record.action)],
    ['audit.fields.route', `${textOf(record.method)} ${textOf(record.route)}`],
    ['audit.fields.target', target || '—'],
    ['audit.fields.status', `${textOf(record.status)} · ${translate(record.success ? 'audit.outcome.success' : 'audit.outcome.failure')}`],
    ['audit.fields.request_id', textOf(record.request_id) || '—'],
  ];
  const chain: Array<[string, ReactNode]> = [
    ['audit.fields.seq', `#${textOf(record.seq)}`],
    ['audit.fields.prev_hash', textOf(record.prev_hash) || '—'],
    ['audit.fields.hash', textOf(record.hash)],
  ];
  return (
    <>
      <DrawerSection title={translate('audit.drawer.change')}>
        <ChangeTable changes={record.changes as AuditChanges | null} />
      </DrawerSection>
      <DrawerSection title={translate('audit.drawer.who')}>
        <Facts facts={who} />
      </DrawerSection>
      <DrawerSection title={translate('audit.drawer.what')}>
        <Facts facts={what} />
      </DrawerSection>
      <DrawerSection title={translate('audit.drawer.chain')}>
        <Facts facts={chain} />
      </DrawerSection>
    </>
  );
}

/** The drawer for `record` (closed when there is none); Esc, the backdrop and the close button close it. */
export function AuditDrawer({ record, onClose }: { record: RaRecord | undefined; onClose: () => void }) {
  const translate = useTranslate();
  return (
    <DetailDrawer
      open={Boolean(record)}
      onClose={onClose}
      title={translate('audit.drawer.title', { seq: textOf(record?.seq) })}
      closeLabel={translate('audit.drawer.close')}
      width={560}
      testId="audit-drawer"
    >
      {record && <AuditBody record={record} />}
    </DetailDrawer>
  );
}
