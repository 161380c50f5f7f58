// A list of names the form offers (models, groups), loaded once when the
// form opens; a failed load says why and leaves the list empty, so the field
// still takes a typed name.
import { useEffect, useRef, useState } from 'react';
import { useNotice } from '../../layout/notice';
import { errorMessage } from '../../dataProvider/errorMessage';

export function useLoadedList(load: () => Promise<string[]>): string[] {
  const notice = useNotice();
  const [names, setNames] = useState<string[]>([]);
  const loadRef = useRef(load);
  useEffect(() => {
    let live = true;
    loadRef.current().then(
      (loaded) => live && setNames(loaded),
      (error) => live && notice(errorMessage(error), 'error'),
    );
    return () => {
      live = false;
    };
  }, [notice]);
  return names;
}
