// What every list shares: server-side pages of 10/25/50/100 rows, the keyword
// search, full width, a table that becomes cards on a phone, an empty state
// in a sentence, and an error state with Retry when the API cannot be reached.
import { Button, CardContent, Typography, useMediaQuery, type Theme } from '@mui/material';
import type { ReactElement } from 'react';
import {
  Pagination,
  SearchInput,
  useGetResourceLabel,
  useListContext,
  useResourceContext,
  useTranslate,
  type ListProps,
} from 'react-admin';
import { PAGE_SIZES } from '../../../common/listQuery';
import { PAGE_SIZE } from '../../dataProvider';
import { ListLoadError } from '../../layout/LoadError';

/** Rows-per-page choices (the server's `page_size`). */
export const ROWS_PER_PAGE = [...PAGE_SIZES];

/** The pager, hidden while the list shows its error state (it would count rows that never arrived). */
export function ListPagination() {
  const { error } = useListContext();
  return error ? null : <Pagination rowsPerPageOptions={ROWS_PER_PAGE} />;
}

/** Every list pages and sorts on the server and searches by keyword. */
export const listDefaults: Partial<ListProps> = {
  perPage: PAGE_SIZE,
  pagination: <ListPagination />,
  filters: [<SearchInput key="q" source="q" alwaysOn />],
  exporter: false,
  // an empty list still shows its toolbar (add button, search) rather than a splash
  empty: false,
  // an unreachable API shows a message and Retry, not a skeleton that never resolves
  error: <ListLoadError />,
  // a table wider than the screen scrolls inside its card instead of widening the page; the
  // scroll sits on the table's own wrapper, because one on the card would clip the selection
  // toolbar react-admin lays over the filters
  sx: { width: '100%', minWidth: 0, '& .RaList-main': { minWidth: 0, width: '100%' }, '& .RaDatagrid-tableWrapper': { overflowX: 'auto' } },
  sort: { field: 'id', order: 'DESC' },
};

/** Whether the screen is below the small breakpoint (a phone): lists show cards there. */
export function useSmallScreen(): boolean {
  return useMediaQuery((theme: Theme) => theme.breakpoints.down('sm'), { noSsr: true });
}

/** The table on wide screens, the cards on a phone. */
export function ListBody({ table, cards }: { table: ReactElement; cards: ReactElement }) {
  return useSmallScreen() ? cards : table;
}

/** Table cells on one line; the row's cursor says a click opens it. */
export const tableSx = { '& td, & th': { whiteSpace: 'nowrap' }, '& td': { py: 0.5 } } as const;

/**
 * What a list shows with no rows: "No webhooks yet." or, when the search or
 * a facet left nothing, "No webhooks match these filters." with a way back to
 * them all. react-admin's own ("No Webhooks found") capitalises the name mid-sentence.
 */
export function ListEmpty({ defaults = {} }: { defaults?: Record<string, unknown> }) {
  const translate = useTranslate();
  const resource = useResourceContext() ?? '';
  const getResourceLabel = useGetResourceLabel();
  const { filterValues, setFilters } = useListContext() as {
    filterValues?: Record<string, unknown>;
    setFilters: (filters: Record<string, unknown>, displayed: string[]) => void;
  };
  const name = getResourceLabel(resource, 0).toLocaleLowerCase();
  // filters a list always carries (the log's time window) narrow nothing the reader chose
  const filtered = Object.entries(filterValues ?? {}).some(
    ([key, value]) => value !== undefined && value !== '' && defaults[key] !== value,
  );
  return (
    <CardContent data-testid="list-empty">
      <Typography variant="body2" color="text.secondary" component="p">
        {translate(filtered ? 'app.lists.empty_filtered' : 'app.lists.empty', { name })}
      </Typography>
      {filtered && (
        <Button size="small" sx={{ mt: 1 }} onClick={() => setFilters(defaults, [])}>
          {translate('ra.navigation.clear_filters')}
        </Button>
      )}
    </CardContent>
  );
}
