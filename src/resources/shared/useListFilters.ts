// The list's filters as react-admin keeps them (filter name → value, and the filters on display), typed:
// its list context gives them as `any`.
import { useListContext, type ListControllerResult } from 'react-admin';

export function useListFilters(): {
  filterValues: Record<string, unknown>;
  displayedFilters: Record<string, boolean>;
  setFilters: ListControllerResult['setFilters'];
} {
  const list = useListContext();
  return {
    filterValues: list.filterValues as Record<string, unknown>,
    displayedFilters: list.displayedFilters as Record<string, boolean>,
    setFilters: list.setFilters,
  };
}
