// What the price tables share (the users' /pricing page and the settings' price table): dollars as people write
// them, the search box over the models, and the heads of the price columns.
import SearchIcon from '@mui/icons-material/Search';
import { InputAdornment, TableCell, TextField, Typography } from '@mui/material';
import { useTranslate } from 'react-admin';

/** The price columns of a model, in the order the tables show them. */
export const COLUMNS = ['input', 'output', 'cache_read', 'cache_write'] as const;

/** Dollars as people write them: two decimals, more only where a price needs them ($0.075). */
export function formatDollars(value: number | undefined): string {
  if (value === undefined) return '—';
  const decimals = value !== 0 && Math.abs(value) < 0.1 ? 4 : 2;
  return `$${value.toFixed(decimals).replace(/(\.\d\d\d*?)0+$/, '$1')}`;
}

/** The search box over a table of models (the /pricing page and the settings' price table). */
export function ModelSearch({ value, onChange }: { value: string; onChange: (value: string) => void }) {
  const translate = useTranslate();
  return (
    <TextField
      label={translate('pricing.search')}
      value={value}
      onChange={(event) => onChange(event.target.value)}
      size="small"
      sx={{ width: { xs: '100%', sm: 320 } }}
      slotProps={{
        input: {
          startAdornment: (
            <InputAdornment position="start">
              <SearchIcon fontSize="small" />
            </InputAdornment>
          ),
        },
      }}
    />
  );
}

/** The model and price column heads of a price table; `perMillion` adds the unit under each price's name. */
export function PriceHeadCells({ perMillion = false }: { perMillion?: boolean }) {
  const translate = useTranslate();
  return (
    <>
      <TableCell component="th" scope="col">
        {translate('pricing.model')}
      </TableCell>
      {COLUMNS.map((column) => (
        <TableCell key={column} component="th" scope="col" align="right">
          {translate(`pricing.${column}`)}
          {perMillion && (
            <Typography component="span" variant="caption" color="text.secondary" sx={{ display: 'block' }}>
              {translate('pricing.per_million')}
            </Typography>
          )}
        </TableCell>
      ))}
    </>
  );
}
