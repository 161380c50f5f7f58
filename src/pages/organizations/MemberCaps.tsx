// A member's spending caps in an organisation: what they spent against them
// (a line under the member, and under the organisation's name for the member
// themselves), and the dialog in which the owner and admins set them. Amounts
// are typed in the unit the console shows quota in (dollars or quota).
import { Box, Button, Dialog, DialogActions, DialogContent, DialogTitle, MenuItem, Stack, TextField } from '@mui/material';
import { useState, type FormEvent } from 'react';
import { useTranslate } from 'react-admin';
import { BUDGET_PERIODS, isBudgetPeriod, type BudgetPeriod } from '../../../common/budgets';
import type { MemberCapFields, MemberCapRecord, OrganizationMemberRecord } from '../../../common/organizations';
import { dataProvider } from '../../dataProvider';
import { useStatus } from '../../layout/status';
import { dollarsToQuota, formatQuota, quotaToDollars, quotaUnit } from '../../quota';
import { formatTimestamp } from '../../resources/shared/TimestampField';
import { useAction } from './organizationShared';

/** "Spent $1.20 of $5.00 · today $0.40 of $1.00 (resets …)": the caps and the spend against them; "no cap" without either. */
export function CapFacts({ cap }: { cap: MemberCapRecord }) {
  const translate = useTranslate();
  const { status } = useStatus();
  const money = (quota: number) => formatQuota(quota, status);
  const lifetime =
    cap.cap_quota > 0
      ? translate('organizations.caps.spent_of', { spent: money(cap.spent_quota), cap: money(cap.cap_quota) })
      : translate('organizations.caps.spent_uncapped', { spent: money(cap.spent_quota) });
  const over =
    (cap.cap_quota > 0 && cap.spent_quota >= cap.cap_quota) || (cap.cap_period !== '' && cap.period_spent >= cap.cap_period_quota);
  return (
    <Box component="span" data-testid="member-cap" sx={over ? { color: 'error.main', fontWeight: 600 } : undefined}>
      {lifetime}
      {cap.cap_period !== '' &&
        ` · ${translate(`organizations.caps.period_${cap.cap_period}`, {
          spent: money(cap.period_spent),
          cap: money(cap.cap_period_quota),
          resets: formatTimestamp(cap.resets_at),
        })}`}
    </Box>
  );
}

/** An amount as typed (dollars or quota) ↔ whole quota; '' is none. */
function useAmount() {
  const { status } = useStatus();
  const { inCurrency, perUnit } = quotaUnit(status);
  return {
    inCurrency,
    shown: (quota: number) => (quota > 0 ? String(inCurrency ? quotaToDollars(quota, perUnit) : quota) : ''),
    quota: (typed: string) => {
      const value = Number(typed.trim() || 0);
      // not a number stays one, and the server says why it refuses it
      if (!Number.isFinite(value)) return Number.NaN;
      return inCurrency ? dollarsToQuota(value, perUnit) : value;
    },
  };
}

/** Sets a member's caps: a lifetime cap (empty: none), and a period with its cap. */
export function CapsDialog({
  organizationId,
  member,
  onClose,
}: {
  organizationId: number;
  member: OrganizationMemberRecord | null;
  onClose: (changed: boolean) => void;
}) {
  return member ? <CapsForm organizationId={organizationId} member={member} onClose={onClose} /> : null;
}

function CapsForm({
  organizationId,
  member,
  onClose,
}: {
  organizationId: number;
  member: OrganizationMemberRecord;
  onClose: (changed: boolean) => void;
}) {
  const translate = useTranslate();
  const act = useAction();
  const amount = useAmount();
  const [lifetime, setLifetime] = useState(amount.shown(member.cap_quota));
  const [period, setPeriod] = useState<BudgetPeriod>(member.cap_period);
  const [periodCap, setPeriodCap] = useState(amount.shown(member.cap_period_quota));
  const unit = translate(amount.inCurrency ? 'organizations.caps.in_dollars' : 'organizations.caps.in_quota');
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const caps: MemberCapFields = {
      cap_quota: amount.quota(lifetime),
      cap_period: period,
      cap_period_quota: period ? amount.quota(periodCap) : 0,
    };
    if (await act(() => dataProvider.setOrganizationMemberCaps(organizationId, member.user_id, caps), 'organizations.caps.saved'))
      onClose(true);
  };
  return (
    <Dialog open onClose={() => onClose(false)} aria-labelledby="member-caps-title">
      <Box component="form" onSubmit={(event) => void submit(event)}>
        <DialogTitle id="member-caps-title">{translate('organizations.caps.title', { name: member.username })}</DialogTitle>
        <DialogContent>
          <Stack spacing={2} sx={{ mt: 1 }}>
            <TextField
              name="cap_quota"
              type="number"
              label={translate('organizations.caps.lifetime')}
              helperText={`${translate('organizations.caps.lifetime_help')} ${unit}`}
              value={lifetime}
              onChange={(event) => setLifetime(event.target.value)}
              fullWidth
            />
            <TextField
              select
              name="cap_period"
              label={translate('organizations.caps.period')}
              value={period}
              onChange={(event) => setPeriod(isBudgetPeriod(event.target.value) ? event.target.value : '')}
              slotProps={{ select: { displayEmpty: true }, inputLabel: { shrink: true } }}
              fullWidth
            >
              <MenuItem value="">{translate('app.budget.none')}</MenuItem>
              {BUDGET_PERIODS.map((choice) => (
                <MenuItem key={choice} value={choice}>
                  {translate(`app.budget.${choice}`)}
                </MenuItem>
              ))}
            </TextField>
            {period && (
              <TextField
                name="cap_period_quota"
                type="number"
                label={translate('organizations.caps.period_amount')}
                helperText={unit}
                value={periodCap}
                onChange={(event) => setPeriodCap(event.target.value)}
                fullWidth
              />
            )}
          </Stack>
        </DialogContent>
        <DialogActions>
          <Button onClick={() => onClose(false)}>{translate('organizations.cancel')}</Button>
          <Button type="submit" variant="contained" disableElevation>
            {translate('organizations.caps.save')}
          </Button>
        </DialogActions>
      </Box>
    </Dialog>
  );
}
