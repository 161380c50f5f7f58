// Copying a key or a link: a notice when it worked; when the browser refuses,
// a notice to copy by hand and, in a list, the value put into the search box
// (spec: clipboard failure), where the server finds the key's own row.
import { useContext } from 'react';
import { ListContext } from 'react-admin';
import { useNotice } from '../../layout/notice';
import { copyText } from './clipboard';

export function useCopy(): (value: string) => Promise<void> {
  const notice = useNotice();
  const list = useContext(ListContext);
  return async (value: string) => {
    if (await copyText(value)) {
      notice('app.common.copied', 'success');
      return;
    }
    notice('app.errors.copy_manually', 'warning', { value });
    list?.setFilters?.({ ...list.filterValues, q: value }, list.displayedFilters);
  };
}
