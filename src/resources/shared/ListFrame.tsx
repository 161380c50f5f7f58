import { Pagination, SearchInput, useListContext, type ListProps } from 'react-admin';
import { PAGE_SIZE } from '../../dataProvider';
import { ListLoadError } from '../../layout/LoadError';

/** The pager, hidden while the list shows its error state (it would count rows that never arrived). */
function ListPagination() {
  const { error } = useListContext();
  return error ? null : <Pagination rowsPerPageOptions={[PAGE_SIZE]} />;
}

/** Every list pages by the server's fixed page size and searches by keyword. */
export const listDefaults: Partial<ListProps> = {
  perPage: PAGE_SIZE,
  pagination: <ListPagination />,
  filters: [<SearchInput key="q" source="q" alwaysOn />],
  exporter: false,
  // an empty list still shows its toolbar (add button, search) rather than a splash
  empty: false,
  // an unreachable API shows a message and Retry, not a skeleton that never resolves
  error: <ListLoadError />,
  // wide tables scroll inside their card on narrow screens instead of widening the page
  sx: { width: '100%', minWidth: 0, '& .RaList-main': { minWidth: 0, width: '100%' }, '& .RaList-content': { overflowX: 'auto' } },
  sort: { field: 'id', order: 'DESC' },
};
