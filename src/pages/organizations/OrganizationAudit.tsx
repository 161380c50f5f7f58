// An organisation's own audit rows, for its owner and admins: the calls made
// under /api/organization/:id (members, keys, top-ups), newest first; a row
// opens in the audit log's drawer. Site admins read every row on the Audit page.
import { Box, Table, TableBody, TableCell, TableHead, TableRow, Typography } from '@mui/material';
import { useCallback, useState } from 'react';
import { useTranslate } from 'react-admin';
import type { AuditRecord } from '../../../common/audit';
import { dataProvider } from '../../dataProvider';
import { LoadError } from '../../layout/LoadError';
import { AuditDrawer } from '../../resources/audit/AuditDrawer';
import { formatTimestamp } from '../../resources/shared/TimestampField';
import { useLoaded } from './organizationShared';

export function OrganizationAudit({ organizationId }: { organizationId: number }) {
  const translate = useTranslate();
  const { data: rows, failed, reload } = useLoaded(useCallback(() => dataProvider.organizationAudit(organizationId), [organizationId]));
  const [open, setOpen] = useState<AuditRecord | undefined>();
  if (failed) return <LoadError onRetry={reload} />;
  if (!rows) return null;
  if (rows.length === 0) return <Typography color="text.secondary">{translate('organizations.audit.empty')}</Typography>;
  return (
    <Box sx={{ overflowX: 'auto' }}>
      <Table size="small" aria-label={translate('organizations.tabs.audit')}>
        <TableHead>
          <TableRow>
            <TableCell>{translate('audit.fields.created_at')}</TableCell>
            <TableCell>{translate('audit.fields.username')}</TableCell>
            <TableCell>{translate('audit.fields.action')}</TableCell>
            <TableCell>{translate('audit.fields.success')}</TableCell>
          </TableRow>
        </TableHead>
        <TableBody>
          {rows.map((row) => (
            <TableRow
              key={row.id}
              hover
              tabIndex={0}
              sx={{ cursor: 'pointer' }}
              onClick={() => setOpen(row)}
              onKeyDown={(event) => {
                if (event.key === 'Enter') setOpen(row);
              }}
            >
              <TableCell sx={{ whiteSpace: 'nowrap' }}>{formatTimestamp(row.created_at)}</TableCell>
              <TableCell>{row.username}</TableCell>
              <TableCell sx={{ overflowWrap: 'anywhere' }}>{row.action}</TableCell>
              <TableCell>{translate(row.success ? 'audit.outcome.success' : 'audit.outcome.failure')}</TableCell>
            </TableRow>
          ))}
        </TableBody>
      </Table>
      <AuditDrawer record={open} onClose={() => setOpen(undefined)} />
    </Box>
  );
}
