// The dashboard's controls: range presets (or a custom start and end), the
// granularity, and the filters (token and model; user and channel for
// admins). They change the view, which lives in the URL.
import FilterAltOffIcon from '@mui/icons-material/FilterAltOff';
import { Button, Stack, TextField, ToggleButton, ToggleButtonGroup } from '@mui/material';
import { useRef } from 'react';
import type { AdminDashboard, Dashboard, DashboardGranularity } from '../../common/dashboard';
import { RANGE_PRESETS, dayToSeconds, secondsToDay, type DashboardView, type RangePreset } from './dashboardView';
import { useDashboardTranslate } from './useDashboardTranslate';

export interface FilterOption {
  value: string;
  label: string;
}

type FilterKey = 'token_id' | 'model' | 'user_id' | 'channel_id';

/**
 * The choices of each filter: every token, model, user and channel seen in an
 * answer so far (a filtered answer lists only what matches, so choices are
 * remembered across answers rather than replaced).
 */
export function useFilterOptions(data: Dashboard | AdminDashboard | undefined, deletedLabel: (id: number) => string) {
  const seen = useRef<Record<FilterKey, Map<string, string>>>({
    token_id: new Map(),
    model: new Map(),
    user_id: new Map(),
    channel_id: new Map(),
  });
  if (data) {
    for (const token of data.top_tokens)
      seen.current.token_id.set(String(token.token_id), token.token_name || deletedLabel(token.token_id));
    for (const model of data.by_model) seen.current.model.set(model.model, model.model);
    if ('top_users' in data) {
      for (const user of data.top_users) seen.current.user_id.set(String(user.user_id), user.username || deletedLabel(user.user_id));
      for (const channel of data.top_channels)
        seen.current.channel_id.set(String(channel.channel_id), channel.channel_name || deletedLabel(channel.channel_id));
      for (const channel of data.channel_health.slowest)
        seen.current.channel_id.set(String(channel.channel_id), channel.channel_name || deletedLabel(channel.channel_id));
    }
  }
  const optionsOf = (key: FilterKey): FilterOption[] =>
    [...seen.current[key].entries()]
      .map(([value, label]) => ({ value, label }))
      .sort((left, right) => left.label.localeCompare(right.label));
  return optionsOf;
}

function FilterSelect({
  label,
  value,
  options,
  onChange,
}: {
  label: string;
  value: string;
  options: FilterOption[];
  onChange: (value: string) => void;
}) {
  const translate = useDashboardTranslate();
  const known = value === '' || options.some((option) => option.value === value);
  return (
    <TextField
      select
      size="small"
      label={label}
      value={value}
      onChange={(event) => onChange(event.target.value)}
      sx={{ minWidth: { xs: 'calc(50% - 4px)', sm: 150 }, flex: { xs: '1 1 calc(50% - 4px)', sm: '0 0 auto' }, maxWidth: { sm: 220 } }}
      slotProps={{ select: { native: true }, inputLabel: { shrink: true } }}
    >
      <option value="">{translate('dashboard.filters.all')}</option>
      {!known && <option value={value}>{value}</option>}
      {options.map((option) => (
        <option key={option.value} value={option.value}>
          {option.label}
        </option>
      ))}
    </TextField>
  );
}

interface DashboardFiltersProps {
  view: DashboardView;
  admin: boolean;
  /** The granularity in effect (the view's, or the server's default). */
  granularity: DashboardGranularity;
  /** The range the last answer covered: what a custom range without dates shows. */
  answered?: { start: number; end: number };
  optionsOf: (key: FilterKey) => FilterOption[];
  onChange: (view: DashboardView) => void;
}

// MUI's toggle text (action.active unselected, primary on a primary tint selected) falls short of 4.5:1: filled instead
export const toggleSx = {
  '& .MuiToggleButton-root:not(.Mui-selected)': { color: 'text.secondary' },
  '& .MuiToggleButton-root.Mui-selected, & .MuiToggleButton-root.Mui-selected:hover': {
    bgcolor: 'primary.main',
    color: 'primary.contrastText',
  },
};

/** The first row: the range presets, the granularity, and a custom range's two dates. */
function RangeControls({ view, granularity, answered, onChange }: Omit<DashboardFiltersProps, 'admin' | 'optionsOf'>) {
  const translate = useDashboardTranslate();
  const setRange = (range: RangePreset | null) => {
    if (!range) return;
    if (range === 'custom') {
      const end = Math.floor(Date.now() / 1000);
      onChange({
        ...view,
        range,
        start: view.start ?? dayToSeconds(secondsToDay(end - 6 * 24 * 3600), 'start'),
        end: view.end ?? dayToSeconds(secondsToDay(end), 'end'),
      });
    } else {
      onChange({ ...view, range, start: undefined, end: undefined });
    }
  };
  const start = view.start ?? answered?.start;
  const end = view.end ?? answered?.end;
  return (
    <Stack direction="row" useFlexGap sx={{ flexWrap: 'wrap', gap: 1.5, alignItems: 'center' }}>
      <ToggleButtonGroup
        exclusive
        size="small"
        color="primary"
        value={view.range}
        sx={toggleSx}
        onChange={(_, range: RangePreset | null) => setRange(range)}
        aria-label={translate('dashboard.range.label')}
      >
        {RANGE_PRESETS.map((preset) => (
          <ToggleButton key={preset} value={preset} sx={{ px: { xs: 1.25, sm: 1.75 } }}>
            {translate(`dashboard.range.${preset}`)}
          </ToggleButton>
        ))}
      </ToggleButtonGroup>
      <ToggleButtonGroup
        exclusive
        size="small"
        color="primary"
        value={granularity}
        sx={toggleSx}
        onChange={(_, value: DashboardGranularity | null) => value && onChange({ ...view, granularity: value })}
        aria-label={translate('dashboard.granularity.label')}
      >
        <ToggleButton value="hour">{translate('dashboard.granularity.hour')}</ToggleButton>
        <ToggleButton value="day">{translate('dashboard.granularity.day')}</ToggleButton>
      </ToggleButtonGroup>
      {view.range === 'custom' && (
        <Stack direction="row" spacing={1} sx={{ flex: { xs: '1 1 100%', sm: '0 0 auto' } }}>
          <TextField
            type="date"
            size="small"
            label={translate('dashboard.range.start')}
            value={secondsToDay(start)}
            onChange={(event) => onChange({ ...view, start: dayToSeconds(event.target.value, 'start'), end })}
            slotProps={{ inputLabel: { shrink: true }, htmlInput: { max: secondsToDay(end) || undefined } }}
            sx={{ flex: 1 }}
          />
          <TextField
            type="date"
            size="small"
            label={translate('dashboard.range.end')}
            value={secondsToDay(end)}
            onChange={(event) => onChange({ ...view, start, end: dayToSeconds(event.target.value, 'end') })}
            slotProps={{ inputLabel: { shrink: true }, htmlInput: { min: secondsToDay(start) || undefined } }}
            sx={{ flex: 1 }}
          />
        </Stack>
      )}
    </Stack>
  );
}

/** The second row: token and model (user and channel for admins), and a way to clear them. */
function NarrowingFilters({ view, admin, optionsOf, onChange }: Omit<DashboardFiltersProps, 'granularity' | 'answered'>) {
  const translate = useDashboardTranslate();
  const setFilter = (key: FilterKey, value: string) => {
    const chosen = key === 'model' ? value : Number(value);
    onChange({ ...view, [key]: value === '' ? undefined : chosen });
  };
  const filtered = Boolean(view.token_id || view.model || view.user_id || view.channel_id);
  return (
    <Stack direction="row" useFlexGap sx={{ flexWrap: 'wrap', gap: 1, alignItems: 'center' }}>
      <FilterSelect
        label={translate('dashboard.filters.token')}
        value={view.token_id ? String(view.token_id) : ''}
        options={optionsOf('token_id')}
        onChange={(value) => setFilter('token_id', value)}
      />
      <FilterSelect
        label={translate('dashboard.filters.model')}
        value={view.model ?? ''}
        options={optionsOf('model')}
        onChange={(value) => setFilter('model', value)}
      />
      {admin && (
        <>
          <FilterSelect
            label={translate('dashboard.filters.user')}
            value={view.user_id ? String(view.user_id) : ''}
            options={optionsOf('user_id')}
            onChange={(value) => setFilter('user_id', value)}
          />
          <FilterSelect
            label={translate('dashboard.filters.channel')}
            value={view.channel_id ? String(view.channel_id) : ''}
            options={optionsOf('channel_id')}
            onChange={(value) => setFilter('channel_id', value)}
          />
        </>
      )}
      {filtered && (
        <Button
          size="small"
          startIcon={<FilterAltOffIcon />}
          onClick={() => onChange({ ...view, token_id: undefined, model: undefined, user_id: undefined, channel_id: undefined })}
        >
          {translate('dashboard.filters.clear')}
        </Button>
      )}
    </Stack>
  );
}

/** The dashboard's filters: what range and granularity, narrowed to which token, model, user or channel. */
export function DashboardFilters({ view, admin, granularity, answered, optionsOf, onChange }: DashboardFiltersProps) {
  const translate = useDashboardTranslate();
  return (
    <Stack spacing={1.5} component="section" aria-label={translate('dashboard.filters.label')}>
      <RangeControls view={view} granularity={granularity} answered={answered} onChange={onChange} />
      <NarrowingFilters view={view} admin={admin} optionsOf={optionsOf} onChange={onChange} />
    </Stack>
  );
}
