// The price table of the Prices tab: one row per model (the catalog's, the
// built-in table's, any a ratio option names and any a channel serves) with
// its input, output, cache-read and cache-write prices in US$ per million
// tokens, whether they are the default or the operator's override, an inline
// editor that saves a row as ratio entries, and a reset to the default. It
// lists the models the channels serve unless "show all models" is on. The
// ratio options stay editable as JSON under "Advanced".
import EditIcon from '@mui/icons-material/Edit';
import RestartAltIcon from '@mui/icons-material/RestartAlt';
import {
  Box,
  Button,
  Chip,
  CircularProgress,
  FormControlLabel,
  IconButton,
  Stack,
  Switch,
  Table,
  TableBody,
  TableCell,
  TableContainer,
  TableHead,
  TablePagination,
  TableRow,
  TextField,
  Tooltip,
  Typography,
} from '@mui/material';
import { useCallback, useEffect, useMemo, useState } from 'react';
import { useTranslate } from 'react-admin';
import type { DefaultModelPrice, DollarPrices } from '../../common/pricing';
import { LoadError } from '../layout/LoadError';
import { useNotice } from '../layout/notice';
import { errorMessage } from '../dataProvider/errorMessage';
import { formatDollars, ModelSearch, PriceHeadCells } from '../layout/priceTable';
import { editedOptions, parseRatioTable, PRICE_OPTION_KEYS, priceRow, resetOptions, type PriceRow, type RatioTables } from './priceRows';
import type { OptionForm } from './useOptionForm';

const COLUMNS = ['input', 'output', 'cache_read', 'cache_write'] as const;
const ROWS_PER_PAGE = 25;
const DEFAULT_QUOTA_PER_UNIT = 500_000;

type Draft = Record<(typeof COLUMNS)[number], string>;

const asText = (value: number | undefined) => (value === undefined ? '' : String(value));

/** The typed prices, or undefined when one is not a number; a blank cache price is no price (the default share). */
function typedPrices(draft: Draft): DollarPrices | undefined {
  const number = (text: string) => (text.trim() === '' ? Number.NaN : Number(text));
  const optional = (text: string) => (text.trim() === '' ? undefined : Number(text));
  const prices = {
    input: number(draft.input),
    output: number(draft.output),
    cache_read: optional(draft.cache_read),
    cache_write: optional(draft.cache_write),
  };
  const values = [prices.input, prices.output, prices.cache_read, prices.cache_write].filter((value) => value !== undefined);
  return values.every(Number.isFinite) ? prices : undefined;
}

function EditingCells({
  row,
  busy,
  onSave,
  onCancel,
}: {
  row: PriceRow;
  busy: boolean;
  onSave: (prices: DollarPrices | undefined) => void;
  onCancel: () => void;
}) {
  const translate = useTranslate();
  const [draft, setDraft] = useState<Draft>({
    input: asText(row.prices?.input),
    output: asText(row.prices?.output),
    cache_read: asText(row.prices?.cache_read),
    cache_write: asText(row.prices?.cache_write),
  });
  return (
    <>
      {COLUMNS.map((column) => (
        <TableCell key={column} align="right" sx={{ minWidth: 110 }}>
          <TextField
            size="small"
            type="number"
            value={draft[column]}
            placeholder={column.startsWith('cache') ? translate('settings.prices.default_share') : undefined}
            onChange={(event) => setDraft((previous) => ({ ...previous, [column]: event.target.value }))}
            onKeyDown={(event) => {
              if (event.key === 'Enter') onSave(typedPrices(draft));
              if (event.key === 'Escape') onCancel();
            }}
            slotProps={{
              htmlInput: { min: 0, step: 'any', 'aria-label': translate(`settings.prices.${column}_of`, { model: row.model }) },
            }}
          />
        </TableCell>
      ))}
      <TableCell colSpan={2} align="right" sx={{ whiteSpace: 'nowrap' }}>
        <Button size="small" variant="contained" disableElevation disabled={busy} onClick={() => onSave(typedPrices(draft))}>
          {translate('settings.prices.save')}
        </Button>
        <Button size="small" disabled={busy} onClick={onCancel} sx={{ ml: 1 }}>
          {translate('settings.prices.cancel')}
        </Button>
      </TableCell>
    </>
  );
}

/** Where a row's prices come from: the operator's override, the catalog, or nowhere. */
function sourceLabel(row: PriceRow): string {
  if (row.overridden) return 'settings.prices.source_override';
  return row.prices ? 'settings.prices.source_catalog' : 'settings.prices.source_none';
}

/** The head row: the price columns, the source, and the actions (named for screen readers only). */
function PriceTableHead() {
  const translate = useTranslate();
  return (
    <TableHead>
      <TableRow>
        <PriceHeadCells />
        <TableCell component="th" scope="col">
          {translate('settings.prices.source')}
        </TableCell>
        {/* relative: the hidden label is placed in the cell, so the table's scrolling box clips it on a phone */}
        <TableCell component="th" scope="col" align="right" sx={{ position: 'relative' }}>
          {/* '1px', not 1: sx reads 1 as 100%, and a hidden label as wide as the page made it scroll sideways */}
          <Box
            component="span"
            sx={{
              position: 'absolute',
              width: '1px',
              height: '1px',
              overflow: 'hidden',
              clip: 'rect(0 0 0 0)',
              whiteSpace: 'nowrap',
            }}
          >
            {translate('settings.prices.actions')}
          </Box>
        </TableCell>
      </TableRow>
    </TableHead>
  );
}

interface ShownCellsProps {
  row: PriceRow;
  /** The edit and reset buttons are off (no write access, or a save under way). */
  locked: boolean;
  onEdit: () => void;
  onReset: () => void;
}

/** A row as it reads: its prices, their source, and the edit and reset buttons. */
function ShownCells({ row, locked, onEdit, onReset }: ShownCellsProps) {
  const translate = useTranslate();
  return (
    <>
      {COLUMNS.map((column) => (
        <TableCell key={column} align="right" data-testid={`${row.model}-${column}`}>
          {row.prices ? formatDollars(row.prices[column]) : '—'}
        </TableCell>
      ))}
      <TableCell>
        <Chip size="small" variant="outlined" color={row.overridden ? 'warning' : 'default'} label={translate(sourceLabel(row))} />
      </TableCell>
      <TableCell align="right" sx={{ whiteSpace: 'nowrap' }}>
        <Tooltip title={translate('settings.prices.edit', { model: row.model })}>
          <span>
            <IconButton
              size="small"
              disabled={locked}
              onClick={onEdit}
              aria-label={translate('settings.prices.edit', { model: row.model })}
            >
              <EditIcon fontSize="small" />
            </IconButton>
          </span>
        </Tooltip>
        <Tooltip title={translate('settings.prices.reset', { model: row.model })}>
          <span>
            <IconButton
              size="small"
              disabled={locked || !row.overridden}
              onClick={onReset}
              aria-label={translate('settings.prices.reset', { model: row.model })}
            >
              <RestartAltIcon fontSize="small" />
            </IconButton>
          </span>
        </Tooltip>
      </TableCell>
    </>
  );
}

/** The ratio tables in force (the stored options, not the drafts of the raw fields) and the quota per US$. */
function useStoredRatios(form: OptionForm) {
  const [modelRaw, completionRaw, cacheReadRaw, cacheWriteRaw] = PRICE_OPTION_KEYS.map((key) => form.stored(key));
  const tables = useMemo<RatioTables>(
    () => ({
      ModelRatio: parseRatioTable(modelRaw),
      CompletionRatio: parseRatioTable(completionRaw),
      CacheReadRatio: parseRatioTable(cacheReadRaw),
      CacheWriteRatio: parseRatioTable(cacheWriteRaw),
    }),
    [modelRaw, completionRaw, cacheReadRaw, cacheWriteRaw],
  );
  const quotaPerUnit = Number(form.stored('QuotaPerUnit')) > 0 ? Number(form.stored('QuotaPerUnit')) : DEFAULT_QUOTA_PER_UNIT;
  return { tables, quotaPerUnit };
}

/** The built-in and catalog prices of every model, loaded once (null until then), with a retry. */
function useDefaultPrices(form: OptionForm) {
  const [defaults, setDefaults] = useState<DefaultModelPrice[] | null>(null);
  const [loadError, setLoadError] = useState('');
  const load = useCallback(() => {
    setLoadError('');
    form.provider
      .defaultPrices()
      .then(setDefaults)
      .catch((error) => setLoadError(errorMessage(error)));
  }, [form.provider]);
  useEffect(load, [load]);
  return { defaults, loadError, load };
}

/** What narrows the table: the search, and whether only the models a channel serves are listed. */
interface RowFilter {
  search: string;
  servedOnly: boolean;
}

/** The models whose name contains the search (and that a channel serves, unless all are asked for), each with its row. */
function useMatchingRows(defaults: DefaultModelPrice[] | null, filter: RowFilter, tables: RatioTables, quotaPerUnit: number) {
  const { search, servedOnly } = filter;
  return useMemo(() => {
    const wanted = search.trim().toLowerCase();
    return (defaults ?? [])
      .filter((entry) => (!servedOnly || entry.served === true) && (!wanted || entry.model.toLowerCase().includes(wanted)))
      .map((entry) => ({ entry, row: priceRow(entry, tables, quotaPerUnit) }));
  }, [defaults, search, servedOnly, tables, quotaPerUnit]);
}

interface PriceToolbarProps {
  filter: RowFilter;
  onFilter: (filter: RowFilter) => void;
  quotaPerUnit: number;
}

/** The model search and the "show all models" switch above the table, and the quota unit the prices convert with. */
function PriceToolbar({ filter, onFilter, quotaPerUnit }: PriceToolbarProps) {
  const translate = useTranslate();
  return (
    <Stack
      direction={{ xs: 'column', sm: 'row' }}
      spacing={2}
      sx={{ mb: 1, alignItems: { sm: 'center' }, justifyContent: 'space-between', flexWrap: 'wrap', rowGap: 1 }}
    >
      <Stack direction="row" spacing={2} sx={{ alignItems: 'center', flexWrap: 'wrap', rowGap: 1 }}>
        <ModelSearch value={filter.search} onChange={(search) => onFilter({ ...filter, search })} />
        <FormControlLabel
          control={<Switch checked={!filter.servedOnly} onChange={(event) => onFilter({ ...filter, servedOnly: !event.target.checked })} />}
          label={translate('settings.prices.show_all')}
        />
      </Stack>
      <Typography variant="body2" color="text.secondary">
        {translate('settings.prices.unit', { per_unit: quotaPerUnit })}
      </Typography>
    </Stack>
  );
}

/** Why the table is empty: no model matches the search, or no channel serves one yet. */
function EmptyRows({ filter }: { filter: RowFilter }) {
  const translate = useTranslate();
  if (filter.search.trim()) return <Typography sx={{ mt: 2 }}>{translate('pricing.no_match', { search: filter.search })}</Typography>;
  return <Typography sx={{ mt: 2 }}>{translate(filter.servedOnly ? 'settings.prices.none_served' : 'settings.prices.none')}</Typography>;
}

/** The table of model prices, searchable and paged, each row editable in place. */
export function PriceTable({ form }: { form: OptionForm }) {
  const translate = useTranslate();
  const notice = useNotice();
  const { defaults, loadError, load } = useDefaultPrices(form);
  const [filter, setFilter] = useState<RowFilter>({ search: '', servedOnly: true });
  const [page, setPage] = useState(0);
  const [editing, setEditing] = useState<string | null>(null);
  const writable = PRICE_OPTION_KEYS.every((key) => form.canWrite(key));

  // the stored options, not the drafts of the raw fields: the table shows what is in force
  const { tables, quotaPerUnit } = useStoredRatios(form);

  const rows = useMatchingRows(defaults, filter, tables, quotaPerUnit);

  const save = async (entry: DefaultModelPrice, prices: DollarPrices | undefined) => {
    const changes = prices && editedOptions(entry, tables, prices, quotaPerUnit);
    if (!changes) return notice('settings.prices.invalid', 'error');
    if (Object.keys(changes).length === 0) {
      setEditing(null);
      return notice('settings.nothing_changed', 'info');
    }
    if (await form.saveValues(changes)) setEditing(null);
  };
  const reset = async (entry: DefaultModelPrice) => {
    await form.saveValues(resetOptions(entry, tables));
  };

  if (loadError) return <LoadError onRetry={load} detail={loadError} />;
  if (defaults === null) return <CircularProgress aria-label={translate('ra.page.loading')} />;
  const shown = rows.slice(page * ROWS_PER_PAGE, (page + 1) * ROWS_PER_PAGE);
  return (
    <Box>
      <PriceToolbar
        filter={filter}
        onFilter={(next) => {
          setFilter(next);
          setPage(0);
        }}
        quotaPerUnit={quotaPerUnit}
      />
      <TableContainer>
        <Table size="small" aria-label={translate('settings.prices.title')}>
          <PriceTableHead />
          <TableBody>
            {shown.map(({ entry, row }) => (
              <TableRow key={row.model} hover data-testid={`price-row-${row.model}`}>
                <TableCell component="th" scope="row" sx={{ fontFamily: 'monospace', wordBreak: 'break-all', minWidth: 160 }}>
                  {row.model}
                </TableCell>
                {editing === row.model ? (
                  <EditingCells
                    row={row}
                    busy={form.saving}
                    onSave={(prices) => void save(entry, prices)}
                    onCancel={() => setEditing(null)}
                  />
                ) : (
                  <ShownCells
                    row={row}
                    locked={!writable || form.saving}
                    onEdit={() => setEditing(row.model)}
                    onReset={() => void reset(entry)}
                  />
                )}
              </TableRow>
            ))}
          </TableBody>
        </Table>
      </TableContainer>
      {rows.length === 0 && <EmptyRows filter={filter} />}
      <TablePagination
        component="div"
        count={rows.length}
        page={Math.min(page, Math.max(0, Math.ceil(rows.length / ROWS_PER_PAGE) - 1))}
        onPageChange={(_, next) => setPage(next)}
        rowsPerPage={ROWS_PER_PAGE}
        rowsPerPageOptions={[ROWS_PER_PAGE]}
        labelDisplayedRows={({ from, to, count }) => translate('settings.prices.displayed', { from, to, count })}
      />
    </Box>
  );
}
