// Above a list: one chip per active filter or search, each with a clear
// button, and "clear all". A search the browser kept from an earlier visit is
// never silent.
import CancelIcon from '@mui/icons-material/Cancel';
import { Box, Button, Chip } from '@mui/material';
import { useTranslate } from 'react-admin';
import { textOf } from './textOf';
import { useListFilters } from './useListFilters';

export interface FilterLabel {
  /** Translation key of the filter's name. */
  label: string;
  /** The value as shown (already translated); default: the value itself. */
  format?: (value: unknown) => string;
}

export function ActiveFilters({
  labels,
  defaults = {},
}: {
  labels: Record<string, FilterLabel>;
  /** Values that are the list's starting point, not a filter (the log window). */
  defaults?: Record<string, unknown>;
}) {
  const { filterValues, displayedFilters, setFilters } = useListFilters();
  const translate = useTranslate();
  const all: Record<string, FilterLabel> = { q: { label: 'app.lists.search' }, ...labels };
  const active = Object.entries(filterValues ?? {}).filter(
    ([key, value]) => key in all && value !== undefined && value !== null && value !== '' && textOf(value) !== textOf(defaults[key]),
  );
  if (!active.length) return null;
  const without = (keys: string[]) => {
    const next: Record<string, unknown> = { ...filterValues };
    for (const key of keys) {
      if (key in defaults) next[key] = defaults[key];
      else delete next[key];
    }
    setFilters(next, displayedFilters);
  };
  return (
    <Box
      sx={{ display: 'flex', flexWrap: 'wrap', alignItems: 'center', gap: 0.5, px: 1, py: 0.75, borderBottom: 1, borderColor: 'divider' }}
      data-testid="active-filters"
    >
      {active.map(([key, value]) => {
        const shown = all[key].format ? all[key].format(value) : String(value);
        const name = translate(all[key].label);
        return (
          <Chip
            key={key}
            size="small"
            color="primary"
            variant="outlined"
            label={`${name}: ${shown}`}
            onDelete={() => without([key])}
            deleteIcon={<CancelIcon role="button" aria-label={translate('app.lists.clear_filter', { name })} />}
          />
        );
      })}
      {active.length > 1 && (
        <Button size="small" onClick={() => without(active.map(([key]) => key))}>
          {translate('app.lists.clear_all')}
        </Button>
      )}
    </Box>
  );
}
