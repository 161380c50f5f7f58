// The bar above a list whose rows open in a drawer (the log, the audit log):
// on a phone a button that shows or hides the filter fields, the active
// filters as chips, and whatever the list adds at the end (time presets, an
// export). On wider screens the fields always show and the button is absent.
import FilterListIcon from '@mui/icons-material/FilterList';
import { Box, Button } from '@mui/material';
import { useState, type ReactElement, type ReactNode } from 'react';
import { ActiveFilters, type FilterLabel } from './ActiveFilters';
import { useSmallScreen } from './ListFrame';

/** Whether the filter fields show: always on wider screens, on a phone once its button opened them. */
export function useFoldingFilters() {
  const phone = useSmallScreen();
  const [open, setOpen] = useState(false);
  return {
    open,
    /** The phone's toggle; none on wider screens. */
    toggle: phone ? () => setOpen((shown) => !shown) : undefined,
    /** The list's `filters`: none while they are folded away. */
    shown: (inputs: ReactElement[]) => (phone && !open ? undefined : inputs),
  };
}

/** The phone's button that shows or hides the filter fields; `children` is its label. */
export function FiltersToggle({ open, onToggle, children }: { open: boolean; onToggle: () => void; children: ReactNode }) {
  return (
    <Button
      size="small"
      variant={open ? 'contained' : 'outlined'}
      disableElevation
      aria-expanded={open}
      onClick={onToggle}
      startIcon={<FilterListIcon />}
    >
      {children}
    </Button>
  );
}

interface FilterBarProps {
  /** The phone's FiltersToggle, if any. */
  toggle?: ReactNode;
  labels: Record<string, FilterLabel>;
  /** Values that are the list's starting point, not a filter (the log window). */
  defaults?: Record<string, unknown>;
  /** The bar's padding (theme spacing units). */
  padding: { p?: number; pr?: number; pl?: number; pt?: number };
  /** What stands at the bar's end. */
  children: ReactNode;
}

export function FilterBar({ toggle, labels, defaults, padding, children }: FilterBarProps) {
  return (
    <Box sx={{ display: 'flex', flexWrap: 'wrap', alignItems: 'center', gap: 1, ...padding }}>
      {toggle}
      <Box sx={{ flexGrow: 1, minWidth: 0 }}>
        <ActiveFilters defaults={defaults} labels={labels} />
      </Box>
      {children}
    </Box>
  );
}
